package io.meridian.cli;

import io.meridian.collective.CollectiveBlockSync;
import io.meridian.collective.TwoLevelCollectives;
import io.meridian.config.MeridianConfig;
import io.meridian.live.LiveMap;
import io.meridian.live.LiveMapSettings;
import io.meridian.mds.TriangleSmacof;
import io.meridian.stream.live.LiveMapBolt;
import io.meridian.stream.row.RowStoreReader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The live map of a topology, computed on one host in this JVM: {@code tasks} threads, each a map task with the
 * topology's settings, exchanging through one shared-memory region (the single-host group of the map bolt), reading
 * the rows from a row store directory. Rounds run until the map holds {@code n} points and is idle (refined to
 * convergence, no anneal due): the state whose frame the topology's map marks settled.
 */
final class SingleHostMap {
    private SingleHostMap() {
    }

    static double settledStress(Path rowStores, MeridianConfig config, int tasks, int n, Path work) throws Exception {
        LiveMapSettings settings = LiveMapBolt.settings(config, tasks);
        int doubles = TriangleSmacof.reduceCapacity(settings.capacity());
        String job = "single-host-map-" + ProcessHandle.current().pid() + "-" + System.nanoTime() % 1_000_000;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
        double[] stress = {Double.NaN};
        List<Thread> threads = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int t = 0; t < tasks; t++) {
            int task = t;
            Thread thread = new Thread(() -> {
                try (TwoLevelCollectives c = TwoLevelCollectives.singleHost(job, task, tasks, doubles, doubles,
                        Path.of("/dev/shm"), Duration.ofSeconds(60));
                     LiveMap live = new LiveMap(settings, task, new RowStoreReader(rowStores, settings.blockRows(),
                             settings.capacity()), new CollectiveBlockSync(c), work.resolve("task-" + task), f -> { })) {
                    // idle() is decided on reduced values, so every task leaves after the same round. It was task 0's
                    // last frame saying "settled": one run in five here cycled through idle rounds for 11 minutes
                    // with no such frame (the topology's own map, fed the same rows, showed one)
                    while (!(live.points() == n && live.idle()) && System.nanoTime() < deadline) {
                        live.round();
                    }
                    if (task == 0 && live.points() == n && live.idle()) {
                        stress[0] = live.stress();
                    }
                } catch (RuntimeException e) {
                    failure.compareAndSet(null, e);
                }
            }, "single-host-map-" + task);
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()) + 60_000));
        }
        if (failure.get() != null) {
            throw new AssertionError("the single-host map failed", failure.get());
        }
        if (Double.isNaN(stress[0])) {
            throw new AssertionError("the single-host map of " + n + " points was not idle after 300 s");
        }
        return stress[0];
    }
}
