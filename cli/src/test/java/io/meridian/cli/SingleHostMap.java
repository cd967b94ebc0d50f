package io.meridian.cli;

import io.meridian.collective.CollectiveBlockSync;
import io.meridian.collective.TwoLevelCollectives;
import io.meridian.config.MeridianConfig;
import io.meridian.live.Frame;
import io.meridian.live.LiveMap;
import io.meridian.live.LiveMapSettings;
import io.meridian.mds.TriangleSmacof;
import io.meridian.stream.live.LiveMapBolt;
import io.meridian.stream.row.RowStoreReader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The live map of a topology, computed on one host in this JVM: {@code tasks} threads, each a map task with the
 * topology's settings, exchanging through one shared-memory region (the single-host group of the map bolt), reading
 * the rows from a row store directory. Rounds run until task 0's frame holds {@code n} points and says the map settled.
 */
final class SingleHostMap {
    private SingleHostMap() {
    }

    static double settledStress(Path rowStores, MeridianConfig config, int tasks, int n, Path work) throws Exception {
        LiveMapSettings settings = LiveMapBolt.settings(config, tasks);
        int doubles = TriangleSmacof.reduceCapacity(settings.capacity());
        String job = "single-host-map-" + ProcessHandle.current().pid() + "-" + System.nanoTime() % 1_000_000;
        AtomicReference<Frame> settled = new AtomicReference<>();
        AtomicReference<Frame> lastOfTask0 = new AtomicReference<>();
        // every task decides to stop after the same round: the decision is taken once all have finished it
        CyclicBarrier afterRound = new CyclicBarrier(tasks, () -> {
            Frame f = lastOfTask0.get();
            if (f != null && f.n() == n && f.settled()) {
                settled.set(f);
            }
        });
        List<Thread> threads = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int t = 0; t < tasks; t++) {
            int task = t;
            Thread thread = new Thread(() -> {
                try (TwoLevelCollectives c = TwoLevelCollectives.singleHost(job, task, tasks, doubles, doubles,
                        Path.of("/dev/shm"), Duration.ofSeconds(60));
                     LiveMap live = new LiveMap(settings, task, new RowStoreReader(rowStores, settings.blockRows(),
                             settings.capacity()), new CollectiveBlockSync(c), work.resolve("task-" + task),
                             f -> {
                                 if (task == 0) {
                                     lastOfTask0.set(f);
                                 }
                             })) {
                    while (settled.get() == null) {
                        live.round();
                        afterRound.await();
                    }
                } catch (InterruptedException | BrokenBarrierException e) {
                    failure.compareAndSet(null, e);
                } catch (RuntimeException e) {
                    failure.compareAndSet(null, e);
                    afterRound.reset();
                }
            }, "single-host-map-" + task);
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join(600_000);
        }
        if (failure.get() != null) {
            throw new AssertionError("the single-host map failed", failure.get());
        }
        if (settled.get() == null) {
            throw new AssertionError("the single-host map did not settle");
        }
        return settled.get().stress();
    }
}
