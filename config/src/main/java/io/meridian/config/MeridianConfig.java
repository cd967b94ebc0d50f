package io.meridian.config;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * Meridian's whole configuration: one YAML file, read into immutable typed sections and validated as a whole. Unknown
 * keys, wrong types and out-of-range values are refused with the file, the dotted key and the reason. Each section is
 * a record with only the keys the code really reads; a later part of Meridian (mds, pwc, transport, collectives) adds
 * its own section record and one line in {@link #read(YamlSection)}.
 *
 * <p>The validated configuration travels to Storm workers as its YAML text ({@link #yaml()}), which every component
 * parses again with {@link #parse(String, String)}: one source of truth, no second serialised form.
 */
public final class MeridianConfig {
    /** Classpath resource of the defaults for a real cluster ({@code ./meridian submit}). */
    public static final String CLUSTER_DEFAULTS = "meridian-cluster.yaml";
    /** Classpath resource of the defaults for {@code ./meridian local}. */
    public static final String LOCAL_DEFAULTS = "meridian-local.yaml";

    /**
     * Where working data goes by default: {@code /tmp/meridian-USER}, one directory per user, owner-only
     * ({@code rwx------}). Whoever creates something below it first checks that it is a real directory of this user's
     * ({@code OwnerOnlyFiles.createWorkingDirectory}): a fixed name in {@code /tmp} could have been made first, or
     * planted as a symbolic link, by anyone. Relative paths of the working-directory keys
     * ({@code ingest.rowStore.directory}, {@code ingest.local.output}, {@code map.snapshotDirectory}) lie below it.
     * The two-host testbed gives each emulated host its own copy of it (deploy/bin/meridian-testbed).
     */
    public static final String DATA_ROOT_PREFIX = "/tmp/meridian-";

    private final String source;
    private final String yaml;
    private final TopologySettings topology;
    private final IngestSettings ingest;
    private final MetricsSettings metrics;
    private final MapSettings map;

    private MeridianConfig(String source, String yaml, TopologySettings topology, IngestSettings ingest,
                           MetricsSettings metrics, MapSettings map) {
        this.source = source;
        this.yaml = yaml;
        this.topology = topology;
        this.ingest = ingest;
        this.metrics = metrics;
        this.map = map;
    }

    public TopologySettings topology() {
        return topology;
    }

    public IngestSettings ingest() {
        return ingest;
    }

    public MetricsSettings metrics() {
        return metrics;
    }

    public MapSettings map() {
        return map;
    }

    /** The per-user data root of this process's user, {@code /tmp/meridian-USER} ({@link #DATA_ROOT_PREFIX}). */
    public static Path dataRoot() {
        String user = System.getProperty("user.name", "user");
        return Path.of(DATA_ROOT_PREFIX + user.replaceAll("[^A-Za-z0-9._-]", "_"));
    }

    /** Where this configuration came from (a file, or the name of a built-in default), for messages. */
    public String source() {
        return source;
    }

    /**
     * An error about the dotted {@code key} of this configuration, in the form of every other configuration error:
     * {@code <source>: key <key>: <reason>}.
     */
    public UsageException error(String key, String reason) {
        return new UsageException(source + ": key " + key + ": " + reason);
    }

    /** The YAML text this configuration was read from. */
    public String yaml() {
        return yaml;
    }

    public static MeridianConfig load(Path file) {
        CommandLine.checkReadableFile("config", file);
        try {
            return parse(Files.readString(file, StandardCharsets.UTF_8), file.toString());
        } catch (IOException e) {
            throw new UncheckedIOException("config: cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    public static MeridianConfig loadResource(String name) {
        try (var in = MeridianConfig.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + name);
            }
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), name);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Parses and validates; {@code source} names the file in messages. */
    public static MeridianConfig parse(String yamlText, String source) {
        Object root;
        try {
            LoaderOptions options = new LoaderOptions();
            options.setAllowDuplicateKeys(false);
            options.setMaxAliasesForCollections(10);
            root = new Yaml(new SafeConstructor(options)).load(yamlText);
        } catch (MarkedYAMLException e) {
            String where = e.getProblemMark() == null ? "" : " at line " + (e.getProblemMark().getLine() + 1)
                    + ", column " + (e.getProblemMark().getColumn() + 1);
            throw new UsageException(source + ": not valid YAML" + where + ": " + e.getProblem());
        } catch (YAMLException e) {
            throw new UsageException(source + ": not valid YAML: " + e.getMessage());
        }
        Map<String, Object> top = new LinkedHashMap<>();
        if (root instanceof Map<?, ?> m) {
            for (Map.Entry<?, ?> e : m.entrySet()) {
                top.put(String.valueOf(e.getKey()), e.getValue());
            }
        } else if (root != null) {
            throw new UsageException(source + ": the top level must be a mapping of sections (topology, ingest, metrics, map)");
        }
        YamlSection section = new YamlSection(source, "", top);
        MeridianConfig config = read(section, source, yamlText);
        section.requireAllKnown();
        return config;
    }

    private static MeridianConfig read(YamlSection root, String source, String yamlText) {
        return new MeridianConfig(source, yamlText,
                TopologySettings.read(root.section("topology")),
                IngestSettings.read(root.section("ingest")),
                MetricsSettings.read(root.section("metrics")),
                MapSettings.read(root.section("map")));
    }

    /** How the topology is submitted and run. */
    public record TopologySettings(String name, int workers, int ackers, int maxSpoutPending, int messageTimeoutSecs,
                                   int workerHeapMb, String transport, Path transportDirectory) {
        /** Tuples between workers of one host through memory-mapped queue files, to other hosts through Netty. */
        public static final String MMAP = "mmap";
        /** Storm's own Netty transport for every link. */
        public static final String NETTY = "netty";

        static TopologySettings read(YamlSection s) {
            String name = s.string("name", "meridian");
            if (!name.matches("[A-Za-z0-9_-]{1,100}")) {
                throw s.error("name", "must be 1-100 letters, digits, '_' or '-', got '" + name + "'");
            }
            String transportDirectory = s.string("transportDirectory", null);
            if (transportDirectory != null && !Path.of(transportDirectory).isAbsolute()) {
                throw s.error("transportDirectory", "must be an absolute path (a tmpfs such as /dev/shm), got '"
                        + transportDirectory + "'");
            }
            return new TopologySettings(name,
                    s.intIn("workers", 2, 1, 64),
                    s.intIn("ackers", 1, 0, 64),
                    s.intIn("maxSpoutPending", 2000, 1, 1_000_000),
                    s.intIn("messageTimeoutSecs", 30, 1, 3600),
                    s.intIn("workerHeapMb", 512, 64, 65536),
                    s.choice("transport", MMAP, MMAP, NETTY),
                    transportDirectory == null ? null : Path.of(transportDirectory).normalize());
        }
    }

    /** The ingestion pipeline: Kafka source, validation and the row stores. */
    public record IngestSettings(String source, Kafka kafka, LocalSource local, int maxPoints, Validation validation,
                                 RowStore rowStore) {
        /**
         * The largest {@code ingest.maxPoints}: its widest row (float32 distances with weights, 8 bytes a distance)
         * must travel as one tuple between workers on one host, whose transport frames at most 8 MiB
         * ({@code Frames.MAX_MESSAGE_BYTES}); 64 KiB are left for the batch's framing: 1,040,384 points.
         */
        public static final int MAX_POINTS_LIMIT = ((8 << 20) - (64 << 10)) / 8;
        /**
         * {@code ingest.maxPoints} unless set: SPIDAL's largest runs (400K) fit, and the capacity costs nothing until
         * rows arrive (a reference per row block in the stores; the live map's arrays grow with its points).
         */
        public static final int DEFAULT_MAX_POINTS = 1_000_000;

        static IngestSettings read(YamlSection s) {
            String source = s.choice("source", "kafka", "kafka", "file");
            Kafka kafka = Kafka.read(s.section("kafka"));
            LocalSource local = LocalSource.read(s.section("local"));
            int maxPoints = s.intIn("maxPoints", DEFAULT_MAX_POINTS, 1, MAX_POINTS_LIMIT);
            Validation validation = Validation.read(s.section("validation"));
            RowStore rowStore = RowStore.read(s.section("rowStore"));
            if (rowStore.blockRows() > maxPoints) {
                throw s.error("rowStore.blockRows", "must not exceed ingest.maxPoints (" + maxPoints + "), got "
                        + rowStore.blockRows());
            }
            if ((long) rowStore.parallelism() * rowStore.blockRows() >= validation.maxIdAhead()) {
                throw s.error("validation.maxIdAhead", "must exceed ingest.rowStore.parallelism x blockRows ("
                        + rowStore.parallelism() * rowStore.blockRows() + "): a row store task owns every "
                        + rowStore.parallelism() + "th block, so its next row is legitimately that far ahead; got "
                        + validation.maxIdAhead());
            }
            if ((long) rowStore.blockRows() * maxPoints > 1 << 30) {
                throw s.error("rowStore.blockRows", "times ingest.maxPoints must be at most 2^30 (a block of the lower"
                        + " triangle, under 2 x blockRows x maxPoints bytes, is mapped at once and must stay under"
                        + " 2 GB), got " + rowStore.blockRows() + " x " + maxPoints);
            }
            if ("file".equals(source) && local.n() > maxPoints) {
                throw s.error("local.n", "must not exceed ingest.maxPoints (" + maxPoints + "), got " + local.n());
            }
            return new IngestSettings(source, kafka, local, maxPoints, validation, rowStore);
        }
    }

    /**
     * The Kafka topics and the spout's consumer settings. The spout stops reading a partition that has
     * {@code maxUncommittedOffsets} rows not committed yet, and commits every {@code commitPeriodMs}: together they
     * cap a partition at about {@code maxUncommittedOffsets / commitPeriodMs} rows per millisecond (with the former
     * 1 s period and 5000 rows, 4 partitions took at most 20,000 rows/s, which was all bench ingest measured). The
     * spout emits the rows it has polled together, up to {@code maxRowsPerTuple} per tuple (Storm's costs are per tuple).
     */
    public record Kafka(String brokers, String topic, String rejectedTopic, String consumerGroup, int partitions,
                        int maxUncommittedOffsets, String firstPoll, int commitPeriodMs, int maxRowsPerTuple) {
        static Kafka read(YamlSection s) {
            String brokers = s.string("brokers", "localhost:9092");
            for (String b : brokers.split(",")) {
                if (!b.trim().matches("[A-Za-z0-9_.\\-\\[\\]:]+:[0-9]{1,5}")) {
                    throw s.error("brokers", "must be a comma-separated list of HOST:PORT, got '" + brokers + "'");
                }
            }
            String topic = topicName(s, "topic", "distance-rows");
            String rejected = topicName(s, "rejectedTopic", "distance-rows-rejected");
            if (topic.equals(rejected)) {
                throw s.error("rejectedTopic", "must differ from ingest.kafka.topic");
            }
            return new Kafka(brokers, topic, rejected, s.string("consumerGroup", "meridian-ingest"),
                    s.intIn("partitions", 4, 1, 1024),
                    s.intIn("maxUncommittedOffsets", 2000, 1, 10_000_000),
                    s.choice("firstPoll", "earliest", "earliest", "latest"),
                    s.intIn("commitPeriodMs", 100, 10, 60_000),
                    s.intIn("maxRowsPerTuple", 64, 1, 4096));
        }

        private static String topicName(YamlSection s, String key, String dflt) {
            String t = s.string(key, dflt);
            if (!t.matches("[A-Za-z0-9._-]{1,249}")) {
                throw s.error(key, "must be a Kafka topic name (letters, digits, '.', '_', '-'), got '" + t + "'");
            }
            return t;
        }
    }

    /**
     * The file source of {@code ./meridian local}: a given 16-bit matrix file, or a generated one of n points, emitted
     * at {@code rate} rows per second (0: as fast as the topology takes them).
     */
    public record LocalSource(Path distances, int n, long seed, int badRows, Path output, int rate) {
        static LocalSource read(YamlSection s) {
            return new LocalSource(s.path("distances", null), s.intIn("n", 1000, 1, 1 << 20),
                    s.longIn("seed", 42, Long.MIN_VALUE, Long.MAX_VALUE), s.intIn("badRows", 0, 0, 10_000),
                    s.workPath("output", "local"), s.intIn("rate", 0, 0, 10_000_000));
        }
    }

    /** Row checks beyond the row format. */
    public record Validation(int parallelism, int maxIdAhead) {
        static Validation read(YamlSection s) {
            return new Validation(s.intIn("parallelism", 1, 1, 256), s.intIn("maxIdAhead", 16384, 1, 1 << 24));
        }
    }

    /** The off-heap row stores, one file per row block. */
    public record RowStore(Path directory, int blockRows, int parallelism) {
        static RowStore read(YamlSection s) {
            return new RowStore(s.workPath("directory", "rowstore"), s.intIn("blockRows", 256, 1, 1 << 20),
                    s.intIn("parallelism", 2, 1, 256));
        }
    }

    /** Where workers publish the topology's own counters for {@code ./meridian status}. */
    /**
     * Where the workers serve their Prometheus metrics (docs/metrics.md): each worker on its slot port +
     * {@code portOffset}, a LocalCluster on {@code localPort} (0: any free port), the live map's leader daemon of a host
     * (a map across hosts) on the lowest slot port of the map's workers there + {@code leaderPortOffset};
     * {@code prometheus} is the Prometheus
     * server {@code ./meridian status} asks (the cluster's, started by {@code ./meridian cluster start}).
     */
    public record MetricsSettings(int portOffset, int leaderPortOffset, int localPort, String prometheus) {
        public static final int DEFAULT_PORT_OFFSET = 1000;
        public static final int DEFAULT_LEADER_PORT_OFFSET = 1100;
        public static final int DEFAULT_LOCAL_PORT = 7699;
        public static final String DEFAULT_PROMETHEUS = "http://127.0.0.1:9090";

        static MetricsSettings read(YamlSection s) {
            String prometheus = s.string("prometheus", DEFAULT_PROMETHEUS);
            if (!prometheus.matches("https?://[^/\\s]+/?")) {
                throw s.error("prometheus", "'" + prometheus + "' is not an http://HOST:PORT address");
            }
            int portOffset = s.intIn("portOffset", DEFAULT_PORT_OFFSET, 1, 60_000);
            int leaderPortOffset = s.intIn("leaderPortOffset", DEFAULT_LEADER_PORT_OFFSET, 1, 60_000);
            if (leaderPortOffset == portOffset) {
                throw s.error("leaderPortOffset", "must differ from metrics.portOffset (" + portOffset + "): a host's"
                        + " leader daemon would take a worker's metrics port");
            }
            return new MetricsSettings(portOffset, leaderPortOffset, s.intIn("localPort", DEFAULT_LOCAL_PORT, 0, 65_535),
                    prometheus.replaceAll("/$", ""));
        }
    }

    /**
     * The live map: DA-MDS and DA-PWC kept current inside the topology ({@code enabled}: whether the topology has the
     * map bolt). {@code tasks} map tasks each own every tasks-th row block; after {@code initialPoints} rows the map is
     * annealed, then each round places the new points and runs up to {@code iterationsPerRound} SMACOF iterations,
     * stopping once the stress changes by less than {@code threshold} (a fraction); it is re-annealed warm when it has
     * grown by {@code reannealGrowth} or its stress has risen by {@code reannealDegradation}. Frames go to
     * {@code snapshotDirectory} (and to the Kafka topic {@code topic} with the Kafka source: a frame's moved points at
     * most every {@code updatesIntervalMs}, 0 for every frame; new points at once). A collective call waits
     * {@code collectiveTimeoutMs} for a missing task before it fails. A map waiting for rows looks for them every
     * {@code idleMs}; once it has nothing left to do (before its first rows, or refined, clustered and annealed) the
     * wait grows to 1/8 of the time it has been idle, at most {@code idleMaxMs}. The round threads run at nice
     * {@code roundsNice} (0: as the worker), below the threads that store rows and place new points. A submission
     * with no frame of its own in {@code snapshotDirectory} starts from the current frame in {@code resumeFrom}
     * (a previous submission's snapshot directory, or this one's) instead of annealing its stored rows anew, if every
     * point of that frame has its row stored.
     */
    public record MapSettings(boolean enabled, int tasks, int initialPoints, int iterationsPerRound, double threshold,
                              double reannealGrowth, double reannealDegradation, int maxClusters, long seed,
                              Path snapshotDirectory, String topic, int updatesIntervalMs, int collectiveTimeoutMs,
                              int idleMs, int idleMaxMs, int roundsNice,
                              Path regionRoot, Path resumeFrom, boolean outliers, double outlierSpongeFactor) {
        static MapSettings read(YamlSection s) {
            boolean enabled = s.bool("enabled", true);
            int tasks = s.intIn("tasks", 2, 1, 256);
            int initialPoints = s.intIn("initialPoints", 200, 4, 1 << 20);
            MapSettings m = new MapSettings(enabled, tasks, initialPoints,
                    s.intIn("iterationsPerRound", 20, 1, 100_000),
                    s.doubleIn("threshold", 1e-4, 1e-12, 0.5),
                    s.doubleIn("reannealGrowth", 2.0, 1.01, 1000),
                    s.doubleIn("reannealDegradation", 1.0, 0.001, 1000),
                    s.intIn("maxClusters", 8, 1, 1000),
                    s.longIn("seed", 1, Long.MIN_VALUE, Long.MAX_VALUE),
                    s.workPath("snapshotDirectory", "map"),
                    s.string("topic", "map-updates"),
                    s.intIn("updatesIntervalMs", 200, 0, 60_000),
                    s.intIn("collectiveTimeoutMs", 30_000, 100, 3_600_000),
                    s.intIn("idleMs", 5, 1, 60_000),
                    s.intIn("idleMaxMs", 50, 1, 60_000),
                    s.intIn("roundsNice", 10, 0, 19),
                    s.path("regionRoot", "/dev/shm"),
                    s.optionalWorkPath("resumeFrom"),
                    // DA-VS after each DA-PWC run flags the points in its sponge (io.meridian.live.MapOutliers); the
                    // factor counts widths of the map's clusters (OutlierSettings.DEFAULT_SPONGE_FACTOR says why 4)
                    s.bool("outliers", true),
                    s.doubleIn("outlierSpongeFactor", 4.0, 0.5, 100));
            if (m.idleMaxMs() < m.idleMs()) {
                throw s.error("idleMaxMs", "must be at least idleMs (" + m.idleMs() + "), got " + m.idleMaxMs());
            }
            if (!m.topic().matches("[A-Za-z0-9._-]{1,249}")) {
                throw s.error("topic", "must be a Kafka topic name (letters, digits, '.', '_', '-'), got '" + m.topic() + "'");
            }
            return m;
        }
    }
}
