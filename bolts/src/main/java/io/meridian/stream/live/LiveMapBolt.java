package io.meridian.stream.live;

import com.codahale.metrics.Counter;
import io.meridian.collective.CollectiveBlockSync;
import io.meridian.collective.CollectiveException;
import io.meridian.collective.HostProbe;
import io.meridian.collective.RegionMismatchException;
import io.meridian.collective.TwoLevelCollectives;
import io.meridian.config.MeridianConfig;
import io.meridian.live.ArrivalPlacer;
import io.meridian.live.Arrivals;
import io.meridian.live.BackgroundPriority;
import io.meridian.live.Frame;
import io.meridian.live.FrameListener;
import io.meridian.live.LiveMap;
import io.meridian.live.LiveMapSettings;
import io.meridian.live.OutlierSettings;
import io.meridian.live.Snapshot;
import io.meridian.live.SnapshotWriter;
import io.meridian.mds.MdsOptions;
import io.meridian.mds.TriangleSmacof;
import io.meridian.shm.OwnerOnlyFiles;
import io.meridian.shm.ShmFullException;
import io.meridian.shm.TmpfsSpace;
import io.meridian.stream.ingest.IngestStreams;
import io.meridian.stream.metrics.TimeHistogram;
import io.meridian.stream.row.RowStoreReader;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntToLongFunction;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.tuple.Values;
import org.apache.storm.utils.TupleUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A task of the live map ({@link LiveMap}): it owns every {@code tasks}-th row block and runs the map's rounds on a
 * thread of its own, so storing rows never waits for a round. The tasks exchange through the two-level collectives
 * (one shared memory region on the host; task 0 leads it), never through tuples: a cycle of Storm streams deadlocks
 * under backpressure (STORM-3637). Rows are read in place from the row store files; the only tuples the map receives
 * are the row store's notifications, which task 0 uses to measure placement latency (stored -> in a frame) and which
 * are acked at once. Task 0 publishes the frames: a snapshot directory, the {@code map.topic} Kafka topic (with the
 * Kafka source), metrics and a log line. Task 0 also shows each new point on the topic as soon as its row is stored,
 * placed against the last frame on a thread of its own ({@link ArrivalPlacer}), ahead of the rounds.
 */
public final class LiveMapBolt extends BaseRichBolt {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(LiveMapBolt.class);

    private transient OutputCollector collector;
    private transient Thread rounds;
    private transient volatile boolean stopping;
    private transient volatile TwoLevelCollectives joined;
    /** Each id's publish and stored times, and whether its point was shown (its latency is recorded once). */
    private transient PointTimes times;
    /** The highest id stored so far (-1: none). */
    private transient volatile int highestStored;
    private transient volatile Thread arrivals;
    /** The round thread is waiting between rounds (not in a collective, where waking it early only costs a poll). */
    private transient volatile boolean roundsIdle;
    /** The map of the current generation (the arrival placement takes its frozen clustering). */
    private transient volatile LiveMap current;
    /**
     * Task 0 across hosts: the row stores on its host, which keep mirror copies of the other hosts' rows for it
     * (empty otherwise), and the lowest id whose copy it may still read (rounds' thread writes both).
     */
    private transient volatile int[] mirrorStores;
    private transient volatile int mirrorNeededFrom;
    /** What the row stores were last told (executor thread). */
    private transient int mirrorNeededSent;
    private transient int blockRows;
    /** Task 0: the snapshots (a map that resumes starts from the current one: rows below it are in it). */
    private transient volatile SnapshotWriter snapshotWriter;
    private transient Counter arrivalsPlaced;
    /**
     * A row stored longer ago than this when the arrival placement gets to it is left to the rounds: rows pile up so
     * only while the map is starting (no frame yet) or far behind, and placing such a backlog costs a core (0.23 ms a
     * row at N = 4000) for points the rounds show soon anyway. Only where they do: the limit is at least the time the
     * rounds take between frames ({@link #arrivalNotBefore}).
     */
    private static final long ARRIVAL_MAX_AGE_MS = 1000;
    /** The time between the rounds' last two frames, in ms (0: fewer than two yet). */
    private transient volatile long framePeriodMs;
    private static final long ARRIVAL_IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long FRAME_LOG_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** The least a DA-PWC exchange waits for a task ({@link #clusterTimeout}). */
    private static final Duration CLUSTER_TIMEOUT_FLOOR = Duration.ofMinutes(10);
    private transient volatile Frame last;
    /**
     * Why the rounds stopped, if they stopped on an error no generation recovers from: {@link #execute} throws it, so
     * Storm reports it and restarts the worker, and the map resumes from its last frame, instead of a map that stays
     * still with nothing but a log line to say so (TwoHostFaultsIT waited 400 s on one).
     */
    private transient volatile RuntimeException roundsStopped;
    private transient long lastFrameLogged;
    private transient TimeHistogram roundTime;
    private transient TimeHistogram computeTime;
    private transient TimeHistogram collectiveTime;
    private transient TimeHistogram placementTime;
    private transient TimeHistogram publishedToFrameTime;
    private transient TimeHistogram placeableTime;
    private transient TimeHistogram notifiedTime;
    /** The latest stored time of the ids placed so far (this task's view since it started). */
    private transient long placeableAtMillis;
    private transient TimeHistogram sharedMemoryTime;
    private transient TimeHistogram waitTime;
    private transient TimeHistogram interHostTime;
    private transient TwoLevelCollectives timed;
    private transient long lastCall;
    private transient long lastWait;
    private transient long lastInterHost;
    private transient Counter placed;
    private transient Counter roundCount;
    private transient Counter failures;
    private transient Counter shmFailures;
    /** The round thread's: how long to wait before re-forming after the regions' tmpfs was full. */
    private transient ShmBackoff shmBackoff;
    private transient int taskId;
    private transient MapLayout.Tracker layouts;
    private transient volatile LeaderLauncher leaders;
    private transient volatile String leadersJob;
    private transient int leaderPortOffset;
    /** Task 0: a generation started after a failure whose first frame is still to come (-1: none). */
    private transient volatile long resumingGeneration;
    private transient Path snapshots;
    private transient String job;

    @Override
    public void prepare(Map<String, Object> topoConf, TopologyContext context, OutputCollector collector) {
        this.collector = collector;
        MeridianConfig config = MeridianConfig.parse((String) topoConf.get(IngestStreams.CONFIG_KEY), "topology config");
        MeridianConfig.MapSettings map = config.map();
        var ingest = config.ingest();
        int tasks = context.getComponentTasks(context.getThisComponentId()).size();
        int task = context.getThisTaskIndex();
        this.taskId = context.getThisTaskId();
        this.lastFrameLogged = System.nanoTime() - FRAME_LOG_NANOS; // the first frame is logged
        this.layouts = new MapLayout.Tracker(AssignmentHook.context(context), context.getThisComponentId(),
                IngestStreams.STORE);
        LiveMapSettings settings = settings(config, tasks);
        this.times = new PointTimes(ingest.maxPoints());
        this.highestStored = -1;
        this.mirrorStores = new int[0];
        this.blockRows = settings.blockRows();
        registerMetrics(context);
        this.leaderPortOffset = config.metrics().leaderPortOffset();
        String job = jobId(context.getStormId());
        Path snapshots = map.snapshotDirectory();
        this.job = job;
        this.snapshots = snapshots;
        this.resumingGeneration = -1;
        Path work = snapshots.resolve(".work-" + task);
        boolean kafka = "kafka".equals(ingest.source());
        String brokers = ingest.kafka().brokers();
        Path rowStores = ingest.rowStore().directory();
        this.rounds = new Thread(() -> run(settings, task, job, map, rowStores, snapshots, work,
                kafka ? brokers : null), "meridian-live-map-" + task);
        rounds.setDaemon(true);
        rounds.start();
        // a killed topology's workers are stopped without cleanup(): stop the rounds so that task 0 closes and
        // removes the region (or stops the leader daemons, which remove theirs), leaving nothing in /dev/shm
        Runtime.getRuntime().addShutdownHook(new Thread(this::stopRounds, "meridian-live-map-stop-" + task));
    }

    /** The settings of a map of {@code tasks} tasks under {@code config}, as every map task builds them. */
    public static LiveMapSettings settings(MeridianConfig config, int tasks) {
        MeridianConfig.MapSettings map = config.map();
        var ingest = config.ingest();
        return new LiveMapSettings(ingest.maxPoints(), ingest.rowStore().blockRows(), tasks,
                Math.min(map.initialPoints(), ingest.maxPoints()), map.iterationsPerRound(), map.threshold(),
                map.reannealGrowth(), map.reannealDegradation(), MdsOptions.DEFAULT_ALPHA, MdsOptions.DEFAULT_TMIN_FACTOR,
                map.maxClusters(), map.seed());
    }

    /** A region name from the topology id: sanitized, at most 64 characters, unique per submission. */
    public static String jobId(String stormId) {
        String id = OwnerOnlyFiles.sanitize(stormId);
        if (id.startsWith(".")) {
            id = "_" + id.substring(1);
        }
        String suffix = "-map";
        return (id.length() + suffix.length() > 64 ? id.substring(id.length() - (64 - suffix.length())) : id) + suffix;
    }

    /**
     * The round thread: joins the map's group, resumes from the last frame of this topology if there is one, and runs
     * rounds until the bolt stops. The group follows Storm's assignment ({@link MapLayout}): with every map task on
     * one host, task 0 creates the group's region and leads it in-process; across hosts, task 0 starts one leader
     * daemon per host with mpirun ({@link LeaderLauncher}) and every task attaches to its host's region as a member,
     * its rank given by the layout. When a collective call fails (a task's worker or host died, or a task stopped
     * answering within {@code map.collectiveTimeoutMs}) the group re-forms as a new generation: task 0 (the original
     * or its restarted successor) starts the next generation's group, the others attach to it, and every task resumes
     * from the last published frame (task 0 shares it), so all hold the same map again and no stored row is left out.
     */
    private void run(LiveMapSettings settings, int task, String job, MeridianConfig.MapSettings map,
                     Path rowStores, Path snapshots, Path work, String brokers) {
        Generations generations = new Generations(snapshots, job);
        KafkaFramePublisher kafka = null;
        AsyncFramePublisher publisher = null;
        try {
            if (task == 0 && brokers != null) {
                kafka = new KafkaFramePublisher(brokers, map.topic(), settings.capacity(), "meridian-map-" + job,
                        map.updatesIntervalMs());
            }
            SnapshotWriter snapshot = task == 0 ? new SnapshotWriter(snapshots, job) : null;
            snapshotWriter = snapshot;
            KafkaFramePublisher topic = kafka;
            // the topic first: its records are what a viewer waits for; the snapshot is the state to resume from
            publisher = snapshot == null ? null : new AsyncFramePublisher(new FrameListener() {
                @Override
                public void onFrame(Frame frame) {
                    if (topic != null) {
                        topic.onFrame(frame);
                    }
                    snapshot.onFrame(frame);
                }

                @Override
                public void onArrivals(Arrivals placed) {
                    if (topic != null) {
                        topic.onArrivals(placed); // the snapshot shows the rounds' frames only
                    }
                }

                @Override
                public void onIdle() {
                    if (topic != null) {
                        topic.onIdle();
                    }
                }
            }, "meridian-live-map-publisher");
            FrameListener publish = publisher;
            if (publisher != null) {
                startArrivals(new ArrivalPlacer(new RowStoreReader(rowStores, settings.blockRows(),
                        settings.capacity())), publisher);
            }
            lowerRoundsPriority(map.roundsNice()); // after starting the placer and publisher: threads inherit it
            long failedGeneration = -1;
            shmBackoff = new ShmBackoff(() -> TmpfsSpace.freeBytes(map.regionRoot()));
            while (!stopping) {
                MapLayout layout = layouts.current();
                int rank = layout.rank(taskId);
                String host = layout.hostOfRank(rank);
                if (layout.groups() > 1 && layout.storesOn(host).isEmpty()) {
                    throw new IllegalStateException("map task " + taskId + " on " + host + " has no row store on its"
                            + " host to read its rows from: give ingest.rowStore.parallelism at least the number of"
                            + " workers (" + layout.describe() + ")");
                }
                long generation = rank == 0 ? generations.next()
                        : generations.awaitAfter(failedGeneration, map.regionRoot(), () -> stopping);
                if (generation < 0) {
                    return; // stopping
                }
                if (rank == 0 && failedGeneration >= 0) {
                    resumingGeneration = generation; // its first frame records that the map resumed
                }
                String jobId = generations.jobId(generation);
                String clusterJobId = generations.clusterJobId(generation);
                if (rank == 0) {
                    generations.removeStaleRegions(map.regionRoot(), generation);
                }
                try {
                    if (rank == 0 && layout.groups() > 1) {
                        startLeaders(jobId, clusterJobId, layout, settings, map, snapshots, job);
                    }
                    runGeneration(settings, rank, layout, jobId, clusterJobId, map, rowStores, snapshots, work, job,
                            publish);
                } catch (CollectiveException | UncheckedIOException | InternalError e) {
                    if (stopping) {
                        return;
                    }
                    ShmFullException full = shmFull(e, TwoLevelCollectives.regionPath(map.regionRoot(), jobId, 0));
                    if (full == null && !(e instanceof CollectiveException)) {
                        throw e;
                    }
                    failures.inc();
                    failedGeneration = generation;
                    if (full != null) {
                        shmFailures.inc();
                        long waitMs = shmBackoff.next(full.freeBytes());
                        LOG.error("live map task {} (rank {} on {}): generation {} failed: {}; the group re-forms"
                                + " from the last frame when its regions can be made (next try within {} ms)", taskId,
                                rank, host.isEmpty() ? "this host" : host, generation, full.getMessage(), waitMs);
                    } else {
                        // a daemon's own line comes through mpirun while it runs (up to 3 s); mpirun reports a daemon
                        // killed by a signal only as it ends the job, after the members here have failed: when neither
                        // the error nor the daemons name the failed part yet, end the job and read again
                        String daemonsJob = leadersJob;
                        String daemons = daemonsJob == null ? "" : daemonFailures(daemonsJob);
                        MapFailures.Cause cause = MapFailures.cause(e.getMessage(), daemons, host);
                        if (daemonsJob != null && !cause.named()) {
                            stopLeaders();
                            daemons = leaders.failures(daemonsJob);
                            cause = MapFailures.cause(e.getMessage(), daemons, host);
                        }
                        String unreachable = rank == 0 && layout.groups() > 1 && !cause.named()
                                ? unreachable(layout, host) : "";
                        String reason = e.getMessage()
                                + (daemons.isEmpty() ? "" : "; the leader daemons said: " + daemons)
                                + (unreachable.isEmpty() ? "" : "; task 0 found: " + unreachable);
                        if (!unreachable.isEmpty()) {
                            cause = MapFailures.cause(e.getMessage(), daemons + " " + unreachable, host);
                        }
                        // another host's tmpfs full (its leader daemon could not make its region): the same back-off
                        // as here, its free space unknown from this host
                        String retry = "";
                        if (cause.part().equals(MapFailures.SHM_FULL)) {
                            shmFailures.inc();
                            retry = " (next try within " + shmBackoff.next(-1) + " ms)";
                        }
                        LOG.error("live map task {} (rank {} on {}): generation {} failed, the group re-forms and"
                                + " resumes from the last frame: {}; failed part: {}; the map's groups: {}", taskId,
                                rank, host.isEmpty() ? "this host" : host, generation, reason,
                                cause.describe() + retry, layout.describe());
                        if (rank == 0) {
                            MapFailures.count(cause);
                            recordFailure(snapshots, job, generation, cause, reason);
                        }
                    }
                } finally {
                    stopLeaders();
                }
                shmBackoff.park(() -> stopping);
                if (rank == 0 && failedGeneration == generation && layout.groups() > 1) {
                    LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(1)); // a host that is down: one try a second
                }
            }
        } catch (RuntimeException e) {
            if (!stopping) {
                failures.inc();
                LOG.error("live map task {}: the rounds stopped; the worker restarts at its next tuple", task, e);
                roundsStopped = e;
            }
        } finally {
            stopLeaders();
            stopArrivals();
            if (publisher != null) {
                publisher.close();
            }
            if (kafka != null) {
                kafka.close();
            }
        }
    }

    /**
     * The tmpfs failure behind {@code e}, if that is what it is: a region's reservation refused (ENOSPC at creation),
     * or a write into a region's sparse data area that faulted (the JVM's InternalError for the SIGBUS), named after
     * {@code region}, the generation's region on this host. Null for any other failure.
     */
    static ShmFullException shmFull(Throwable e, Path region) {
        ShmFullException full = ShmFullException.in(e);
        if (full != null) {
            return full;
        }
        for (Throwable c = e; c != null && c.getCause() != c; c = c.getCause()) {
            if (TmpfsSpace.isMappedWriteFault(c)) {
                return TmpfsSpace.fault(region, c);
            }
        }
        return null;
    }

    /**
     * Task 0, when a generation failed for no reason the daemons named (their start failed, a timeout): which other
     * host of the map does not answer TCP at a map worker's slot port, as the daemons' link watch says it
     * ({@code the link to group G on HOST is down: ...}); empty when all answer.
     */
    private static String unreachable(MapLayout layout, String self) {
        List<String> down = new ArrayList<>();
        List<String> hosts = layout.hosts();
        for (int g = 0; g < hosts.size(); g++) {
            String other = hosts.get(g);
            int port = layout.lowestSlotPort(other);
            if (!other.equals(self) && port > 0) {
                String error = HostProbe.unanswered(other, port, 1000);
                if (error != null) {
                    down.add("the link to group " + g + " on " + other + " is down: a connection to " + other + ":"
                            + port + " (a map worker's slot) failed (" + error + ")");
                }
            }
        }
        return String.join("; ", down);
    }

    private static void recordFailure(Path snapshots, String job, long generation, MapFailures.Cause cause,
                                      String reason) {
        try {
            MapFailures.recordFailure(snapshots, job, generation, cause, reason);
        } catch (RuntimeException e) {
            LOG.warn("live map: cannot record the failure of generation {} for ./meridian status: {}", generation,
                    e.getMessage());
        }
    }

    /**
     * The rounds are the worker's bulk computation; storing rows, notifying task 0 and placing new points are short
     * jobs that the new points wait for. On 2 cores shared by 4 map tasks those waited behind the rounds: bench stream
     * (uniform, mmap) stored -> first published p99 71-407 ms in 4 runs, 19.1 ms with the round threads at nice 10.
     * Within one process group (a session's autogroup) a thread's nice orders it against the others.
     */
    private void lowerRoundsPriority(int nice) {
        if (nice > 0) {
            String failure = BackgroundPriority.lowerCurrentThread(nice);
            if (failure != null) {
                LOG.warn("live map task {}: its rounds run at the worker's priority: {}", taskId, failure);
            }
        }
    }

    /** Task 0: the thread that shows new points on arrival, against the last frame, until the bolt stops. */
    private void startArrivals(ArrivalPlacer placer, FrameListener publisher) {
        Thread t = new Thread(() -> placeArrivals(placer, publisher), "meridian-live-map-arrivals");
        t.setDaemon(true);
        arrivals = t;
        t.start();
    }

    private void placeArrivals(ArrivalPlacer placer, FrameListener publisher) {
        long lastWarned = 0;
        IntToLongFunction storedAtMillis = times::storedAt;
        try (placer) {
            long warmUpStart = System.nanoTime();
            placer.warmUp();
            LOG.info("live map: the arrival placement warmed up in {} ms", (System.nanoTime() - warmUpStart) / 1_000_000);
            while (!stopping && arrivals == Thread.currentThread()) {
                LockSupport.parkNanos(ARRIVAL_IDLE_NANOS); // woken by each stored notification and each frame
                placer.releaseRowsBelow(mirrorNeededFrom); // frames hold those points: never read here again
                try {
                    Arrivals a;
                    do {
                        Frame f = last;
                        LiveMap map = current;
                        if (f == null || f.points().length == 0) {
                            break; // no frame of the publishing task yet
                        }
                        a = placer.place(f, map == null ? null : map.frozenClusters(),
                                map == null ? null : map.frozenOutliers(), highestStored + 1, storedAtMillis,
                                arrivalNotBefore(System.currentTimeMillis()));
                        if (a != null) {
                            publisher.onArrivals(a);
                            arrivalsPlaced.inc(a.count());
                            for (int k = 0; k < a.count(); k++) {
                                recordShown(a.ids()[k], a.placedAtMillis());
                            }
                        }
                    } while (a != null && !stopping);
                } catch (RuntimeException e) {
                    // the rounds still show every point; say so at most every 10 s
                    long now = System.nanoTime();
                    if (now - lastWarned > FRAME_LOG_NANOS || lastWarned == 0) {
                        lastWarned = now;
                        LOG.warn("live map: placing new points on arrival failed (the rounds place them): {}",
                                e.toString());
                    }
                }
            }
        }
    }

    private void stopArrivals() {
        Thread t = arrivals;
        if (t != null) {
            arrivals = null;
            LockSupport.unpark(t);
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Records an id's placement latency the first time its point is published (on arrival or in a frame). */
    private void recordShown(int id, long atMillis) {
        long stored = times.storedAt(id);
        if (stored > 0 && times.firstShown(id)) {
            placementTime.updateMillis(atMillis - stored);
            publishedToFrameTime.updateMillis(atMillis - times.publishedAt(id));
        }
    }

    /**
     * What the leader daemons of {@code jobId} said of the failure, waiting up to 3 s for it: a daemon that saw its
     * members go (their host or workers died) says which host, but its line may reach its log after this task's call
     * has failed (the daemon's exit is what failed it).
     */
    private String daemonFailures(String jobId) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        String said = leaders.failures(jobId);
        while (said.isEmpty() && System.nanoTime() < deadline && !stopping) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
            said = leaders.failures(jobId);
        }
        return said;
    }

    /**
     * Task 0 of a map across hosts: one leader daemon per host, by mpirun, for generation {@code jobId} (serving the
     * leader metrics, one port per host). No set for a clustering group: across hosts DA-PWC runs on task 0.
     */
    private void startLeaders(String jobId, String clusterJobId, MapLayout layout, LiveMapSettings settings,
                              MeridianConfig.MapSettings map, Path snapshots, String job) {
        if (leaders == null) {
            leaders = new LeaderLauncher(snapshots.resolve(".leaders-" + job));
        }
        // one daemon per host leads both groups, the rounds' and the clustering's, in one mpirun job: a second daemon
        // set per generation made the two-host map take 177.5 s to re-form after a host loss in one run and over
        // 300 s in CI (44 s before)
        int doubles = TriangleSmacof.reduceCapacity(settings.capacity());
        int clusterDoubles = clusterDoubles(settings);
        leadersJob = jobId;
        leaders.start(jobId, layout.members(), layout.hosts(), doubles, doubles, map.collectiveTimeoutMs(),
                map.regionRoot(), layout.leaderMetricsPorts(leaderPortOffset), clusterJobId, clusterDoubles,
                clusterDoubles, clusterTimeout(map).toMillis());
        LOG.info("live map: leader daemons of {} and {} (DA-PWC's) started on {}", jobId, clusterJobId,
                layout.hosts());
    }

    private void stopLeaders() {
        String roundsJob = leadersJob;
        leadersJob = null;
        stopLeaders(roundsJob);
    }

    private void stopLeaders(String jobId) {
        if (jobId != null) {
            try {
                leaders.stop(jobId);
            } catch (RuntimeException e) {
                LOG.warn("live map: stopping the leader daemons of {}: {}", jobId, e.getMessage());
            }
        }
    }

    /**
     * The clustering group's largest exchange: a DA-PWC product's allreduce of N x maxClusters doubles (and the gather
     * of every point's M, as many), sized by the capacity: tmpfs holds only the pages a run touches.
     */
    public static int clusterDoubles(LiveMapSettings settings) {
        // TriangleKernel.reduceCapacity, in longs: a product's N x k
        long doubles = (long) settings.capacity() * settings.maxClusters();
        // the region: two result areas of twice that, and one reduce slot of it per member (RegionDescriptor)
        long bytes = 8 * doubles * (4L + settings.tasks());
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("map.maxClusters " + settings.maxClusters() + " x ingest.maxPoints "
                    + settings.capacity() + " with " + settings.tasks() + " map tasks needs a clustering region of "
                    + bytes + " bytes, more than 2 GiB: lower map.maxClusters or ingest.maxPoints");
        }
        return (int) doubles;
    }

    /**
     * How long a DA-PWC exchange waits for a task: at least {@link #CLUSTER_TIMEOUT_FLOOR}. A run's part between two
     * exchanges is a product over the task's rows at nice 19: at N = 20,000 an EM iteration took 0.97 s of wall time
     * with 2 tasks on 2 cores at a load average of 12-17 (bench live-pwc), and a product grows as N^2 (25x that at
     * 100,000), so the rounds' 30 s would end runs whose tasks are only slow. A task that is gone fails the exchange
     * at once (its process is watched), and one that hangs fails the rounds' group first, whose re-forming closes
     * this group too.
     */
    static Duration clusterTimeout(MeridianConfig.MapSettings map) {
        return Duration.ofMillis(Math.max(map.collectiveTimeoutMs(), CLUSTER_TIMEOUT_FLOOR.toMillis()));
    }

    /**
     * One generation of the map: the rounds' group and the clustering's (a second group of the same tasks, so that a
     * DA-PWC run's exchanges on its own threads never interleave with the rounds'), then rounds until it fails or
     * the bolt stops.
     */
    /**
     * {@code map.resumeFrom}'s current frame, whichever submission published it, if every one of its points has its
     * row stored, else null with the reason logged (the map then starts from its stored rows). Across hosts only the
     * rows of the blocks on this host can be looked at; {@code allRowsHere} says whether every block is.
     */
    static Snapshot predecessor(Path from, Path rowStores, LiveMapSettings settings, boolean allRowsHere) {
        Snapshot s = Snapshot.loadAny(from);
        if (s == null) {
            LOG.warn("live map: map.resumeFrom {} holds no frame to resume from: the map starts from its stored rows",
                    from);
            return null;
        }
        String frame = "frame " + s.summary().frame() + " of " + s.summary().job() + " (" + s.n() + " points)";
        if (s.n() > settings.capacity()) {
            LOG.error("live map: map.resumeFrom {}: {} not resumed: more points than ingest.maxPoints ({}); the map"
                    + " starts from its stored rows", from, frame, settings.capacity());
            return null;
        }
        int missing = firstRowMissing(s.n(), rowStores, settings, allRowsHere);
        if (missing >= 0) {
            LOG.error("live map: map.resumeFrom {}: {} not resumed: row {} is not stored in {}; the map starts from its"
                    + " stored rows", from, frame, missing, rowStores);
            return null;
        }
        LOG.info("live map: resuming from map.resumeFrom {}: {}", from, frame);
        return s;
    }

    /** The first of rows 0 .. n-1 not stored in {@code rowStores} (of the blocks there unless all are), -1 if none. */
    static int firstRowMissing(int n, Path rowStores, LiveMapSettings settings, boolean allRowsHere) {
        int blockRows = settings.blockRows();
        try (RowStoreReader rows = new RowStoreReader(rowStores, blockRows, settings.capacity())) {
            for (int id = 0; id < n; id++) {
                if (!allRowsHere && id % blockRows == 0 && !rows.hasBlock(id / blockRows)) {
                    id += blockRows - 1; // another host's block
                } else if (!rows.isStored(id)) {
                    return id;
                }
            }
        }
        return -1;
    }

    /** {@code map.outliers} and {@code map.outlierSpongeFactor}. */
    static OutlierSettings outlierSettings(MeridianConfig.MapSettings map) {
        return new OutlierSettings(map.outliers(), map.outlierSpongeFactor());
    }

    private void runGeneration(LiveMapSettings settings, int rank, MapLayout layout, String jobId, String clusterJobId,
                               MeridianConfig.MapSettings map, Path rowStores, Path snapshots, Path work, String job,
                               FrameListener publish) {
        // an allreduce's result is read from the region's result area: both areas hold the largest reduction
        int doubles = TriangleSmacof.reduceCapacity(settings.capacity());
        int clusterDoubles = clusterDoubles(settings);
        Duration timeout = Duration.ofMillis(map.collectiveTimeoutMs());
        Duration clusterTimeout = clusterTimeout(map);
        // the clustering's region first: the others take the rounds' region as the sign that a generation has begun
        // (Generations.awaitAfter), and then find the clustering's there already; across hosts each host's leader
        // daemon leads both groups (startLeaders), and attaching waits for a region the daemon has yet to make
        try (TwoLevelCollectives clustering = layout.groups() > 1
                ? attach(clusterJobId, layout, rank, map.regionRoot(), clusterTimeout)
                : TwoLevelCollectives.singleHost(clusterJobId, rank, layout.ranks(), clusterDoubles, clusterDoubles,
                        map.regionRoot(), clusterTimeout);
             TwoLevelCollectives collectives = layout.groups() > 1
                ? attach(jobId, layout, rank, map.regionRoot(), timeout)
                : TwoLevelCollectives.singleHost(jobId, rank, layout.ranks(), doubles, doubles, map.regionRoot(),
                        timeout);
             LiveMap live = new LiveMap(settings, rank, new RowStoreReader(rowStores, settings.blockRows(),
                     settings.capacity()), new CollectiveBlockSync(collectives),
                     new CollectiveBlockSync(clustering),
                     work, f -> onFrame(f, publish), outlierSettings(map))) {
            joined = collectives;
            current = live;
            boolean mirrored = rank == 0 && layout.groups() > 1;
            mirrorStores = mirrored ? layout.storesOn(layout.hostOfRank(0)).stream().mapToInt(Integer::intValue)
                    .toArray() : new int[0];
            shmBackoff.reset(); // the regions could be made
            Snapshot last = rank == 0 ? Snapshot.load(snapshots, job) : null;
            if (last == null && rank == 0 && map.resumeFrom() != null) {
                last = predecessor(map.resumeFrom(), rowStores, settings, layout.groups() == 1);
            }
            if (last != null) {
                live.resume(last);
            }
            LOG.info("live map task {} (rank {} of {}, group {} of {}) joined {} (region {}; DA-PWC's: {}){}", taskId,
                    rank, layout.ranks(), collectives.group(), collectives.groups(), jobId, collectives.regionPath(),
                    clustering.regionPath(),
                    last == null ? "" : ", resuming from frame " + last.summary().frame() + " (N = " + last.n() + ")");
            IdleRounds idle = new IdleRounds(map.idleMs(), map.idleMaxMs());
            while (!stopping) {
                // a round may make two frames (placement, then refinement): each is recorded by the listener
                if (live.round() == null) {
                    long park = idle.parkNanos(live.awaitingRows(), System.nanoTime());
                    roundsIdle = true;
                    LockSupport.parkNanos(park);
                    roundsIdle = false;
                } else {
                    idle.reset();
                }
                if (mirrored) {
                    releaseMirror(live);
                }
                roundCount.inc();
            }
        }
    }

    /**
     * Task 0 across hosts: the rows it may still read from its host's mirror copies start at the lower of what the
     * labelling still reads ({@link LiveMap#rowsNeededFrom}) and the current snapshot's points (a map that resumes
     * starts from the snapshot and reads no row below it either). Unmaps its own mappings of the blocks below, and
     * the executor tells the row stores, which drop them ({@link #execute}). Rounds' thread.
     */
    private void releaseMirror(LiveMap live) {
        SnapshotWriter snapshot = snapshotWriter;
        int from = Math.min(live.rowsNeededFrom(), snapshot == null ? 0 : snapshot.currentPoints());
        if (from / blockRows > mirrorNeededFrom / blockRows) {
            live.releaseOthersRowsBelow(from);
            mirrorNeededFrom = from; // after unmapping: the arrival thread unmaps its own on seeing it
        }
    }

    /** A member of its host's group, led by the host's leader daemon; refuses a group laid out otherwise. */
    private static TwoLevelCollectives attach(String jobId, MapLayout layout, int rank, Path regionRoot,
                                              Duration timeout) {
        TwoLevelCollectives c = TwoLevelCollectives.attach(jobId, 0, layout.member(rank), regionRoot, timeout);
        if (c.rank() != rank || c.size() != layout.ranks() || c.groups() != layout.groups()
                || c.group() != layout.group(rank)) {
            String found = "rank " + c.rank() + " of " + c.size() + " in group " + c.group() + " of " + c.groups();
            c.close();
            throw new RegionMismatchException("the region of " + jobId + " makes this task " + found + ", but the"
                    + " assignment makes it rank " + rank + " of " + layout.ranks() + " in group " + layout.group(rank)
                    + " of " + layout.groups() + " (" + layout.describe() + "): the assignment changed");
        }
        return c;
    }

    private void onFrame(Frame f, FrameListener publish) {
        record(f);
        if (publish == null) {
            return; // not the publishing task: its figures only
        }
        publish.onFrame(f);
        long resumed = resumingGeneration;
        if (resumed >= 0) {
            resumingGeneration = -1;
            try {
                MapFailures.recordResumed(snapshots, job, resumed);
            } catch (RuntimeException e) {
                LOG.warn("live map: cannot record that generation {} resumed: {}", resumed, e.getMessage());
            }
            LOG.info("live map: generation {} resumed after the failure, frame {} (N = {})", resumed, f.frame(),
                    f.n());
        }
        Thread placer = arrivals;
        if (placer != null) {
            LockSupport.unpark(placer); // rows stored before the first frame can be shown now
        }
        for (int i = f.n() - f.placed(); i < f.n(); i++) {
            long stored = times.storedAt(i);
            if (stored > 0) {
                // ids enter the rounds' map in order: a row can be placed there once every lower id is stored too
                placeableAtMillis = Math.max(placeableAtMillis, stored);
                placeableTime.updateMillis(f.publishedAtMillis() - placeableAtMillis);
                recordShown(i, f.publishedAtMillis());
            }
        }
        // a line per frame is 20-50 lines a second while rows stream in, written by the round thread that the other
        // map tasks wait for in the next collective: every frame at debug, one in FRAME_LOG_NANOS at info
        long now = System.nanoTime();
        boolean info = now - lastFrameLogged >= FRAME_LOG_NANOS;
        if (info || LOG.isDebugEnabled()) {
            if (info) {
                lastFrameLogged = now;
            }
            String line = String.format(java.util.Locale.ROOT, "live map frame %d: N = %d, stress %.5g, %d clusters,"
                    + " drift %.3g, %d placed, %d iterations%s, %d ms", f.frame(), f.n(), f.stress(), f.clusters(),
                    f.drift(), f.placed(), f.iterations(), f.annealed() ? " (annealed)" : "",
                    Math.round(f.roundSeconds() * 1000));
            if (info) {
                LOG.info(line);
            } else {
                LOG.debug(line);
            }
        }
    }

    /**
     * The oldest stored time of a row the arrival placement still places: within {@link #ARRIVAL_MAX_AGE_MS}, or
     * within the time the rounds take to show a row, if longer (the last interval between frames, or the time since
     * the last frame). At 100K points the rounds' frames are 30 s apart: with the fixed second, the first rows of a
     * stream, which found the placer taking its first placements, waited 34 s for a frame to show them
     * ({@code bench scale --part published}: p99 34 s, all 5 slowest rows the first of the feed).
     */
    private long arrivalNotBefore(long nowMillis) {
        return arrivalNotBefore(nowMillis, last, framePeriodMs);
    }

    /** {@link #arrivalNotBefore(long)} given the last frame (null: none) and the last interval between frames. */
    static long arrivalNotBefore(long nowMillis, Frame last, long framePeriodMs) {
        long sinceFrame = last == null ? 0 : nowMillis - last.publishedAtMillis();
        return nowMillis - Math.max(ARRIVAL_MAX_AGE_MS, Math.max(framePeriodMs, sinceFrame));
    }

    private void record(Frame f) {
        Frame previous = last;
        if (previous != null && f.frame() > previous.frame()) {
            framePeriodMs = Math.max(0, f.publishedAtMillis() - previous.publishedAtMillis());
        }
        last = f;
        TwoLevelCollectives c = joined;
        if (c != null) {
            if (c != timed) { // a new generation: its counters start at 0
                timed = c;
                lastCall = 0;
                lastWait = 0;
                lastInterHost = 0;
            }
            long call = c.callNanos();
            long wait = c.waitNanos();
            long interHost = c.interGroupNanos();
            long dWait = wait - lastWait;
            long dInter = interHost - lastInterHost;
            waitTime.update(dWait);
            interHostTime.update(dInter);
            sharedMemoryTime.update(Math.max(0, call - lastCall - dWait - dInter));
            lastCall = call;
            lastWait = wait;
            lastInterHost = interHost;
        }
        placed.inc(f.placed());
        roundTime.updateSeconds(f.roundSeconds());
        computeTime.updateSeconds(f.computeSeconds());
        collectiveTime.updateSeconds(f.collectiveSeconds());
    }

    private void registerMetrics(TopologyContext context) {
        context.registerGauge(MapStreams.FRAME, () -> last == null ? 0L : last.frame());
        context.registerGauge(MapStreams.POINTS, () -> last == null ? 0 : last.n());
        context.registerGauge(MapStreams.STRESS, () -> last == null ? Double.NaN : last.stress());
        context.registerGauge(MapStreams.TEMPERATURE, () -> last == null ? Double.NaN : last.temperature());
        context.registerGauge(MapStreams.CLUSTERS, () -> last == null ? 0 : last.clusters());
        context.registerGauge(MapStreams.OUTLIERS, () -> last == null ? 0 : last.outliers());
        context.registerGauge(MapStreams.DRIFT, () -> last == null ? Double.NaN : last.drift());
        context.registerGauge(MapStreams.STALENESS, () -> last == null ? 0L : last.staleness());
        roundTime = TimeHistogram.register(context, MapStreams.ROUND);
        computeTime = TimeHistogram.register(context, MapStreams.COMPUTE);
        collectiveTime = TimeHistogram.register(context, MapStreams.COLLECTIVE);
        placementTime = TimeHistogram.register(context, MapStreams.PLACEMENT);
        publishedToFrameTime = TimeHistogram.register(context, MapStreams.PUBLISHED_TO_FRAME);
        placeableTime = TimeHistogram.register(context, MapStreams.PLACEABLE);
        notifiedTime = TimeHistogram.register(context, MapStreams.NOTIFIED);
        sharedMemoryTime = TimeHistogram.register(context, MapStreams.COLLECTIVE_SHM);
        waitTime = TimeHistogram.register(context, MapStreams.COLLECTIVE_WAIT);
        interHostTime = TimeHistogram.register(context, MapStreams.COLLECTIVE_INTER_HOST);
        placed = context.registerCounter(MapStreams.PLACED);
        arrivalsPlaced = context.registerCounter(MapStreams.ARRIVALS);
        roundCount = context.registerCounter(MapStreams.ROUNDS);
        failures = context.registerCounter(MapStreams.FAILURES);
        shmFailures = context.registerCounter(MapStreams.SHM_FAILURES);
    }

    @Override
    public void execute(Tuple input) {
        RuntimeException stopped = roundsStopped;
        if (stopped != null) {
            throw new IllegalStateException("live map: the rounds stopped (" + stopped + "); the worker restarts and"
                    + " the map resumes from its last frame", stopped);
        }
        if (TupleUtils.isTick(input)) {
            tellMirror(true);
            return;
        }
        int[] ids = (int[]) input.getValueByField(MapStreams.IDS);
        long[] published = (long[]) input.getValueByField(MapStreams.PUBLISHED_MS);
        long stored = input.getLongByField(MapStreams.STORED_MS);
        int highest = highestStored;
        for (int k = 0; k < ids.length; k++) {
            int id = ids[k];
            if (id >= 0 && id < times.capacity()) {
                times.stored(id, published[k], stored);
                highest = Math.max(highest, id);
            }
        }
        highestStored = highest; // this executor's thread alone writes it
        notifiedTime.updateMillis(System.currentTimeMillis() - stored);
        Thread placer = arrivals;
        if (placer != null) {
            LockSupport.unpark(placer);
        }
        if (roundsIdle) {
            LockSupport.unpark(rounds); // an idle map's task 0 starts its next round now, not after its idle wait
        }
        tellMirror(false);
        collector.ack(input);
    }

    /**
     * Task 0 across hosts: tells the row stores on its host from which id on it still reads their mirror copies, when
     * that moved past a block, and on each tick again (a restarted row store learns it so). Unanchored: a lost one
     * only delays a drop until the next.
     */
    private void tellMirror(boolean again) {
        int[] stores = mirrorStores;
        int from = mirrorNeededFrom;
        if (stores.length == 0 || from < blockRows || !(again || from / blockRows > mirrorNeededSent / blockRows)) {
            return;
        }
        for (int store : stores) {
            collector.emitDirect(store, MapStreams.MIRROR_NEEDED, new Values(from));
        }
        mirrorNeededSent = from;
    }

    @Override
    public Map<String, Object> getComponentConfiguration() {
        return Map.of(org.apache.storm.Config.TOPOLOGY_TICK_TUPLE_FREQ_SECS, MapStreams.MIRROR_NEEDED_RESEND_SECS);
    }

    @Override
    public void cleanup() {
        stopRounds();
    }

    /**
     * Stops the round thread. One waiting in a collective call for a task that is stopping too is released by
     * closing the group: its leader marks the region closed (every waiting task then fails at once) and removes it.
     */
    private void stopRounds() {
        stopping = true;
        stopLeaders(); // first: a worker being killed has a few seconds, and daemons left behind would hold regions
        Thread t = rounds;
        if (t == null || !t.isAlive()) {
            return;
        }
        t.interrupt();
        try {
            t.join(500);
            TwoLevelCollectives group = joined;
            if (t.isAlive() && group != null) {
                group.close();
            }
            t.join(2500);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.warn("live map: closing the group at shutdown: {}", e.getMessage());
        }
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declareStream(MapStreams.MIRROR_NEEDED, true, MapStreams.MIRROR_NEEDED_FIELDS);
    }
}
