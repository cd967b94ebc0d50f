package io.meridian.collective;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Issue 32: a region is sized for the most a call may carry (a live map of capacity 1,000,000: 4,000,003 doubles an
 * allreduce, 244 MiB of file for 4 members), but on tmpfs a page costs memory only once a call touches it, so the
 * region of a map that holds 4000 points costs what its calls of 16,003 doubles touch.
 */
class RegionPagesTest {
    private static final int MEMBERS = 4;
    private static final int DOUBLES = 4 * 1_000_000 + 3;
    private static final int COUNT = 4 * 4000 + 3;

    @Test
    void aRegionSizedForAMillionPointMapHoldsOnlyThePagesItsCallsTouch() throws Exception {
        Path shm = Path.of("/dev/shm");
        Assumptions.assumeTrue(Files.isDirectory(shm) && Files.isWritable(shm), "no /dev/shm (tmpfs) here");
        Path root = Files.createTempDirectory(shm, "meridian-region-pages-");
        ExecutorService pool = Executors.newFixedThreadPool(MEMBERS);
        try {
            Path region = RegionFiles.pathOf(root, "pages", 0);
            CyclicBarrier made = new CyclicBarrier(MEMBERS + 1);
            CyclicBarrier used = new CyclicBarrier(MEMBERS + 1);
            Future<?>[] members = new Future<?>[MEMBERS];
            for (int m = 0; m < MEMBERS; m++) {
                int member = m;
                members[m] = pool.submit(() -> {
                    try (TwoLevelCollectives c = TwoLevelCollectives.singleHost("pages", member, MEMBERS, DOUBLES,
                            DOUBLES, root, Duration.ofSeconds(30))) {
                        made.await(30, TimeUnit.SECONDS);
                        made.await(30, TimeUnit.SECONDS);
                        BlockSync sync = new CollectiveBlockSync(c);
                        double[] values = new double[COUNT];
                        for (int call = 0; call < 20; call++) {
                            sync.allreduceSum(values, COUNT);
                        }
                        used.await(30, TimeUnit.SECONDS);
                        used.await(30, TimeUnit.SECONDS);
                    }
                    return null;
                });
            }
            made.await(30, TimeUnit.SECONDS);
            long[] fresh = sizeAndAllocated(region);
            made.await(30, TimeUnit.SECONDS);
            used.await(60, TimeUnit.SECONDS);
            long[] afterCalls = sizeAndAllocated(region);
            used.await(30, TimeUnit.SECONDS);
            for (Future<?> f : members) {
                f.get(30, TimeUnit.SECONDS);
            }
            System.out.printf("region for %d doubles, %d members: %d bytes of file, %d allocated when made, %d after"
                    + " 20 allreduces of %d doubles%n", DOUBLES, MEMBERS, fresh[0], fresh[1], afterCalls[1], COUNT);
            assertTrue(fresh[0] > 200L << 20, "a region of " + fresh[0] + " bytes");
            assertTrue(fresh[1] <= 64 * 1024, "made: " + fresh[1] + " bytes allocated");
            // each member's input slot and the two result areas: 8 x COUNT bytes each, rounded up to pages
            long touched = (MEMBERS + 2) * (8L * COUNT + 4096) + 64 * 1024;
            assertTrue(afterCalls[1] <= touched, "after the calls: " + afterCalls[1] + " bytes allocated, the calls"
                    + " touch at most " + touched);
        } finally {
            pool.shutdownNow();
            try (Stream<Path> walk = Files.walk(root)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** The file's size and the bytes its blocks hold (what tmpfs charges), from stat(1). */
    private static long[] sizeAndAllocated(Path file) throws IOException, InterruptedException {
        Process stat = new ProcessBuilder("stat", "-c", "%s %b %B", file.toString()).redirectErrorStream(true).start();
        String out = new String(stat.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertTrue(stat.waitFor() == 0, "stat " + file + ": " + out);
        List<Long> v = Stream.of(out.split(" ")).map(Long::parseLong).toList();
        return new long[] {v.get(0), v.get(1) * v.get(2)};
    }
}
