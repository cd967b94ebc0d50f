package io.meridian.stream.live;

import io.meridian.live.LiveMapSettings;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.locks.LockSupport;
import org.apache.storm.generated.ExecutorSummary;
import org.apache.storm.generated.NodeInfo;
import org.apache.storm.task.WorkerTopologyContext;
import org.apache.storm.utils.NimbusClient;

/**
 * Where the live map's tasks and the row stores sit, from Storm's assignment, and what follows from it. Every party
 * computes it from the same assignment, so all agree without talking:
 * <ul>
 *   <li>the memory groups of the collectives: one per host with map tasks, the host of map task 0 first, the others
 *   by name; within a group the tasks in task id order. A task's collectives rank (its place in that order) is the
 *   block owner: rank r owns row blocks r, r + P, r + 2P, ...; map task 0 is rank 0, the publishing task;</li>
 *   <li>which row store task stores block b: one on the host of b's owner (so the owner reads the rows in place, from
 *   its own host's files), chosen among that host's row stores as a fields grouping on the block would; and, when
 *   rank 0 sits on another host, a mirror copy on rank 0's host too, because the publishing task reads every new
 *   point's row: to place it on arrival, and to label it from DA-PWC's frozen state (DA-PWC itself runs distributed,
 *   each task over its own rows). The mirror keeps those rows only while task 0 may read them: the row stores drop
 *   its blocks wholly below what task 0 says it still reads ({@link MapStreams#MIRROR_NEEDED}).</li>
 * </ul>
 * With one host, or without a map, it is exactly the fields grouping on the block that the ingestion used before.
 */
public final class MapLayout {
    private final List<String> hosts;
    private final int[] groupOfRank;
    private final int[] taskOfRank;
    private final Map<Integer, Integer> rankOfTask;
    private final int[] members;
    private final List<Integer> storeTasks;
    private final Map<String, List<Integer>> storesOnHost;
    /** The row stores on each group's host, in group order: a block's route costs no map lookup. */
    private final int[][] storesOfGroup;
    private final int[] allStores;
    private final Map<Integer, String> hostOfTask;
    /** Each task's worker slot port, where known (from Nimbus); for the leader daemons' metrics ports. */
    private final Map<Integer, Integer> portOfTask;

    private MapLayout(Map<Integer, String> hostOfTask, Map<Integer, Integer> portOfTask, List<Integer> mapTasks,
                      List<Integer> storeTasks) {
        this.hostOfTask = Map.copyOf(hostOfTask);
        this.portOfTask = Map.copyOf(portOfTask);
        List<Integer> map = mapTasks.stream().sorted().toList();
        this.storeTasks = storeTasks.stream().sorted().toList();
        this.hosts = new ArrayList<>();
        if (!map.isEmpty()) {
            hosts.add(host(map.get(0)));
            TreeSet<String> others = new TreeSet<>();
            for (int t : map) {
                others.add(host(t));
            }
            others.remove(hosts.get(0));
            hosts.addAll(others);
        }
        this.members = new int[hosts.size()];
        this.groupOfRank = new int[map.size()];
        this.taskOfRank = new int[map.size()];
        this.rankOfTask = new HashMap<>();
        int r = 0;
        for (int g = 0; g < hosts.size(); g++) {
            for (int t : map) {
                if (host(t).equals(hosts.get(g))) {
                    groupOfRank[r] = g;
                    taskOfRank[r] = t;
                    rankOfTask.put(t, r);
                    members[g]++;
                    r++;
                }
            }
        }
        this.storesOnHost = new HashMap<>();
        for (int t : this.storeTasks) {
            storesOnHost.computeIfAbsent(host(t), h -> new ArrayList<>()).add(t);
        }
        this.allStores = this.storeTasks.stream().mapToInt(Integer::intValue).toArray();
        this.storesOfGroup = new int[hosts.size()][];
        for (int g = 0; g < hosts.size(); g++) {
            storesOfGroup[g] = storesOn(hosts.get(g)).stream().mapToInt(Integer::intValue).toArray();
        }
    }

    /** The layout of an assignment: each task's host ({@code hostOfTask}; a task not in it counts as on host ""). */
    public static MapLayout of(Map<Integer, String> hostOfTask, List<Integer> mapTasks, List<Integer> storeTasks) {
        return new MapLayout(hostOfTask, Map.of(), mapTasks, storeTasks);
    }

    /** The same, with each task's worker slot port (io.meridian.topology.ScrapeTargets: the leader daemons' ports). */
    public static MapLayout of(Map<Integer, String> hostOfTask, Map<Integer, Integer> portOfTask, List<Integer> mapTasks,
                        List<Integer> storeTasks) {
        return new MapLayout(hostOfTask, portOfTask, mapTasks, storeTasks);
    }

    /** The layout of the worker's current assignment, asking Nimbus for up to 30 s. */
    public static MapLayout of(WorkerTopologyContext context, String mapComponent, String storeComponent) {
        return of(context, mapComponent, storeComponent, NIMBUS_PATIENCE_NANOS);
    }

    private static MapLayout of(WorkerTopologyContext context, String mapComponent, String storeComponent,
                                long patienceNanos) {
        List<Integer> map = context.getComponentTasks(mapComponent);
        // without a map the hosts do not matter: rows go by block alone
        Map<Integer, String> hosts = new HashMap<>();
        Map<Integer, Integer> ports = new HashMap<>();
        if (!map.isEmpty()) {
            slotOfTask(context, hosts, ports, patienceNanos);
        }
        return new MapLayout(hosts, ports, map, context.getComponentTasks(storeComponent));
    }

    /**
     * The layout of a worker's assignment, kept current: recomputed when the worker's view of the assignment changes
     * (a reassigned worker), one reference comparison otherwise (and a comparison of contents when the worker made a
     * new map of the same assignment). With Nimbus down, a change cannot be looked up: the layout it had stays, and it
     * asks again every 10 s. Before, the bolt waited 30 s for Nimbus and then failed, which halted the worker: a
     * SIGKILLed Nimbus took the validation bolt's worker down with it (DaemonFaultsIT).
     */
    public static final class Tracker {
        private static final System.Logger LOG = System.getLogger(Tracker.class.getName());
        private static final long RETRY_NANOS = 10_000_000_000L;
        private final WorkerTopologyContext context;
        private final String mapComponent;
        private final String storeComponent;
        private Map<Integer, NodeInfo> seen;
        private MapLayout layout;
        private long retryAt;

        public Tracker(WorkerTopologyContext context, String mapComponent, String storeComponent) {
            this.context = context;
            this.mapComponent = mapComponent;
            this.storeComponent = storeComponent;
        }

        public MapLayout current() {
            Map<Integer, NodeInfo> assignment = context.getTaskToNodePort() == null ? null
                    : context.getTaskToNodePort().get();
            if (layout != null && assignment == seen) {
                return layout;
            }
            if (layout != null && java.util.Objects.equals(assignment, seen)) {
                seen = assignment;
                return layout;
            }
            if (layout == null) {
                layout = of(context, mapComponent, storeComponent); // no layout to go on with: wait for Nimbus
                seen = assignment;
                return layout;
            }
            long now = System.nanoTime();
            if (now - retryAt < 0) {
                return layout;
            }
            try {
                layout = of(context, mapComponent, storeComponent, 0);
                seen = assignment;
            } catch (IllegalStateException e) {
                retryAt = now + RETRY_NANOS;
                LOG.log(System.Logger.Level.WARNING, "the worker's assignment changed, and " + e.getMessage()
                        + ": rows go by the layout of the last assignment until Nimbus answers (asked again in 10 s)");
            }
            return layout;
        }
    }

    private static final long NIMBUS_PATIENCE_NANOS = 30_000_000_000L;

    /**
     * Each task's host, from Nimbus (the topology's executors with their hosts as the supervisors report them). Not
     * from the worker's own view: it knows only the tasks its worker sends tuples to. Tries for up to
     * {@code patienceNanos} (once when 0), then fails: a guess would route rows to a host whose map task does not read
     * them.
     */
    static void slotOfTask(WorkerTopologyContext context, Map<Integer, String> hosts, Map<Integer, Integer> ports,
                           long patienceNanos) {
        long deadline = System.nanoTime() + patienceNanos;
        while (true) {
            try (NimbusClient nimbus = NimbusClient.getConfiguredClient(context.getConf())) {
                for (ExecutorSummary e : nimbus.getClient().getTopologyInfo(context.getStormId()).get_executors()) {
                    for (int t = e.get_executor_info().get_task_start(); t <= e.get_executor_info().get_task_end(); t++) {
                        hosts.put(t, e.get_host());
                        ports.put(t, e.get_port());
                    }
                }
                return;
            } catch (Exception e) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("cannot learn from Nimbus which hosts run the tasks of "
                            + context.getStormId() + ": " + e, e);
                }
                LockSupport.parkNanos(1_000_000_000L);
            }
        }
    }

    /** The lowest slot port of a map task's worker on {@code host} (its Storm worker listens there), or -1. */
    public int lowestSlotPort(String host) {
        int lowest = -1;
        for (int t : taskOfRank) {
            Integer port = portOfTask.get(t);
            if (port != null && host(t).equals(host) && (lowest < 0 || port < lowest)) {
                lowest = port;
            }
        }
        return lowest;
    }

    private String host(int task) {
        return hostOfTask.getOrDefault(task, "");
    }

    /**
     * The leader daemons' metrics ports, {@code HOST=PORT,...}: on each host the lowest slot port of a map task's
     * worker plus {@code offset} (a slot belongs to one topology at a time, so no two maps' daemons on a host collide);
     * empty when the ports are not known.
     */
    public String leaderMetricsPorts(int offset) {
        StringBuilder out = new StringBuilder();
        for (String host : hosts) {
            int lowest = Integer.MAX_VALUE;
            for (int t : taskOfRank) {
                Integer port = portOfTask.get(t);
                if (port != null && host(t).equals(host)) {
                    lowest = Math.min(lowest, port);
                }
            }
            if (lowest == Integer.MAX_VALUE) {
                return "";
            }
            out.append(out.length() == 0 ? "" : ",").append(host).append('=').append(lowest + offset);
        }
        return out.toString();
    }

    /** The hosts of the map's memory groups, in group order. */
    public List<String> hosts() {
        return List.copyOf(hosts);
    }

    public int groups() {
        return hosts.size();
    }

    /** Map tasks per group, in group order. */
    public int[] members() {
        return members.clone();
    }

    public int ranks() {
        return taskOfRank.length;
    }

    /** The collectives rank of map task {@code task}. */
    public int rank(int task) {
        Integer r = rankOfTask.get(task);
        if (r == null) {
            throw new IllegalArgumentException("task " + task + " is not a map task");
        }
        return r;
    }

    public int group(int rank) {
        return groupOfRank[rank];
    }

    /** The index of {@code rank} within its group. */
    public int member(int rank) {
        int g = groupOfRank[rank];
        int first = 0;
        for (int k = 0; k < g; k++) {
            first += members[k];
        }
        return rank - first;
    }

    public String hostOfRank(int rank) {
        return hosts.get(groupOfRank[rank]);
    }

    /** The rank owning row block {@code block}. */
    public int owner(int block) {
        return LiveMapSettings.ownerOfBlock(block, taskOfRank.length);
    }

    /** The row store tasks on {@code host}, ascending. */
    public List<Integer> storesOn(String host) {
        return storesOnHost.getOrDefault(host, List.of());
    }

    /**
     * The row store that stores block {@code block} first: on its owner's host (any row store when the map is off or
     * that host has none).
     */
    public int primaryStore(int block) {
        if (taskOfRank.length == 0) {
            return pick(allStores, block);
        }
        int[] local = storesOfGroup[groupOfRank[owner(block)]];
        return pick(local.length == 0 ? allStores : local, block);
    }

    /** The row store on rank 0's host that keeps a mirror copy of block {@code block}, or -1 when none is needed. */
    public int mirrorStore(int block) {
        if (taskOfRank.length == 0 || groupOfRank[owner(block)] == 0 || storesOfGroup[0].length == 0) {
            return -1;
        }
        int mirror = pick(storesOfGroup[0], block);
        return mirror == primaryStore(block) ? -1 : mirror;
    }

    /** Whether row store {@code storeTask} stores block {@code block} (as its primary or as its mirror). */
    public boolean stores(int storeTask, int block) {
        return primaryStore(block) == storeTask || mirrorStore(block) == storeTask;
    }

    /**
     * The choice Storm's fields grouping makes for a one-field key, {@code TupleUtils.chooseTaskIndex(List.of(block),
     * n)}: the list's hash is {@code 31 + block}. Without the list: a stored row asks this per tuple (the unit test
     * holds it to Storm's own function).
     */
    private static int pick(int[] tasks, int block) {
        return tasks[Math.floorMod(31 + block, tasks.length)];
    }

    /** One line per group: its host and its tasks with their ranks, for logs and errors. */
    public String describe() {
        StringBuilder s = new StringBuilder();
        for (int g = 0; g < hosts.size(); g++) {
            s.append(g == 0 ? "" : "; ").append("group ").append(g).append(" on ")
                    .append(hosts.get(g).isEmpty() ? "this host" : hosts.get(g)).append(": tasks");
            for (int r = 0; r < taskOfRank.length; r++) {
                if (groupOfRank[r] == g) {
                    s.append(' ').append(taskOfRank[r]).append(" (rank ").append(r).append(')');
                }
            }
        }
        return s.toString();
    }
}
