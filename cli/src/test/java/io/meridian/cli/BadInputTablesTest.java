package io.meridian.cli;

import static io.meridian.cli.Cli.Case.badInput;
import static io.meridian.cli.Cli.Case.down;
import static io.meridian.cli.Cli.Case.refused;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.cli.Cli.Case;
import io.meridian.cli.Cli.Outcome;
import io.meridian.config.MeridianConfig;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.synthetic.SyntheticDataset;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad and degenerate input, command by command, one table each (issue 14): every row runs the command as a user would
 * and checks the exit status, that the message is one line naming the option, key or file and the problem (a usage
 * error then the usage line), that no stack trace is printed and that nothing is left behind in the test's directory.
 * Commands that need the cluster are pointed at a loopback port nothing listens on; no cluster is started here.
 */
class BadInputTablesTest {
    static final int N = 20;

    @TempDir
    static Path dir;
    static Path matrix;
    static Path bigEndian;
    static Path file;
    static Path mdsDone;
    static Path pwcDone;
    static Path closedConfig;
    static Path clusterDir;
    static int closed;

    @BeforeAll
    static void fixtures() throws IOException {
        SyntheticDataset blobs = SyntheticDataset.blobs(N, 4, 3, 1.0, 7);
        blobs.write(dir.resolve("data"), ByteOrder.LITTLE_ENDIAN);
        matrix = dir.resolve("data").resolve(SyntheticDataset.DISTANCES_FILE);
        bigEndian = dir.resolve("big.bin");
        blobs.writeMatrix(bigEndian, ByteOrder.BIG_ENDIAN);
        file = Files.writeString(dir.resolve("file.txt"), "not a directory\n");
        mdsDone = Files.createDirectories(dir.resolve("mds-done"));
        Files.writeString(mdsDone.resolve("points.tsv"), "0\t0\t0\t0\n");
        pwcDone = Files.createDirectories(dir.resolve("pwc-done"));
        Files.writeString(pwcDone.resolve("clusters.tsv"), "0\t0\n");
        Files.writeString(pwcDone.resolve("summary.json"), "{}\n");
        closed = Cli.closedPort();
        closedConfig = Files.writeString(dir.resolve("closed.yaml"), String.format("""
                ingest:
                  kafka: {brokers: "127.0.0.1:%d"}
                metrics: {prometheus: "http://127.0.0.1:%d"}
                """, closed, closed));
        // the cluster `status` reads: a storm.yaml naming the closed port for ZooKeeper and Nimbus
        clusterDir = Files.createDirectories(dir.resolve("cluster/conf")).getParent();
        Files.writeString(clusterDir.resolve("conf/storm.yaml"), String.format("""
                storm.zookeeper.servers: ["127.0.0.1"]
                storm.zookeeper.port: %d
                nimbus.seeds: ["127.0.0.1"]
                nimbus.thrift.port: %d
                """, closed, closed));
    }

    private static String m() {
        return matrix.toString();
    }

    private static String nowhere() {
        return dir.resolve("nowhere").toString();
    }

    private static String out() {
        return dir.resolve("out").toString();
    }

    private static final String PROC = "/proc/meridian-no/out";

    /** Runs {@code c} with {@code run} and checks it, and that the test's directory is as it was. */
    private static Outcome checked(Case c, String prefix, String usagePrefix, Function<Case, Outcome> run) {
        TreeSet<String> before = Cli.tree(dir);
        Outcome r = run.apply(c);
        Cli.check(c, r, prefix, usagePrefix);
        TreeSet<String> after = Cli.tree(dir);
        after.removeIf(p -> p.startsWith("logs"));
        before.removeIf(p -> p.startsWith("logs"));
        assertEquals(before, after, "nothing left behind by " + c.name());
        return r;
    }

    private static Outcome inProcess(Case c) {
        return Cli.run(c.argv());
    }

    // ------------------------------------------------------------------------------------------------------- gen

    static Stream<Case> gen() {
        return Stream.of(
                refused("nothing given", "gen", "--says", "option --kind is required"),
                refused("unknown kind", "gen", "--kind", "spiral", "--n", "10", "--out", out(), "--says",
                        "--kind must be one of blobs|uniform|peaks, got 'spiral'"),
                refused("n below 2", "gen", "--kind", "blobs", "--n", "1", "--out", out(), "--says",
                        "--n must be an integer from 2 to 100000, got 1"),
                refused("n above the limit", "gen", "--kind", "blobs", "--n", "100001", "--out", out(), "--says",
                        "--n must be an integer from 2 to 100000, got 100001"),
                refused("n not a number", "gen", "--kind", "blobs", "--n", "ten", "--out", out(), "--says",
                        "--n must be an integer, got 'ten'"),
                refused("n missing", "gen", "--kind", "blobs", "--out", out(), "--says", "option --n is required"),
                refused("dim 0", "gen", "--kind", "uniform", "--n", "10", "--dim", "0", "--out", out(), "--says",
                        "--dim must be an integer from 1 to 10000, got 0"),
                refused("more centers than points", "gen", "--kind", "blobs", "--n", "10", "--centers", "11", "--out",
                        out(), "--says", "--centers must be an integer from 1 to 10, got 11"),
                refused("negative std", "gen", "--kind", "blobs", "--n", "10", "--std", "-1", "--out", out(), "--says",
                        "--std must be >= 0.0", "got '-1'"),
                refused("std NaN", "gen", "--kind", "blobs", "--n", "10", "--std", "NaN", "--out", out(), "--says",
                        "--std must be", "got 'NaN'"),
                refused("seed not a number", "gen", "--kind", "blobs", "--n", "10", "--seed", "x", "--out", out(),
                        "--says", "--seed must be an integer, got 'x'"),
                refused("out missing", "gen", "--kind", "blobs", "--n", "10", "--says", "option --out is required"),
                refused("out empty", "gen", "--kind", "blobs", "--n", "10", "--out", "", "--says",
                        "option --out must not be empty"),
                refused("out a file", "gen", "--kind", "blobs", "--n", "10", "--out", file.toString(), "--says",
                        "--out: " + file + " exists and is not a directory"),
                refused("out cannot be made", "gen", "--kind", "blobs", "--n", "10", "--out", PROC, "--says",
                        "--out: cannot create directory " + PROC + ": no such file or directory"),
                refused("out holds a data set", "gen", "--kind", "blobs", "--n", "10", "--out",
                        dir.resolve("data").toString(), "--says", "--out: " + dir.resolve("data")
                                + " already holds results (distances.bin, labels.tsv, coordinates.tsv, dataset.json):"
                                + " give --force to overwrite them"),
                refused("unknown option", "gen", "--kind", "blobs", "--n", "10", "--out", out(), "--bogus", "--says",
                        "unknown option --bogus for 'gen'"),
                refused("stray argument", "gen", "--kind", "blobs", "--n", "10", "--out", out(), "extra", "--says",
                        "unexpected argument 'extra' for 'gen'"),
                refused("flag with a value", "gen", "--kind", "blobs", "--n", "10", "--out", out(), "--big-endian=yes",
                        "--says", "option --big-endian takes no value"),
                refused("option twice", "gen", "--kind", "blobs", "--n", "10", "--n", "12", "--out", out(), "--says",
                        "option --n is given twice"),
                refused("option without its value", "gen", "--kind", "blobs", "--out", out(), "--n", "--says",
                        "option --n needs a value"));
    }

    @ParameterizedTest(name = "gen: {0}")
    @MethodSource
    void gen(Case c) {
        checked(c, "meridian gen", "usage: ./meridian gen --kind", BadInputTablesTest::inProcess);
    }

    @Test
    void genOfTwoPointsWritesTheirMatrixAndForceWritesItAgain() throws IOException {
        Path two = dir.resolve("gen-two");
        try {
            for (String[] extra : new String[][] {{}, {"--force"}}) {
                Outcome r = Cli.run(concat(new String[] {"gen", "--kind", "blobs", "--n", "2", "--dim", "1", "--centers",
                        "2", "--std", "0", "--out", two.toString()}, extra));
                assertEquals(0, r.status(), r.err());
                assertEquals("", r.err(), "a small N shows no progress");
                ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(two.resolve("distances.bin")))
                        .order(ByteOrder.LITTLE_ENDIAN);
                // two distinct centres: the one distance is the largest, stored as 32767; the diagonal is 0
                assertArrayEquals(new short[] {0, 32767, 32767, 0},
                        new short[] {b.getShort(), b.getShort(), b.getShort(), b.getShort()});
            }
        } finally {
            OwnerOnlyFiles.deleteTree(two);
        }
    }

    // ------------------------------------------------------------------------------------------------------- mds

    static Stream<Case> mds() {
        String n = "" + N;
        return Stream.of(
                refused("nothing given", "mds", "--says", "option --n is required"),
                refused("n 0", "mds", "--distances", m(), "--n", "0", "--out", out(), "--says",
                        "--n must be an integer from 1 to 100000, got 0"),
                refused("matrix missing", "mds", "--distances", nowhere(), "--n", n, "--out", out(), "--says",
                        "--distances: file " + nowhere() + " does not exist"),
                refused("matrix a directory", "mds", "--distances", dir.toString(), "--n", n, "--out", out(), "--says",
                        "--distances: " + dir + " is not a regular file"),
                badInput("matrix of another N", "mds", "--distances", m(), "--n", "" + (N + 1), "--out", out(), "--says",
                        "--distances: file " + m() + " has " + 2 * N * N + " bytes", "2*N*N", "it looks like N = " + N),
                badInput("big-endian matrix read little-endian", "mds", "--distances", bigEndian.toString(), "--n", n,
                        "--out", out(), "--says", "--distances: file " + bigEndian + " is big-endian", "give --big-endian"),
                refused("dim 0", "mds", "--distances", m(), "--n", n, "--out", out(), "--dim", "0", "--says",
                        "--dim must be an integer from 1 to 100, got 0"),
                refused("dim above 100", "mds", "--distances", m(), "--n", n, "--out", out(), "--dim", "101", "--says",
                        "--dim must be an integer from 1 to 100, got 101"),
                refused("alpha 1", "mds", "--distances", m(), "--n", n, "--out", out(), "--alpha", "1", "--says",
                        "--alpha must be > 0.0 and < 1.0, got '1'"),
                refused("tmin-factor 0", "mds", "--distances", m(), "--n", n, "--out", out(), "--tmin-factor", "0",
                        "--says", "--tmin-factor must be > 0.0"),
                refused("threshold 0", "mds", "--distances", m(), "--n", n, "--out", out(), "--threshold", "0",
                        "--says", "--threshold must be > 0.0"),
                refused("cg-iterations 0", "mds", "--distances", m(), "--n", n, "--out", out(), "--cg-iterations", "0",
                        "--says", "--cg-iterations must be an integer from 1 to 10000, got 0"),
                refused("max-temp-loops 0", "mds", "--distances", m(), "--n", n, "--out", out(), "--max-temp-loops", "0",
                        "--says", "--max-temp-loops must be a positive integer, got 0"),
                refused("init file missing", "mds", "--distances", m(), "--n", n, "--out", out(), "--init", nowhere(),
                        "--says", "--init: file " + nowhere() + " does not exist"),
                refused("two kinds of weights", "mds", "--distances", m(), "--n", n, "--out", out(), "--weights", m(),
                        "--point-weights", m(), "--says", "give at most one of --weights and --point-weights"),
                refused("more processes than points", "mds", "--distances", m(), "--n", n, "--out", out(), "--procs",
                        "" + (N + 1), "--says", "--procs must be at most N = " + N),
                refused("two-level and flat", "mds", "--distances", m(), "--n", n, "--out", out(), "--procs", "2",
                        "--flat-mpi", "--groups-per-node", "2", "--says",
                        "give --groups-per-node (two-level) or --flat-mpi, not both"),
                refused("hostfile missing", "mds", "--distances", m(), "--n", n, "--out", out(), "--procs", "2",
                        "--hostfile", nowhere(), "--says", "--hostfile: file " + nowhere() + " does not exist"),
                refused("out holds a map", "mds", "--distances", m(), "--n", n, "--out", mdsDone.toString(), "--says",
                        "--out: " + mdsDone + " already holds results (points.tsv): give --force"),
                refused("out cannot be made", "mds", "--distances", m(), "--n", n, "--out", PROC, "--says",
                        "--out: cannot create directory " + PROC),
                refused("unknown option", "mds", "--distances", m(), "--n", n, "--out", out(), "--bogus", "1", "--says",
                        "unknown option --bogus for 'mds'"));
    }

    @ParameterizedTest(name = "mds: {0}")
    @MethodSource
    void mds(Case c) {
        checked(c, "meridian mds", "usage: ./meridian mds --distances", BadInputTablesTest::inProcess);
    }

    // ------------------------------------------------------------------------------------------------------- pwc

    static Stream<Case> pwc() {
        String n = "" + N;
        return Stream.of(
                refused("nothing given", "pwc", "--says", "option --n is required"),
                refused("one point", "pwc", "--distances", m(), "--n", "1", "--out", out(), "--says",
                        "--n must be an integer from 2 to 1048576, got 1"),
                refused("matrix missing", "pwc", "--distances", nowhere(), "--n", n, "--out", out(), "--says",
                        "--distances: file " + nowhere() + " does not exist"),
                badInput("matrix of another N", "pwc", "--distances", m(), "--n", "" + (N - 1), "--out", out(), "--says",
                        "--distances: file " + m(), "2*N*N"),
                badInput("big-endian matrix read little-endian", "pwc", "--distances", bigEndian.toString(), "--n", n,
                        "--out", out(), "--says", "is big-endian", "give --big-endian"),
                refused("max-clusters 0", "pwc", "--distances", m(), "--n", n, "--out", out(), "--max-clusters", "0",
                        "--says", "--max-clusters must be an integer from 1 to " + N + ", got 0"),
                refused("more clusters than points", "pwc", "--distances", m(), "--n", n, "--out", out(),
                        "--max-clusters", "" + (N + 1), "--says", "--max-clusters must be an integer from 1 to " + N),
                refused("cooling that never cools", "pwc", "--distances", m(), "--n", n, "--out", out(),
                        "--initial-cooling", "1", "--says", "--initial-cooling must be > 0.0 and < 1.0, got '1'"),
                refused("unknown split test", "pwc", "--distances", m(), "--n", n, "--out", out(), "--split-test",
                        "coin", "--says", "--split-test must be one of halved|duplicated, got 'coin'"),
                refused("power iterations below the minimum", "pwc", "--distances", m(), "--n", n, "--out", out(),
                        "--power-iterations", "3", "--says", "--power-iterations must be an integer from 12"),
                refused("out holds clusters", "pwc", "--distances", m(), "--n", n, "--out", pwcDone.toString(),
                        "--says", "--out: " + pwcDone + " already holds results (clusters.tsv, summary.json): give --force"),
                refused("out a file", "pwc", "--distances", m(), "--n", n, "--out", file.toString(), "--says",
                        "--out: " + file + " exists and is not a directory"),
                refused("stray argument", "pwc", "--distances", m(), "--n", n, "--out", out(), "extra", "--says",
                        "unexpected argument 'extra' for 'pwc'"));
    }

    @ParameterizedTest(name = "pwc: {0}")
    @MethodSource
    void pwc(Case c) {
        checked(c, "meridian pwc", "usage: ./meridian pwc --distances", BadInputTablesTest::inProcess);
    }

    @Test
    void pwcWithOneClusterAllowedPutsEveryPointInIt() throws IOException {
        Path one = dir.resolve("pwc-one");
        try {
            Outcome r = Cli.run("pwc", "--distances", m(), "--n", "" + N, "--out", one.toString(), "--max-clusters", "1",
                    "--quiet");
            assertEquals(0, r.status(), r.err());
            List<String> lines = Files.readAllLines(one.resolve("clusters.tsv"));
            assertEquals(N, lines.size());
            for (int i = 0; i < N; i++) {
                assertEquals(i + "\t0", lines.get(i));
            }
        } finally {
            OwnerOnlyFiles.deleteTree(one);
        }
    }

    // ------------------------------------------------------------------------------------------------------ feed

    static Stream<Case> feed() {
        String n = "" + N;
        String brokers = "127.0.0.1:" + closed;
        return Stream.of(
                refused("no source", "feed", "--brokers", brokers, "--says", "give either --distances FILE --n N or --stdin"),
                refused("two sources", "feed", "--stdin", "--distances", m(), "--n", n, "--says",
                        "give either --distances FILE --n N or --stdin"),
                refused("matrix options with stdin", "feed", "--stdin", "--from", "3", "--says",
                        "--n, --from and --big-endian go with --distances, not --stdin"),
                refused("n missing", "feed", "--distances", m(), "--says", "option --n is required"),
                badInput("matrix missing", "feed", "--distances", nowhere(), "--n", n, "--says",
                        "--distances: file " + nowhere() + " does not exist"),
                badInput("matrix of another N", "feed", "--distances", m(), "--n", "" + (N + 1), "--says",
                        "--distances: file " + m(), "2*N*N"),
                badInput("big-endian matrix read little-endian", "feed", "--distances", bigEndian.toString(), "--n", n,
                        "--says", "--distances: file " + bigEndian + " is big-endian", "give --big-endian"),
                badInput("little-endian matrix read big-endian", "feed", "--distances", m(), "--n", n, "--big-endian",
                        "--says", "--distances: file " + m() + " is little-endian", "drop --big-endian"),
                refused("from beyond the matrix", "feed", "--distances", m(), "--n", n, "--from", n, "--says",
                        "--from must be an integer from 0 to " + (N - 1) + ", got " + N),
                refused("brokers not HOST:PORT", "feed", "--stdin", "--brokers", "kafka", "--says",
                        "--brokers must be HOST:PORT[,HOST:PORT...], got 'kafka'"),
                refused("topic not a topic name", "feed", "--stdin", "--topic", "rows/1", "--says",
                        "--topic must be a Kafka topic name", "got 'rows/1'"),
                refused("dead-letter topic not a topic name", "feed", "--stdin", "--rejected-topic", "", "--says",
                        "--rejected-topic must be a Kafka topic name", "got ''"),
                refused("rate 0", "feed", "--stdin", "--rate", "0", "--says", "--rate must be > 0.0"),
                refused("config missing", "feed", "--stdin", "--config", nowhere(), "--says",
                        "config: file " + nowhere() + " does not exist"),
                refused("config not YAML", "feed", "--stdin", "--config", matrix.resolveSibling("labels.tsv").toString(),
                        "--says", "labels.tsv: "),
                down("no broker answers (--brokers)", "feed", "--distances", m(), "--n", n, "--brokers", brokers,
                        "--says", "no Kafka broker answers (" + brokers + " refuses connections; --brokers)",
                        "is the cluster up?"),
                down("no broker answers (config)", "feed", "--stdin", "--config", closedConfig.toString(), "--says",
                        "no Kafka broker answers (" + brokers + " refuses connections; ingest.kafka.brokers)"));
    }

    @ParameterizedTest(name = "feed: {0}")
    @MethodSource
    void feed(Case c) {
        checked(c, "meridian feed", "usage: ./meridian feed --distances", BadInputTablesTest::inProcess);
    }

    // ---------------------------------------------------------------------------------------------------- submit

    static Stream<Case> submit() throws IOException {
        Path fileSource = Files.writeString(dir.resolve("file-source.yaml"), "ingest: {source: file}\n");
        Path unknownKey = Files.writeString(dir.resolve("unknown-key.yaml"), "topology: {nmae: x}\n");
        return Stream.of(
                refused("stray argument", "submit", "now", "--says", "unexpected argument 'now' for 'submit'"),
                refused("unknown option", "submit", "--force", "--says", "unknown option --force for 'submit'"),
                refused("config missing", "submit", "--config", nowhere(), "--says",
                        "config: file " + nowhere() + " does not exist"),
                refused("a file source", "submit", "--config", fileSource.toString(), "--says",
                        "key ingest.source: a cluster topology reads Kafka"),
                refused("an unknown key", "submit", "--config", unknownKey.toString(), "--says",
                        "key topology.nmae: unknown key"),
                down("no broker answers", "submit", "--config", closedConfig.toString(), "--says",
                        "no Kafka broker answers (127.0.0.1:" + closed + " refuses connections; ingest.kafka.brokers in "
                                + closedConfig + ")"));
    }

    @ParameterizedTest(name = "submit: {0}")
    @MethodSource
    void submit(Case c) {
        checked(c, "meridian submit", "usage: ./meridian submit [--config FILE]", BadInputTablesTest::inProcess);
    }

    // ----------------------------------------------------------------------------------------------------- local

    static Stream<Case> local() throws IOException {
        String base = "topology: {name: t}\ningest:\n  source: file\n  maxPoints: 256\n";
        Path rows = dir.resolve("local-rows");
        Path kafka = config("local-kafka", "ingest: {source: kafka}\n");
        Path missing = config("local-missing", base + "  local: {distances: " + nowhere() + ", n: " + N + "}\n");
        Path directory = config("local-dir", base + "  local: {distances: " + dir + ", n: " + N + "}\n");
        Path wrongN = config("local-n", base + "  local: {distances: " + m() + ", n: " + (N + 2) + "}\n");
        Path big = config("local-big", base + "  local: {distances: " + bigEndian + ", n: " + N + "}\n");
        Path shortTriangle = Files.write(dir.resolve("short.tri"), new byte[10]);
        Path triangle = config("local-triangle", base + "  local: {distances: " + shortTriangle + ", n: " + N + "}\n");
        Path outputFile = config("local-out", base + "  local: {distances: " + m() + ", n: " + N + ", output: " + file
                + "}\n");
        Path storesProc = config("local-stores", base + "  local: {distances: " + m() + ", n: " + N + ", output: "
                + rows + "}\n  rowStore: {directory: /proc/meridian-no/rows}\n");
        Path snapshotsFile = config("local-map", base + "  local: {distances: " + m() + ", n: " + N + ", output: "
                + rows + "}\n  rowStore: {directory: " + rows.resolve("stores") + "}\nmap: {snapshotDirectory: " + file
                + "}\n");
        Path tooMany = config("local-too-many", base + "  local: {n: 300}\n");
        return Stream.of(
                refused("unknown option", "local", "--bogus", "--says", "unknown option --bogus for 'local'"),
                refused("stray argument", "local", "run", "--says", "unexpected argument 'run' for 'local'"),
                refused("config missing", "local", "--config", nowhere(), "--says",
                        "config: file " + nowhere() + " does not exist"),
                refused("a Kafka source", "local", "--config", kafka.toString(), "--says",
                        kafka + ": key ingest.source: ./meridian local reads a file"),
                refused("matrix missing", "local", "--config", missing.toString(), "--says",
                        missing + ": key ingest.local.distances: file " + nowhere() + " does not exist"),
                refused("matrix a directory", "local", "--config", directory.toString(), "--says",
                        "key ingest.local.distances: " + dir + " is not a regular file"),
                refused("matrix of another N", "local", "--config", wrongN.toString(), "--says",
                        "key ingest.local.distances: file " + m() + " has", "(N is ingest.local.n)"),
                refused("matrix big-endian", "local", "--config", big.toString(), "--says",
                        "key ingest.local.distances: file " + bigEndian + " is big-endian"),
                refused("triangle of too few points", "local", "--config", triangle.toString(), "--says",
                        "key ingest.local.distances: " + shortTriangle + " has 10 bytes, not the lower triangle of N = "
                                + N, "(N is ingest.local.n)"),
                refused("output a file", "local", "--config", outputFile.toString(), "--says",
                        "key ingest.local.output: cannot create directory " + file + ": a file of that name exists"),
                refused("row stores cannot be made", "local", "--config", storesProc.toString(), "--says",
                        "key ingest.rowStore.directory: cannot create directory /proc/meridian-no"),
                refused("snapshots a file", "local", "--config", snapshotsFile.toString(), "--says",
                        "key map.snapshotDirectory: cannot create directory " + file),
                refused("more points than the universe", "local", "--config", tooMany.toString(), "--says",
                        "key ingest.local.n: must not exceed ingest.maxPoints (256), got 300"));
    }

    private static Path config(String name, String yaml) throws IOException {
        return Files.writeString(dir.resolve(name + ".yaml"), yaml);
    }

    @ParameterizedTest(name = "local: {0}")
    @MethodSource
    void local(Case c) {
        checked(c, "meridian local", "usage: ./meridian local [--config FILE]", BadInputTablesTest::inProcess);
    }

    // ---------------------------------------------------------------------------------------------------- status

    static Stream<Case> status() {
        return Stream.of(
                refused("unknown option", "status", "--watch", "--says", "unknown option --watch for 'status'"),
                refused("flag with a value", "status", "--json=yes", "--says", "option --json takes no value"),
                refused("stray argument", "status", "all", "--says", "unexpected argument 'all' for 'status'"),
                refused("config missing", "status", "--config", nowhere(), "--says",
                        "config: file " + nowhere() + " does not exist"),
                down("every daemon down", "status", "--config", closedConfig.toString(), "--says",
                        "not answering: zookeeper, kafka, nimbus, supervisors"),
                down("every daemon down, as JSON", "status", "--json", "--config", closedConfig.toString(), "--says",
                        "not answering: zookeeper, kafka, nimbus, supervisors"));
    }

    /** In a JVM of its own: the daemons' addresses come from the storm.yaml of {@code MERIDIAN_CLUSTER_DIR}. */
    @ParameterizedTest(name = "status: {0}")
    @MethodSource
    void status(Case c) {
        Outcome r = checked(c, "meridian status", "usage: ./meridian status [--json]",
                k -> Cli.jvm(Map.of("MERIDIAN_CLUSTER_DIR", clusterDir.toString()), dir.resolve("logs/status.log"),
                        k.argv()));
        if (c.status() == 1) {
            String where = "127.0.0.1:" + closed + " refuses connections";
            if (c.args().contains("--json")) {
                assertTrue(r.out().startsWith("{\"daemons\":{\"zookeeper\":{\"up\":false,\"detail\":\"down (" + where),
                        r.out());
                assertTrue(r.out().contains("\"prometheus\":{\"up\":false"), r.out());
            } else {
                for (String daemon : new String[] {"zookeeper", "kafka", "nimbus"}) {
                    assertTrue(r.out().lines().anyMatch(l -> l.matches("  " + daemon + " +down \\(" + where + "\\)")),
                            daemon + " down, naming where: " + r.out());
                }
            }
        }
    }

    // ----------------------------------------------------------------------------------------------- the scripts

    static Stream<Case> leaders() {
        return Stream.of(
                refused("unknown sub-command", "restart", "--says", "unknown sub-command 'restart'"),
                refused("job without its value", "start", "--job", "--says", "option --job needs a value"),
                refused("job followed by another option", "start", "--job", "--members", "2", "--says",
                        "option --job needs a value"),
                refused("members missing", "start", "--job", "j", "--says", "start needs --members K"),
                refused("members 0", "start", "--job", "j", "--members", "0", "--says", "--members '0'"),
                refused("groups per node not a number", "start", "--job", "j", "--members", "2",
                        "--groups-per-node", "two", "--says", "--groups-per-node must be a positive integer, got 'two'"),
                refused("hostfile missing", "start", "--job", "j", "--members", "2", "--hostfile", nowhere(), "--says",
                        "--hostfile " + nowhere() + " is not a readable file"),
                refused("a job id reaching out of the state directory", "stop", "--job", "../x", "--says",
                        "--job: job id '../x'"),
                refused("a job id with a slash", "status", "--job", "a/b", "--says", "--job: job id 'a/b'"),
                refused("unknown option of stop", "stop", "--all", "--says", "unknown option '--all' for stop"));
    }

    @ParameterizedTest(name = "leaders: {0}")
    @MethodSource
    void leaders(Case c) {
        checked(c, "meridian leaders", "usage: ./meridian leaders start", k -> Cli.script("deploy/bin/meridian-leaders",
                Map.of("MERIDIAN_CLASSPATH", Cli.classPath(), "MERIDIAN_LEADERS_STATE",
                        dir.resolve("leaders").toString()), k.argv()));
    }

    @Test
    void leadersStopOfAJobThatDoesNotRunSaysSo() {
        Outcome r = Cli.script("deploy/bin/meridian-leaders", Map.of("MERIDIAN_CLASSPATH",
                Cli.classPath(), "MERIDIAN_LEADERS_STATE", dir.resolve("leaders").toString()),
                "stop", "--job", "nothing-here");
        assertEquals(0, r.status(), r.err());
        assertEquals("meridian leaders: job nothing-here is not running\n", r.out());
    }

    static Stream<Case> cluster() {
        return Stream.of(
                refused("unknown sub-command", "restart", "--says", "unknown sub-command 'restart'"),
                refused("a sub-command with an argument", "start", "now", "--says", "'start' takes no arguments, got 'now'"),
                badInput("unknown role", "MERIDIAN_CLUSTER_ROLES=zookeeper,broker", "status", "--says",
                        "MERIDIAN_CLUSTER_ROLES has 'broker'; the roles are: zookeeper kafka nimbus supervisor"),
                badInput("settings file missing", "MERIDIAN_CLUSTER_CONF=" + nowhere(), "status", "--says",
                        "MERIDIAN_CLUSTER_CONF names " + nowhere() + ", which is not a readable file"),
                badInput("sweeper interval with a unit", "MERIDIAN_SWEEPER_INTERVAL=5s", "start", "--says",
                        "MERIDIAN_SWEEPER_INTERVAL is '5s'; it must be seconds (5, 0.5)"),
                badInput("host timeout below ZooKeeper's least session", "MERIDIAN_HOST_TIMEOUT_SECS=2", "start",
                        "--says", "MERIDIAN_HOST_TIMEOUT_SECS is '2'; give whole seconds, at least 4"));
    }

    /** Arguments and settings only: nothing here starts a daemon (MERIDIAN_CLUSTER_DIR is the test's own). */
    @ParameterizedTest(name = "cluster: {0}")
    @MethodSource
    void cluster(Case c) {
        checked(c, "meridian cluster", "usage: ./meridian cluster start|stop|status|config", k -> {
            Map<String, String> env = new HashMap<>(Map.of("MERIDIAN_CLUSTER_DIR",
                    dir.resolve("cluster-dir").toString()));
            List<String> args = new ArrayList<>(k.args());
            while (!args.isEmpty() && args.get(0).contains("=")) {
                String[] kv = args.remove(0).split("=", 2);
                env.put(kv[0], kv[1]);
            }
            return Cli.script("deploy/bin/meridian-cluster", env, args.toArray(String[]::new));
        });
    }

    @Test
    void clusterStatusWithNothingRunningSaysSoForEachDaemonAndExitsOne() {
        Outcome r = Cli.script("deploy/bin/meridian-cluster", Map.of("MERIDIAN_CLUSTER_DIR",
                dir.resolve("cluster-dir").toString()), "status");
        assertEquals(1, r.status(), r.out() + r.err());
        assertEquals("", r.err());
        assertEquals(List.of("zookeeper   down  not running", "kafka       down  not running",
                "nimbus      down  not running", "supervisor  down  not running", "sweeper     down  not running",
                "targets     down  not running",
                "prometheus  down  not running"), r.out().lines().toList());
    }

    static Stream<Case> storm() {
        String nimbus = "127.0.0.1:" + closed;
        return Stream.of(
                refused("unknown command", "lsit", "--says", "unknown command 'lsit'"),
                refused("list with an argument", "list", "all", "--says", "list takes no arguments (got 'all')"),
                refused("kill without a name", "kill", "--says", "kill needs a topology name"),
                refused("activate two", "activate", "a", "b", "--says", "activate needs exactly one topology name"),
                refused("jar without its main class", "jar", m(), "--says", "jar needs JAR and MAIN"),
                refused("jar that is no file", "jar", nowhere(), "Main", "--says", "jar: " + nowhere() + " is not a file"),
                refused("-c without key=value", "-c", "nimbus.seeds", "list", "--says",
                        "-c wants key=value, not 'nimbus.seeds'"),
                refused("--config missing", "--config", nowhere(), "list", "--says",
                        "--config " + nowhere() + ": no such readable file"),
                refused("unknown option", "--verbose", "list", "--says", "unknown option '--verbose'"),
                down("list, Nimbus down", "list", "--says", "Nimbus does not answer at " + nimbus
                        + " (MERIDIAN_NIMBUS_SEEDS, MERIDIAN_NIMBUS_PORT): is the cluster up?"),
                down("kill, Nimbus down", "kill", "meridian", "--says", "Nimbus does not answer at " + nimbus),
                down("jar, Nimbus down", "jar", m(), "io.meridian.topology.MeridianTopology", "--says",
                        "Nimbus does not answer at " + nimbus));
    }

    /**
     * deploy/bin/storm, with the cluster's Nimbus on the closed port: refused or stopped before the runtime is
     * assembled or a JVM starts (MERIDIAN_CLUSTER_DIR is the test's own and stays empty).
     */
    @ParameterizedTest(name = "storm: {0}")
    @MethodSource
    void storm(Case c) {
        checked(c, "storm", "usage: storm [", k -> Cli.script("deploy/bin/storm", Map.of("MERIDIAN_CLUSTER_DIR",
                dir.resolve("cluster-dir").toString(), "MERIDIAN_NIMBUS_SEEDS", "127.0.0.1", "MERIDIAN_NIMBUS_PORT",
                "" + closed), k.argv()));
    }

    static Stream<Case> testbed() {
        return Stream.of(
                refused("unknown sub-command", "restart", "--says", "unknown sub-command 'restart'"),
                refused("stop with an argument", "stop", "now", "--says", "stop takes no arguments, got 'now'"),
                refused("three hosts", "start", "--hosts", "3", "--says", "--hosts: the testbed has 2 hosts, got '3'"),
                refused("unknown option of start", "start", "--fast", "--says", "unknown option '--fast' for start"),
                refused("exec without a command", "exec", "1", "--says", "exec needs a host and a command"),
                refused("exec on an unknown host", "exec", "7", "hostname", "--says", "unknown testbed host '7'"),
                refused("hostfile with an argument", "hostfile", "x", "--says", "hostfile takes no arguments, got 'x'"));
    }

    /** Argument errors only: each is refused before the script asks for root or touches a namespace. */
    @ParameterizedTest(name = "testbed: {0}")
    @MethodSource
    void testbed(Case c) {
        checked(c, "meridian testbed", "usage: ./meridian testbed start|stop",
                k -> Cli.script("deploy/bin/meridian-testbed", Map.of(), k.argv()));
    }

    static Stream<Case> launcher() {
        return Stream.of(
                refused("unknown command", "frobnicate", "--says", "unknown command 'frobnicate'"),
                refused("build with an argument", "build", "now", "--says", "'build' takes no arguments, got 'now'"),
                refused("classpath with an argument", "classpath", "x", "--says",
                        "'classpath' takes no arguments, got 'x'"));
    }

    /** The launcher's own commands (the others are the tables above): refused before it would build anything. */
    @ParameterizedTest(name = "./meridian: {0}")
    @MethodSource
    void launcher(Case c) {
        checked(c, "meridian", "usage: ./meridian", k -> Cli.script("meridian", Map.of(), k.argv()));
    }

    @Test
    void everyScriptAnswersHelpAfterItsSubCommand() {
        for (String[] s : new String[][] {{"deploy/bin/meridian-cluster", "status"}, {"deploy/bin/meridian-testbed", "stop"},
                {"deploy/bin/meridian-leaders", "stop"}, {"deploy/bin/meridian-leaders", "start"}, {"meridian", "test"},
                {"meridian", "build"}, {"deploy/bin/storm", "kill"}}) {
            for (String flag : new String[] {"--help", "-h"}) {
                Outcome r = Cli.script(s[0], Map.of("MERIDIAN_CLUSTER_DIR", dir.resolve("cluster-dir").toString()),
                        s[1], flag);
                assertEquals(0, r.status(), String.join(" ", s) + " " + flag + ": " + r.err());
                assertTrue(r.out().startsWith("usage: "), String.join(" ", s) + " " + flag + ": " + r.out());
            }
        }
        assertTrue(MeridianConfig.dataRoot().toString().startsWith("/tmp/meridian-"));
    }

    private static String[] concat(String[] a, String[] b) {
        String[] r = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }
}
