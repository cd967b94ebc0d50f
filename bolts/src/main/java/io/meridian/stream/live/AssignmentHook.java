package io.meridian.stream.live;

import java.util.Map;
import org.apache.storm.hooks.IWorkerHook;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.task.WorkerTopologyContext;
import org.apache.storm.task.WorkerUserContext;

/**
 * Keeps the worker's view of the assignment (which host and port each task runs on) for the bolts. A bolt's
 * {@link TopologyContext} does not carry it (Storm builds it without the task-to-node maps), while the context a
 * worker hook receives does, and the hooks start before any executor: so the worker's hook hands it to
 * {@link MapLayout} here. Without the hook (a topology built otherwise) the bolts fall back to their own context,
 * which knows no hosts: the map then runs as on one host.
 */
public final class AssignmentHook implements IWorkerHook {
    private static final long serialVersionUID = 1L;
    private static volatile WorkerTopologyContext worker;

    @Override
    public void start(Map<String, Object> topoConf, WorkerUserContext context) {
        worker = context;
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
