package io.meridian.stream.live;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.storm.Config;
import org.apache.storm.hooks.IWorkerHook;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.task.WorkerTopologyContext;
import org.apache.storm.task.WorkerUserContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the worker's view of the assignment (which host and port each task runs on) for the bolts. A bolt's
 * {@link TopologyContext} does not carry it (Storm builds it without the task-to-node maps), while the context a
 * worker hook receives does, and the hooks start before any executor: so the worker's hook hands it to
 * {@link MapLayout} here. Without the hook (a topology built otherwise) the bolts fall back to their own context,
 * which knows no hosts: the map then runs as on one host. On a cluster it also ends a worker its Supervisor has
 * orphaned ({@link #watchForOrphaning}).
 */
public final class AssignmentHook implements IWorkerHook {
    private static final long serialVersionUID = 1L;
    /** The exit status of a worker that found itself orphaned. */
    static final int ORPHANED_EXIT = 21;
    private static final Logger LOG = LoggerFactory.getLogger(AssignmentHook.class);
    private static volatile WorkerTopologyContext worker;

    @Override
    public void start(Map<String, Object> topoConf, WorkerUserContext context) {
        worker = context;
        if ("distributed".equals(topoConf.get(Config.STORM_CLUSTER_MODE))) {
            watchForOrphaning(Path.of(System.getProperty("user.dir")).toAbsolutePath());
        }
    }

    /**
     * A worker runs in the directory its Supervisor made for it. A Supervisor that gives up on a worker still starting
     * (its assignment changed before the worker wrote its pid: seen when a host came back while Nimbus was moving its
     * executors, on a loaded machine) takes it for dead, removes that directory and starts another worker in the slot;
     * the first one runs on, holding the slot's ports, so every replacement dies binding them
     * (BindException, worker after worker) while the orphan's tasks keep running beside theirs. A worker whose
     * directory is gone exits.
     */
    private static void watchForOrphaning(Path workerDir) {
        Thread t = new Thread(() -> {
            while (true) {
                LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(2));
                if (!Files.isDirectory(workerDir)) {
                    LOG.error("this worker's directory {} is gone: its Supervisor no longer runs it (it gave up on it"
                            + " while it started) and has started another in its slot; exiting to free the slot's ports",
                            workerDir);
                    System.exit(ORPHANED_EXIT);
                }
            }
        }, "meridian-orphan-watch");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void shutdown() {
    }

    /** The worker's context with the assignment, or {@code fallback} when no hook ran in this JVM. */
    public static WorkerTopologyContext context(TopologyContext fallback) {
        WorkerTopologyContext w = worker;
        return w != null && w.getStormId().equals(fallback.getStormId()) ? w : fallback;
    }
}
