package io.meridian.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/**
 * {@code ./meridian bench} with bad arguments (issue 14): refused before any benchmark starts work (no cluster, no
 * data set, no process), in one line naming the option and the problem, then the benchmark's usage line, exit 2, no
 * stack trace. {@code --help} prints the usage.
 */
class BenchBadInputTest {
    record Case(String name, List<String> args, String says) {
        @Override
        public String toString() {
            return name;
        }
    }

    record Outcome(int status, String out, String err) {
    }

    static Outcome bench(String... args) throws Exception {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int status = Bench.run(args);
            return new Outcome(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("unknown benchmark", List.of("warp"), "meridian bench: unknown benchmark 'warp' (known: "),
                new Case("mds: N below its minimum", List.of("mds", "--n", "5"),
                        "meridian bench mds: --n must be an integer from 10 to 50000, got 5"),
                new Case("mds: unknown option", List.of("mds", "--procs", "2"),
                        "meridian bench mds: unknown option --procs for 'bench mds'"),
                new Case("pwc: unknown kind", List.of("pwc", "--kind", "spiral"),
                        "meridian bench pwc: --kind must be one of uniform|blobs, got 'spiral'"),
                new Case("collectives: rank counts not numbers", List.of("collectives", "--procs", "2,x"),
                        "meridian bench collectives: --procs must be a comma-separated list of rank counts from 1 to"
                                + " 4096, got '2,x'"),
                new Case("collectives: three hosts", List.of("collectives", "--hosts", "3"),
                        "meridian bench collectives: --hosts must be an integer from 1 to 2, got 3"),
                new Case("transport: unknown case", List.of("transport", "--cases", "warp"),
                        "meridian bench transport: --cases takes a comma-separated list of"),
                new Case("transport: both names of the repeat count", List.of("transport", "--repeat", "2", "--repeats", "3"),
                        "meridian bench transport: --repeat is the old name of --repeats: give one of them"),
                new Case("transport: repeats out of range", List.of("transport", "--repeats", "0"),
                        "meridian bench transport: --repeats"),
                new Case("stream: N below its minimum", List.of("stream", "--n", "10"),
                        "meridian bench stream: --n must be an integer from 300 to 8192, got 10"),
                new Case("ingest: unknown transport", List.of("ingest", "--transport", "pigeon"),
                        "meridian bench ingest: --transport must be one of mmap|netty, got 'pigeon'"),
                new Case("live-rounds: unknown data", List.of("live-rounds", "--data", "spiral"),
                        "meridian bench live-rounds: --data must be one of blobs|uniform, got 'spiral'"),
                new Case("live-kernel: too few rounds", List.of("live-kernel", "--rounds", "1"),
                        "meridian bench live-kernel: --rounds must be an integer from 3 to 1000, got 1"),
                new Case("live-kernel: stray argument", List.of("live-kernel", "now"),
                        "meridian bench live-kernel: unexpected argument 'now' for 'bench live-kernel'"));
    }

    @ParameterizedTest(name = "bench: {0}")
    @MethodSource("cases")
    void refusedInOneLineThenTheUsageLine(Case c) throws Exception {
        Outcome r = bench(c.args().toArray(String[]::new));
        String what = c.name() + ": " + r.err();
        assertEquals(2, r.status(), what);
        assertEquals("", r.out(), what);
        List<String> lines = r.err().strip().lines().toList();
        assertEquals(2, lines.size(), "one line, then the usage line: " + what);
        assertTrue(lines.get(0).startsWith(c.says()), what);
        assertTrue(lines.get(1).startsWith("usage: ./meridian bench "), what);
        assertFalse(r.err().contains("Exception") || r.err().contains("\tat "), what);
    }

    @Test
    void everyBenchmarkAnswersHelp() throws Exception {
        for (String name : List.of("ingest", "live-kernel", "live-rounds", "collectives", "mds", "pwc", "transport",
                "stream")) {
            for (String flag : List.of("--help", "-h")) {
                Outcome r = bench(name, "--n", "1", flag);
                assertEquals(0, r.status(), name + " " + flag + ": " + r.err());
                assertTrue(r.out().startsWith("./meridian bench " + name + ": "), r.out());
            }
        }
        Outcome none = bench();
        assertEquals(2, none.status());
        assertTrue(none.err().startsWith("usage: ./meridian bench NAME [options]; benchmarks:"), none.err());
        Outcome help = bench("help");
        assertEquals(0, help.status());
        assertTrue(help.out().contains("  stream: "), help.out());
    }
}
