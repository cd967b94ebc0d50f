package io.meridian.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class MeridianConfigTest {
    private static String refused(String yaml) {
        return assertThrows(UsageException.class, () -> MeridianConfig.parse(yaml, "config.yaml")).getMessage();
    }

    @Test
    void emptyFileGivesTheDefaults() {
        MeridianConfig c = MeridianConfig.parse("", "config.yaml");
        assertEquals("meridian", c.topology().name());
        assertEquals("distance-rows", c.ingest().kafka().topic());
        assertEquals("distance-rows-rejected", c.ingest().kafka().rejectedTopic());
        assertEquals(256, c.ingest().rowStore().blockRows());
        // working data under the per-user data root by default, not a fixed world-readable /tmp/meridian
        assertEquals(Path.of("/tmp/meridian-" + System.getProperty("user.name").replaceAll("[^A-Za-z0-9._-]", "_"))
                .resolve("rowstore"), c.ingest().rowStore().directory());
        assertEquals(MeridianConfig.dataRoot().resolve("map"), c.map().snapshotDirectory());
        assertEquals(MeridianConfig.dataRoot().resolve("local"), c.ingest().local().output());
        assertEquals(null, c.map().resumeFrom()); // a new submission starts from its rows unless told otherwise
    }

    @Test
    void absoluteWorkingDirectoriesStayAsGiven() {
        MeridianConfig c = MeridianConfig.parse("ingest: {rowStore: {directory: /data/m/../rows}}\n"
                + "map: {snapshotDirectory: /srv/map}\n", "config.yaml");
        assertEquals(Path.of("/data/rows"), c.ingest().rowStore().directory());
        assertEquals(Path.of("/srv/map"), c.map().snapshotDirectory());
        assertEquals(Path.of("/srv/old-map"), MeridianConfig.parse("map: {resumeFrom: /srv/x/../old-map}\n",
                "config.yaml").map().resumeFrom());
        assertEquals(MeridianConfig.dataRoot().resolve("map"), MeridianConfig.parse("map: {resumeFrom: map}\n",
                "config.yaml").map().resumeFrom());
        assertEquals("config.yaml: key map.resumeFrom: must not be empty", refused("map: {resumeFrom: ' '}\n"));
        assertEquals("config.yaml: key ingest.local.distances: bad", c.error("ingest.local.distances", "bad").getMessage());
    }

    @Test
    void theTransportDirectoryIsAnAbsolutePathOrTheTransportsDefault() {
        assertEquals(null, MeridianConfig.parse("", "config.yaml").topology().transportDirectory());
        assertEquals(Path.of("/mnt/shm/q"), MeridianConfig.parse("topology: {transportDirectory: /mnt/shm/x/../q}\n",
                "config.yaml").topology().transportDirectory());
        UsageException e = assertThrows(UsageException.class,
                () -> MeridianConfig.parse("topology: {transportDirectory: shm}\n", "config.yaml"));
        assertTrue(e.getMessage().contains("topology.transportDirectory") && e.getMessage().contains("absolute"),
                e.getMessage());
    }

    @Test
    void bundledDefaultsAreValid() {
        assertEquals("kafka", MeridianConfig.loadResource(MeridianConfig.CLUSTER_DEFAULTS).ingest().source());
        MeridianConfig local = MeridianConfig.loadResource(MeridianConfig.LOCAL_DEFAULTS);
        assertEquals("file", local.ingest().source());
        assertEquals(2000, local.ingest().local().n());
    }

    @Test
    void readsNestedKeysAndResolvesRelativePaths() {
        MeridianConfig c = MeridianConfig.parse("""
                ingest:
                  maxPoints: 5000
                  rowStore: {directory: store, blockRows: 100, parallelism: 3}
                  kafka: {brokers: "h1:9092,h2:9093", partitions: 8}
                topology: {workers: 3}
                """, "config.yaml");
        assertEquals(5000, c.ingest().maxPoints());
        assertEquals(3, c.ingest().rowStore().parallelism());
        // a relative working directory lies under the data root (a worker's working directory is Storm's)
        assertEquals(MeridianConfig.dataRoot().resolve("store"), c.ingest().rowStore().directory());
        assertEquals("h1:9092,h2:9093", c.ingest().kafka().brokers());
        assertEquals(3, c.topology().workers());
        assertTrue(c.yaml().contains("maxPoints: 5000"));
    }

    @Test
    void readsTheLiveMapSectionAndChecksItsTopic() {
        MeridianConfig c = MeridianConfig.parse("map: {tasks: 4, initialPoints: 300, snapshotDirectory: snaps}\n",
                "config.yaml");
        assertTrue(c.map().enabled());
        assertEquals(4, c.map().tasks());
        assertEquals(300, c.map().initialPoints());
        assertEquals(MeridianConfig.dataRoot().resolve("snaps"), c.map().snapshotDirectory());
        assertEquals("map-updates", c.map().topic());
        assertEquals("config.yaml: key map.topic: must be a Kafka topic name (letters, digits, '.', '_', '-'), got 'a b'",
                refused("map: {topic: a b}\n"));
        assertTrue(refused("map: {tasks: 0}\n").startsWith("config.yaml: key map.tasks:"));
    }

    @Test
    void readsAndChecksTheLiveMapsOutlierSettings() {
        MeridianConfig.MapSettings defaults = MeridianConfig.parse("", "config.yaml").map();
        assertTrue(defaults.outliers(), "outliers are flagged unless switched off");
        assertEquals(4.0, defaults.outlierSpongeFactor());
        MeridianConfig.MapSettings set = MeridianConfig.parse("map: {outliers: false, outlierSpongeFactor: 3}\n",
                "config.yaml").map();
        assertEquals(false, set.outliers());
        assertEquals(3.0, set.outlierSpongeFactor());
        assertEquals("config.yaml: key map.outlierSpongeFactor: must be a number from 0.5 to 100.0, got 0",
                refused("map: {outlierSpongeFactor: 0}\n"));
        assertTrue(refused("map: {outliers: maybe}\n").startsWith("config.yaml: key map.outliers:"));
        for (String bundled : new String[] {MeridianConfig.CLUSTER_DEFAULTS, MeridianConfig.LOCAL_DEFAULTS}) {
            MeridianConfig.MapSettings m = MeridianConfig.loadResource(bundled).map();
            assertTrue(m.outliers(), bundled);
            assertEquals(4.0, m.outlierSpongeFactor(), bundled);
        }
    }

    @Test
    void theFileSourceSizeIsCheckedOnlyForTheFileSource() {
        // a Kafka topology with a small universe is valid whatever ingest.local.n says (it reads no file)
        assertEquals(500, MeridianConfig.parse("ingest: {maxPoints: 500}\n", "config.yaml").ingest().maxPoints());
        assertTrue(refused("ingest: {source: file, maxPoints: 500, local: {n: 600}}\n")
                .startsWith("config.yaml: key ingest.local.n: must not exceed ingest.maxPoints (500)"));
    }

    @Test
    void refusesUnknownKeysWithTheirFullName() {
        assertEquals("config.yaml: key ingest.rowStore.blockrows: unknown key (known here: directory, blockRows, parallelism)",
                refused("ingest:\n  rowStore:\n    blockrows: 10\n"));
        assertTrue(refused("mds: {alpha: 0.9}\n").startsWith("config.yaml: key mds: unknown key"));
    }

    @Test
    void refusesWrongTypes() {
        assertEquals("config.yaml: key ingest.rowStore.directory: must be a string, got an integer '42'",
                refused("ingest:\n  rowStore:\n    directory: 42\n"));
        assertEquals("config.yaml: key topology.workers: must be an integer, got a string 'two'",
                refused("topology:\n  workers: two\n"));
        assertEquals("config.yaml: key ingest.kafka: must be a mapping of keys, got a list '[a, b]'",
                refused("ingest:\n  kafka: [a, b]\n"));
    }

    @Test
    void refusesOutOfRangeAndInconsistentValues() {
        assertEquals("config.yaml: key topology.workers: must be from 1 to 64, got 0", refused("topology: {workers: 0}\n"));
        assertEquals("config.yaml: key ingest.rowStore.blockRows: must not exceed ingest.maxPoints (100), got 256",
                refused("ingest: {maxPoints: 100}\n"));
        assertTrue(refused("ingest: {kafka: {brokers: 'localhost'}}\n")
                .startsWith("config.yaml: key ingest.kafka.brokers: must be a comma-separated list of HOST:PORT"));
        assertTrue(refused("ingest: {source: stdin}\n").contains("must be one of kafka|file, got 'stdin'"));
        assertTrue(refused("ingest: {kafka: {topic: x, rejectedTopic: x}}\n").contains("must differ"));
        assertEquals("config.yaml: key map.idleMaxMs: must be at least idleMs (20), got 10",
                refused("map: {idleMs: 20, idleMaxMs: 10}\n"));
    }

    @Test
    void refusesBrokenYamlWithTheLine() {
        assertTrue(refused("topology:\n  workers: [1\n").startsWith("config.yaml: not valid YAML at line"));
        assertTrue(refused("topology: {workers: 1}\ntopology: {workers: 2}\n").startsWith("config.yaml: not valid YAML"));
    }
}
