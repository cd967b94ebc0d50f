package io.meridian.live;

import io.meridian.collective.BlockSync;
import io.meridian.collective.TimingBlockSync;
import io.meridian.davs.FrozenSponge;
import io.meridian.mds.GrowingArrays;
import io.meridian.mds.OwnedIds;
import io.meridian.mds.TriangleSmacof;
import io.meridian.pwc.PwcSettings;
import io.meridian.stream.row.RowStoreReader;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.function.IntPredicate;

/**
 * One task's share of the live map: a DA-MDS map of every point whose row is stored, kept current round after round.
 * Every task of the map runs {@link #round()} on its own thread; the rounds are collective (each exchange goes through
 * the {@link BlockSync}, in the same order on every task) and every decision is taken on reduced values, so all tasks
 * hold the same map. A round:
 * <ol>
 *   <li>agrees on its epoch: the points {@code 0 .. n-1} with n the first id not yet stored anywhere (an allreduce of
 *   each task's first missing owned id), so every task covers the same set;</li>
 *   <li>the first time n reaches {@code initialPoints}: anneals from a random layout, as the batch engine does;</li>
 *   <li>later: places each new point with its owner's row against the previous map ({@link Placement}), shares the
 *   positions (one allreduce of the new rows) and publishes them at once, before any refinement; re-anneals warm once
 *   the map has grown by {@code reannealGrowth};</li>
 *   <li>refines: up to {@code iterationsPerRound} SMACOF iterations ({@link TriangleSmacof}), fewer once the stress
 *   changes by less than {@code threshold}; a converged map with no new point skips the round;</li>
 *   <li>aligns the map rigidly to the previous frame ({@link RigidAlignment}), so points do not jump because SMACOF
 *   re-centres, and publishes the frame (task 0: with clusters, {@link ClusterTracker}, and outlier flags,
 *   {@link OutlierTracker}); a round whose refinement a waiting row cut short leaves that to the next round's
 *   placement frame.</li>
 * </ol>
 * Its arrays grow with its points ({@link #reserve}, when a round's epoch is agreed), not with its capacity: sized for
 * a capacity of 1,000,000 they took 158 MB of heap per task before the first point, and two tasks holding 2000 points
 * retained 438 MB (3.6 MB at a capacity of 8192); grown, 0.91 MB at either ({@code LiveMapCapacityTest}).
 */
public final class LiveMap implements AutoCloseable {
    private static final double[] NO_POINTS = new double[0];
    private static final short[] NO_ROW = new short[0];
    private static final int[] NO_LABELS = new int[0];
    private static final boolean[] NO_FLAGS = new boolean[0];
    private static final double SQRT_2L = Math.sqrt(2.0 * TriangleSmacof.DIM);
    /** Anneal: stop a temperature once the stress falls by less than this, as the batch engine does. */
    private static final double ANNEAL_THRESHOLD = 1e-6;
    private static final int ANNEAL_ITERATIONS_PER_TEMPERATURE = 1000;
    /**
     * Iterations an annealing round runs before a waiting row may end it. 1: a warm anneal then costs new points one
     * iteration, not four (bench live-rounds, N = 4000, 4 tasks: p99 of rows >= 1000 37-40 ms, was 74-153 ms), and
     * goes on at one iteration per round while rows stream in.
     */
    private static final int MIN_ANNEAL_ITERATIONS = 1;
    /** A warm re-anneal starts at this fraction of the first anneal's top temperature. */
    private static final double WARM_START = 0.05;
    /**
     * When the stream pauses (the map polished), re-anneal once the map has grown by this factor since its last
     * anneal: uniform 8-D data streamed into 3-D ended at 1.014-1.015x batch DA-MDS's stress without it (bench stream,
     * N = 4000), 0.9955x with it (N = 2000, one task); the map moves once, when nothing else is happening. Any growth
     * (was 1.1), from the layout batch starts from ({@link #startShadowAnneal}): bench stream, uniform, N = 4000 ended
     * at 1.0116-1.0117x batch in 2 of 9 runs before, 1.0000x in the 3 runs after.
     */
    private static final double IDLE_REANNEAL_GROWTH = 1.0;
    /**
     * Rounds without a new point after which the stream counts as paused (about 2 s). An idle round takes about
     * {@code map.idleMs} (5 ms) and a round of two small exchanges; with fewer, the gaps between rows at 100 rows/s
     * started anneals mid-stream.
     */
    private static final int QUIET_ROUNDS = 400;
    /**
     * From this many mapped points on, the rounds place new points with the vector pass ({@link PlacementVectors}):
     * its sums are added in lane order, so its results do not depend on when the JIT compiled it, but until C2 has
     * (a few thousand calls' worth of loop iterations) it runs far slower than the scalar pass; on a map this large
     * each call alone iterates thousands of times, and a point's placement costs tens of milliseconds on the scalar
     * pass (the vector pass is about 5x faster: {@code ./meridian bench placement}).
     */
    static final int VECTOR_PLACEMENT_FROM = 16_384;
    /**
     * The most a refining round moves the shown points before it shows them, as the frame's drift measures it (RMS
     * movement after alignment over the map's RMS radius). Uniform 8-D data moved about 0.16 % of the radius per
     * iteration at N = 2000-3000, so a 20-iteration round moved it up to 3.2 % in one frame (bench stream, uniform:
     * drift outside anneals max 2.3-3.2 %, median 0.12-0.23 %); the goal is 1 %. The map goes the same way, in more
     * frames.
     */
    private static final double FRAME_MOVEMENT = 0.005;
    /**
     * Rounds between two frames of a reveal ({@link #startReveal}): an idle round takes about {@code map.idleMs}
     * (5 ms) and two small exchanges, so the map moves there over a few seconds, not in frames faster than a viewer
     * (or the frame publisher, which keeps only the newest) takes them.
     */
    private static final int REVEAL_ROUNDS = 10;
    /**
     * The most frames a reveal takes (a layout that moved more shows larger steps). Fewer when the passes the change
     * took do not pay for a measured frame each ({@link RevealPath}).
     */
    private static final int MAX_REVEAL_FRAMES = 200;
    /** DA-PWC runs again once the map has grown by this factor since the points it last covered. */
    private static final double CLUSTER_GROWTH = 2.0;
    /**
     * Absent row blocks beyond the frontier a round looks at ({@link #countStoredAhead}): each look is a stat of a
     * file (about 5 us), and looking at every absent block of a capacity of 1,000,000 made an idle round of one task
     * take 21.7 ms instead of 0.17 ms at 8192 (blockRows 256, N = 600); with the sweep, 0.10 ms.
     */
    private static final int SWEEP_BLOCKS = 8;

    private final LiveMapSettings settings;
    private final int task;
    private final RowStoreReader rows;
    private final TimingBlockSync sync;
    private final TriangleSmacof smacof;
    private final OwnedIds owned;
    private final Placement placement;
    /** The vector pass, for maps of {@link #VECTOR_PLACEMENT_FROM} points and more (null without the Vector API). */
    private final Placement vectorPlacement;
    private final RigidAlignment alignment;
    private final ClusterTracker clusters;
    /** Task 0 with clustering and outliers on: DA-VS after each DA-PWC run; else null. */
    private final OutlierTracker outliers;
    /** The DA-PWC run ({@link ClusterTracker#runsTaken}) whose frame DA-VS was last asked to run on. */
    private long outliersAskedForRun;
    private final FrameListener listener;
    private final double[] reduce = new double[2];
    // sized by the points (reserve): grown only by the round thread, the only one that reads them
    private double[] placed = NO_POINTS;
    private double[] positions = NO_POINTS;
    private double[] previous = NO_POINTS;
    private short[] row = NO_ROW;
    private final double[] one = new double[TriangleSmacof.DIM];
    private final java.util.function.BooleanSupplier rowsWaiting = this::newRowsWaiting;

    private int n;
    /** The blocks this task owns: read by every round, never released ({@link #releaseOthersRowsBelow}). */
    private final IntPredicate ownBlock;
    private int previousN;
    /** This task's first owned id not stored yet ({@code capacity}: none). */
    private int firstMissing;
    /** This task's owned ids below {@link #firstMissing}: all stored. */
    private int storedBeforeMissing;
    private int ownedStored;
    /** Rows stored anywhere, as the last round counted them (what its frames say). */
    private long storedRows;
    /** The highest owned row block seen present (-1: none yet). */
    private int lastPresentBlock = -1;
    /** Where the look at the absent blocks beyond the frontier ({@link #countStoredAhead}) goes on next round. */
    private int sweepBlock;
    private int annealedAt;
    /**
     * Points in the map at its last anneal from the top temperature (the cold start or a pause's fresh anneal): a
     * paused map is annealed afresh when it has grown since, even if a warm re-anneal ran at its last size (bench
     * stream, uniform: a warm re-anneal at N = 4000 kept the pause from annealing and the map ended at 1.0100x batch).
     */
    private int freshAnnealedAt;
    private boolean annealingFromTop;
    /** The temperature of the annealing under way, NaN when there is none. */
    private double annealTemperature = Double.NaN;
    private double annealLast = Double.NaN;
    /**
     * The stress the last refining iteration (T = 0) returned, while only such iterations and alignments (which keep
     * the stress) have changed the map since: the convergence tests compare across rounds, so a round that ends after
     * one iteration (a row arrived, or the frame moved enough) does not restart them. NaN otherwise.
     */
    private double refinedLast = Double.NaN;
    /** Whether the last round's polish ended only because its frame had moved enough: the next one goes on with it. */
    private boolean polishing;
    private int annealIterationsHere;
    private double annealedStress = Double.NaN;
    private double stress = Double.NaN;
    private double temperature = Double.NaN;
    private double topTemperature = Double.NaN;
    private double minTemperature;
    private boolean converged;
    /** Converged as tightly as the batch engine (an absolute stress change below 1e-6), once no row came for a while. */
    private boolean polished;
    /** Rounds in a row without a new point: the same on every task (rounds are collective). */
    private int quietRounds;
    private long frame;
    private long rounds;
    /** A full anneal of a paused map under way out of sight ({@link #startShadowAnneal}). */
    private boolean shadow;
    private double[] shadowSaved;
    private double shadowStress;
    /** Points in the last published frame. */
    private int shownN;
    /** Whether the map changed (points, refinement) since the last frame. */
    private boolean unpublished;
    /**
     * Whether the last published frame said the map had settled. A DA-PWC or DA-VS run that ends without changing what
     * is shown (DA-VS failed, or found no width to scale by) must still be followed by a frame that says so, or a
     * viewer waiting for a settled map waits for the next row.
     */
    private boolean shownSettled;
    /** Whether an anneal ran since the last frame. */
    private boolean frameAnnealed;
    /** Whether this round's refinement stopped because a row is waiting (reduced: the same on every task). */
    private boolean endedForRows;
    // the work since the last frame: what a frame reports of its rounds
    private long segmentStart;
    private long frameWorkNanos;
    private long placementNanos;
    private long collectiveAtFrame;
    private long iterationsAtFrame;
    private Snapshot resumeFrom;
    // a reveal under way: the last frame's points (from) moving to the anneal's aligned layout (to)
    private double[] revealFrom;
    private double[] revealTo;
    private int revealToN;
    private int revealFrames;
    private int revealFrame;
    private int revealWait;
    private final RevealPath revealPath = new RevealPath();
    /** Passes over the triangle at the last aligned frame: what a change since then cost (a reveal's budget). */
    private long passesAtShown;

    /**
     * A map whose DA-PWC runs on task 0 alone, over every row ({@link ClusterTracker#onTaskZero}).
     *
     * @param task     this task's index among {@code settings.tasks()}; must equal {@code sync.block()}
     * @param rows     the row stores (every block readable: the publishing task reads all rows for the clustering)
     * @param workDir  scratch space of the publishing task (none used since DA-PWC reads the row stores in place)
     * @param listener receives every frame of this task (or null); only task 0's frames carry the points and labels
     */
    public LiveMap(LiveMapSettings settings, int task, RowStoreReader rows, BlockSync sync, Path workDir,
                   FrameListener listener) {
        this(settings, task, rows, sync, null, workDir, listener);
    }

    /**
     * A map whose DA-PWC runs distributed over its tasks ({@link ClusterTracker#distributed}), each over its own rows,
     * exchanging through {@code clusterSync}: a group of the same tasks, separate from {@code sync} (the rounds go on
     * while a run's exchanges are under way on other threads); null: on task 0 alone, as the other constructor.
     * Task 0 still reads the rows of the points placed after a run began, to label them from its frozen state.
     * Outliers are flagged with {@link OutlierSettings#DEFAULT}.
     */
    public LiveMap(LiveMapSettings settings, int task, RowStoreReader rows, BlockSync sync, BlockSync clusterSync,
                   Path workDir, FrameListener listener) {
        this(settings, task, rows, sync, clusterSync, workDir, listener, OutlierSettings.DEFAULT);
    }

    /**
     * The map above, flagging outliers as {@code outlierSettings} says: after each DA-PWC run task 0 runs DA-VS on
     * the frame showing its clusters ({@link OutlierTracker}).
     */
    public LiveMap(LiveMapSettings settings, int task, RowStoreReader rows, BlockSync sync, BlockSync clusterSync,
                   Path workDir, FrameListener listener, OutlierSettings outlierSettings) {
        if (sync.blocks() != settings.tasks() || sync.block() != task) {
            throw new IllegalArgumentException("task " + task + " of " + settings.tasks() + " but the collectives have "
                    + "block " + sync.block() + " of " + sync.blocks());
        }
        if (rows.capacity() != settings.capacity()) {
            throw new IllegalArgumentException("row stores of capacity " + rows.capacity() + " for a map of capacity "
                    + settings.capacity());
        }
        this.settings = settings;
        this.task = task;
        this.rows = rows;
        this.ownBlock = block -> LiveMapSettings.ownerOfBlock(block, settings.tasks()) == task;
        this.sync = new TimingBlockSync(sync);
        this.owned = settings.owned(task);
        this.firstMissing = settings.nextOwnedId(task, -1);
        this.smacof = new TriangleSmacof(settings.capacity(), rows, this.sync, owned);
        int capacity = settings.capacity();
        this.placement = new Placement(TriangleSmacof.DIM);
        this.vectorPlacement = Placement.VECTOR_AVAILABLE
                ? new Placement(TriangleSmacof.DIM, Placement.Options.DEFAULT, true) : null;
        this.alignment = new RigidAlignment();
        this.listener = listener;
        PwcSettings pwc = PwcSettings.builder().maxClusters(settings.maxClusters()).build();
        this.clusters = clusterSync != null ? ClusterTracker.distributed(rows, settings, task, clusterSync, pwc)
                : task == 0 ? ClusterTracker.onTaskZero(rows, capacity, pwc) : null;
        this.outliers = task == 0 && clusters != null && outlierSettings.enabled()
                ? new OutlierTracker(outlierSettings, capacity, settings.maxClusters()) : null;
    }

    /**
     * Resumes from a published frame instead of starting empty: task 0 gives the frame (it keeps the snapshots; the
     * other tasks may sit on hosts that have none), and the first round shares it with every task (one broadcast of
     * its points), takes its points, clusters and frame number, then goes on as usual, placing the rows stored since.
     * Before the first round only.
     */
    public void resume(Snapshot snapshot) {
        if (rounds > 0 || n > 0) {
            throw new IllegalStateException("resume before the first round only");
        }
        if (task != 0) {
            throw new IllegalStateException("task " + task + ": only task 0 resumes from its snapshot; the first round"
                    + " shares it");
        }
        if (snapshot.n() > settings.capacity()) {
            throw new IllegalArgumentException("a frame of " + snapshot.n() + " points for a map of capacity "
                    + settings.capacity());
        }
        resumeFrom = snapshot;
    }

    /**
     * The first round: task 0 broadcasts the frame it resumes from (N = 0 when none), every task takes it: a header
     * (N, frame, stress), then the points straight into {@link #positions}.
     */
    private void shareResume() {
        Snapshot s = resumeFrom;
        resumeFrom = null;
        double[] header = new double[3];
        if (s != null) {
            header[0] = s.n();
            header[1] = s.summary().frame();
            header[2] = s.summary().stress();
        }
        sync.broadcast(header, 3, 0);
        int frameN = (int) header[0];
        if (frameN == 0) {
            return;
        }
        reserve(frameN);
        if (s != null) {
            System.arraycopy(s.points(), 0, positions, 0, TriangleSmacof.DIM * s.n());
        }
        n = frameN;
        sync.broadcast(positions, TriangleSmacof.DIM * n, 0);
        smacof.setPoints(n, positions);
        smacof.distanceRange(n);
        System.arraycopy(positions, 0, previous, 0, TriangleSmacof.DIM * n);
        previousN = n;
        shownN = n;
        frame = (long) header[1];
        annealedAt = n;
        freshAnnealedAt = n;
        stress = header[2];
        annealedStress = stress;
        converged = false;
        if (clusters != null) {
            if (s != null) {
                clusters.preset(s.labels(), n);
                if (outliers != null) {
                    outliers.preset(s.outlierFlags(), n);
                }
            }
            clusters.request(n);
        }
    }

    /** Points in the map. */
    public int points() {
        return n;
    }

    public double stress() {
        return stress;
    }

    /** Rows stored anywhere as the last round counted them (the frames' {@code storedRows}; the same on every task). */
    long storedRowsCounted() {
        return storedRows;
    }

    /** Whether the last round's refinement converged (the same on every task: decided on reduced values). */
    public boolean converged() {
        return converged;
    }

    /**
     * Whether the map has nothing left to do until a row arrives: refined to the batch engine's convergence, no anneal
     * under way or due (the same on every task: decided on reduced values).
     */
    public boolean idle() {
        return polished && !annealing() && !(n > freshAnnealedAt * IDLE_REANNEAL_GROWTH);
    }

    /**
     * Whether only a new row gives this map something to do: it has not started (fewer than {@code initialPoints}
     * rows), or it is {@link #idle()} and its clustering (on the publishing task) has settled. Local: a task's caller
     * may wait longer between rounds then; the others wait for it in the next round's first collective.
     */
    public boolean awaitingRows() {
        return n == 0 || (!revealing() && settled());
    }

    /**
     * Task 0 only, not collective: waits up to {@code timeout} for a DA-PWC run under way to finish and returns the
     * clusters of points {@code 0 .. n-1} (-1: none yet), or null on another task. Distributed, only the rounds start
     * a run and every task must go on with its part: call it while the other tasks' runs are not stopped.
     */
    public int[] awaitClusters(java.time.Duration timeout) throws InterruptedException {
        if (task != 0 || clusters == null) {
            return null;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        clusters.poll(n);
        while (!clusters.settled() && System.nanoTime() < deadline) {
            Thread.sleep(10);
            clusters.poll(n);
        }
        clusters.labelUpTo(n);
        int[] labels = new int[n];
        clusters.copyLabels(n, labels);
        return labels;
    }

    /**
     * The publishing task's frozen clustering for {@link ArrivalPlacer} (one thread other than the rounds'; not
     * collective), or null: another task, or DA-PWC has not finished yet.
     */
    public FrozenClusters frozenClusters() {
        return task != 0 || clusters == null ? null : clusters.frozenForAnotherThread();
    }

    /**
     * The publishing task's frozen DA-VS state, for flagging points placed on arrival ({@link ArrivalPlacer};
     * immutable, any thread), or null: another task, outliers off, or DA-VS has not finished yet.
     */
    public FrozenSponge frozenOutliers() {
        return outliers == null ? null : outliers.frozen();
    }

    /**
     * The lowest id whose row this task may still read among the rows it does not own: on task 0, the labelling of
     * points from DA-PWC's frozen state ({@link ClusterTracker#rowsNeededFrom}); never above the map's points (the
     * rounds place the points after them). Across hosts, the publishing host keeps copies of the other hosts' rows
     * from here on only. Rounds' thread.
     */
    public int rowsNeededFrom() {
        return task != 0 || clusters == null ? n : Math.min(n, clusters.rowsNeededFrom());
    }

    /**
     * Unmaps the blocks of rows this task does not own whose every row is below {@code id} (no longer read here:
     * {@link #rowsNeededFrom}), so that their files, once deleted, give their disk space back. Not while DA-PWC runs
     * on task 0 alone (its thread reads every row). Rounds' thread; returns the blocks unmapped.
     */
    public int releaseOthersRowsBelow(int id) {
        if (clusters != null && !clusters.distributed()) {
            return 0;
        }
        return rows.releaseBelow(id, ownBlock);
    }

    /** Copies the map's points {@code 0 .. n-1} row-major into {@code out}. */
    public void copyPoints(double[] out) {
        smacof.copyPoints(n, out);
    }

    /**
     * Runs one round; returns the last frame it published (task 0) or built (others: its figures only), or null when
     * there was nothing to show (no new point and a converged map, or fewer than {@code initialPoints} rows).
     * A round with new points publishes them as soon as they are placed, before it refines, and publishes the refined
     * map at its end unless a row is already waiting (then the next round's placement frame carries it). Collective.
     */
    public Frame round() {
        segmentStart = System.nanoTime();
        rounds++;
        if (rounds == 1) {
            shareResume();
        }
        int epoch = agreeOnEpoch();
        long stored = storedRows();
        storedRows = stored;
        boolean cold = false;
        boolean grew = epoch > n && n > 0;
        Frame shown = null;
        endedForRows = false;
        if (n == 0) {
            if (epoch < settings.initialPoints()) {
                collectiveAtFrame = sync.nanos(); // the first frame's times start with its anneal
                return null;
            }
            reserve(epoch);
            n = epoch;
            cold = true;
            initialLayout();
            // the first frame shows an annealed map: a cold start's early temperatures collapse it towards a point
            startAnnealing(true);
            while (annealing()) {
                annealSteps();
            }
            endedForRows = false;
            unpublished = true;
            frameAnnealed = true;
        } else if (epoch > n) {
            if (shadow) {
                abandonShadow(); // the rows come first: they are placed in the map the viewers know
            }
            long t0 = System.nanoTime();
            reserve(epoch);
            place(epoch);
            n = epoch;
            placementNanos += System.nanoTime() - t0;
            // shown at once: refining first would add an iteration (15-30 ms at N = 4000, 4 tasks on 2 cores) to every
            // new point's wait; not while an anneal runs (below)
            if (!annealing()) {
                shown = publish(stored, true);
            }
            if (!annealing() && !revealing() && n >= annealedAt * settings.reannealGrowth()) {
                startAnnealing(false);
            }
        }
        quietRounds = grew || cold ? 0 : quietRounds + 1;
        int iterations = 0;
        if (revealing()) {
            if (++revealWait >= REVEAL_ROUNDS) {
                revealWait = 0;
                revealStep();
            }
        } else if (annealing()) {
            frameAnnealed = true;
            iterations = annealSteps();
        } else if (cold) {
            iterations = 1; // annealed above
        } else if (converged && !grew && !polished) {
            iterations = polish();
        } else if (polished && quietRounds >= QUIET_ROUNDS && n > freshAnnealedAt * IDLE_REANNEAL_GROWTH) {
            // the stream has paused: spend the time on what a batch run does, a fresh anneal of everything, kept only
            // if it ends lower
            startShadowAnneal();
            iterations = annealSteps();
        } else if (!(converged && !grew)) {
            iterations = refine();
            if (stress > annealedStress * (1 + settings.reannealDegradation())) {
                startAnnealing(false); // from the next round on
            }
        }
        if (iterations > 0) {
            unpublished = true;
        }
        if (clusters != null && !annealing() && n > clusters.requested()
                && (polished || n >= CLUSTER_GROWTH * Math.max(1, clusters.requested()))) {
            // new points get frozen-state clusters at once; a fresh DA-PWC run, which can split off a cluster whose
            // points came late, follows after each anneal, whenever the map has doubled, and once the stream pauses.
            // DA-PWC at N = 4000 takes 16 s of a core: run after every 25 % of growth it starved the rounds (placement
            // p99 2.2-2.9 s); run on every converged round it ran back to back all stream long (bench stream, blobs:
            // round p50 63 ms, placement p50 353 ms)
            clusters.request(n);
        }
        // decided on reduced values only (the iteration's signal is reduced): every task aligns at the same frames.
        // A warm re-anneal is not shown while it runs: its iterations at T > 0 fit shrunken targets, and the frames
        // showing them moved the map by up to 7.9 % of its radius each (bench stream, blobs, N = 2000 and 4000; the
        // goal is 1 %); its end is shown aligned to the last frame, and the points that arrive meanwhile are shown
        // on arrival (ArrivalPlacer)
        boolean moved = unpublished && !endedForRows && !shadow && !annealing();
        boolean newClusters = clusters != null && clusters.poll(n);
        boolean newOutliers = outliers != null && outliers.poll();
        boolean newlySettled = listener != null && task == 0 && frame > 0 && !shownSettled && settled();
        if (!moved && !newClusters && !newOutliers && !newlySettled) {
            frameWorkNanos += System.nanoTime() - segmentStart;
            return shown;
        }
        // new clusters alone (task 0): the points as last shown with their new labels, not aligned, since the other
        // tasks, which have no clusters, do not align now
        return publish(stored, moved);
    }

    /** Whether a frame published now would say the map has settled (clusters and outliers: the publishing task's). */
    private boolean settled() {
        return idle() && (clusters == null || clusters.settled()) && (outliers == null || outliers.settled());
    }

    private boolean revealing() {
        return revealFrames > 0;
    }

    /**
     * Shows a re-anneal's layout over several frames when it moved the map by more than two frames' worth
     * ({@link #FRAME_MOVEMENT}): the map goes from the last frame's points to the new layout, aligned to them, in
     * steps of {@code FRAME_MOVEMENT} each (more where a frame is pulled down: up to 1.1 % between two SMACOF minima
     * at N = 3000), one every {@link #REVEAL_ROUNDS} rounds; points placed meanwhile
     * are placed against the map as it stands and left where they are put. A full anneal of a paused map (uniform
     * 8-D, N = 4000) moved it by 27 % of its radius in one frame; the goal is 1 %. No frame is shown with a stress
     * above the larger of the two layouts' ({@link RevealPath}: straight frames at 32K went 60 % above both), and the
     * reveal takes no more passes over the triangle than the change it shows took since the last frame (a reveal of
     * 150 frames took two minutes at 32K), or than measuring each frame once takes, if that is more. Every
     * task computes the same steps from the same points and reduced stresses, so all keep one map.
     */
    private void startReveal() {
        startReveal(smacof.passes() - passesAtShown);
    }

    /** {@link #startReveal()} within {@code passBudget} passes over the triangle. */
    private void startReveal(long passBudget) {
        if (previousN == 0) {
            return;
        }
        smacof.copyPoints(n, positions);
        alignment.align(previous, positions, previousN, n);
        double moved = alignment.drift();
        if (!(moved > 2 * FRAME_MOVEMENT)) {
            return; // shown in one frame, aligned as usual
        }
        int limit = TriangleSmacof.DIM * settings.capacity();
        // every point of the new layout: points placed since the last frame start at their new place (RevealPath)
        revealFrom = GrowingArrays.atLeast(revealFrom == null ? NO_POINTS : revealFrom, TriangleSmacof.DIM * n, limit);
        revealTo = GrowingArrays.atLeast(revealTo == null ? NO_POINTS : revealTo, TriangleSmacof.DIM * n, limit);
        System.arraycopy(previous, 0, revealFrom, 0, TriangleSmacof.DIM * previousN);
        System.arraycopy(positions, 0, revealTo, 0, TriangleSmacof.DIM * n);
        // points new since the last frame are shown where the new layout puts them, from the first frame on
        System.arraycopy(positions, TriangleSmacof.DIM * previousN, revealFrom, TriangleSmacof.DIM * previousN,
                TriangleSmacof.DIM * (n - previousN));
        revealToN = n;
        int frames = (int) Math.min(MAX_REVEAL_FRAMES, Math.ceil(moved / FRAME_MOVEMENT));
        // at least the passes that measure each frame once (and the ends, and the denominator when n changed): a
        // change cheaper than that (a refinement step that moved the map by 1-2 %, a re-placement, which takes no
        // pass) is shown in frames of FRAME_MOVEMENT still, not at once (with the change's passes alone, LiveMapTest
        // failed once on a frame that moved the map by 2.0 %; the goal is 1 %). At 100K such a reveal costs more than
        // the step it shows: moved / FRAME_MOVEMENT + 3 passes
        long budget = Math.max(passBudget, frames + 3);
        if (!revealPath.start(smacof, revealFrom, revealTo, n, frames, budget)) {
            return; // shown in one frame
        }
        revealFrames = frames;
        revealFrame = 0;
        revealWait = 0;
        revealStep(); // the first step is this round's frame
    }

    /** The map one step further from the last frame's points to the new layout; the last step ends the reveal. */
    private void revealStep() {
        revealFrame++;
        boolean last = revealPath.step(smacof, revealFrom, revealTo, positions);
        if (last) {
            revealFrames = 0; // the new layout itself: refined from the next round on
            refinedLast = Double.NaN;
            converged = false;
            polished = false;
        }
        if (last && n > revealToN) {
            // the points that came during the reveal were placed against the map half-way; placed again against the
            // new layout, so that refinement does not start by moving them (and the map) in large steps: one
            // iteration after a reveal moved the map by 1.5-1.9 %, and with each such step revealed in turn the map
            // spent most of a stream revealing (bench stream, uniform, mmap: stress 1.0116x batch). Their move is
            // revealed too when it moves the map by more than two frames' worth.
            long t0 = System.nanoTime();
            place(revealToN, n);
            placementNanos += System.nanoTime() - t0;
            revealFrame = 0;
            // with what the reveal left of its budget: the re-placement took no pass, and the two reveals together
            // take no more than the change they show (with none, 319 points re-placed at N = 956 moved the map by
            // 8.5 % in one frame: bench live-rounds, uniform, N = 3000, 2 tasks)
            startReveal(revealPath.passesLeft(smacof));
            if (revealing()) {
                return; // its first step is this round's frame
            }
            stress = smacof.stress(n);
        } else {
            // measured over the reveal's points (points placed since it began sit where they were put, outside it)
            stress = revealPath.frameStress();
        }
        unpublished = true;
    }

    /**
     * The first id not stored anywhere: each task's first missing owned id, reduced by minimum. The same allreduce
     * carries task 0's decision to start a distributed DA-PWC run ({@link ClusterTracker#startCommand}; the others
     * send "none", the largest value), so every task starts the same run in the same round, at no extra exchange.
     */
    private int agreeOnEpoch() {
        int capacity = settings.capacity();
        while (firstMissing < capacity && rows.isStored(firstMissing)) {
            firstMissing = settings.nextOwnedId(task, firstMissing);
            storedBeforeMissing++;
        }
        ownedStored = storedBeforeMissing + countStoredAhead();
        int command = clusters == null ? -1 : clusters.startCommand();
        reduce[0] = firstMissing;
        reduce[1] = command < 0 ? Double.MAX_VALUE : command;
        sync.allreduceMin(reduce, 2);
        if (reduce[1] != Double.MAX_VALUE && clusters != null) {
            clusters.start((int) reduce[1]);
        }
        return (int) reduce[0];
    }

    /**
     * This task's stored rows above {@link #firstMissing}, for the frames' count of stored rows (no decision depends
     * on it). Rows arrive mostly in id order, so a round looks at every owned block up to the frontier, the first
     * owned block after the highest one present, and at {@link #SWEEP_BLOCKS} of the absent blocks beyond it in turn
     * (a block once present stays so, and its marker bytes cost no system call): a row stored further ahead than the
     * frontier is counted once the sweep reaches its block, within (capacity / blockRows / tasks) / SWEEP_BLOCKS
     * rounds, and from then on its block moves the frontier.
     */
    private int countStoredAhead() {
        int capacity = settings.capacity();
        int blockRows = settings.blockRows();
        int stored = 0;
        int id = settings.nextOwnedId(task, firstMissing);
        // firstMissing's block (present, or the next to be made) and the first owned block after the last present
        int frontier = Math.max(firstMissing / blockRows,
                settings.nextOwnedId(task, (lastPresentBlock + 1) * blockRows - 1) / blockRows);
        while (id < capacity && id / blockRows <= frontier) {
            int block = id / blockRows;
            int end = Math.min(capacity, (block + 1) * blockRows);
            if (rows.hasBlock(block)) {
                lastPresentBlock = Math.max(lastPresentBlock, block);
                frontier = Math.max(frontier, settings.nextOwnedId(task, end - 1) / blockRows);
                for (; id < end; id++) {
                    if (rows.isStored(id)) {
                        stored++;
                    }
                }
            }
            id = settings.nextOwnedId(task, end - 1);
        }
        // the sweep: absent blocks beyond the frontier, a few a round, round-robin
        int beyond = settings.nextOwnedId(task, Math.min(capacity, (frontier + 1) * blockRows) - 1);
        if (beyond >= capacity) {
            return stored;
        }
        int from = Math.max(sweepBlock * blockRows - 1, beyond - 1);
        for (int looked = 0; looked < SWEEP_BLOCKS; looked++) {
            int next = settings.nextOwnedId(task, from);
            if (next >= capacity) {
                next = beyond; // wrap around to the frontier
            }
            int block = next / blockRows;
            if (rows.hasBlock(block)) {
                lastPresentBlock = Math.max(lastPresentBlock, block); // counted from the next round on
            }
            from = Math.min(capacity, (block + 1) * blockRows) - 1;
            sweepBlock = block + 1;
        }
        return stored;
    }

    /** Whether this task's first missing row has been stored since the round began (cheap: one marker byte). */
    private boolean newRowsWaiting() {
        return firstMissing < settings.capacity() && rows.isStored(firstMissing);
    }

    /**
     * Grows the arrays sized by the points to hold {@code points} (each at least doubling, so a growing map copies
     * each point a few times in all), before the round's placement and iterations, which then allocate nothing.
     */
    private void reserve(int points) {
        int dim = TriangleSmacof.DIM;
        int limit = dim * settings.capacity();
        smacof.reserve(points);
        placed = GrowingArrays.atLeast(placed, dim * points, limit);
        positions = GrowingArrays.atLeast(positions, dim * points, limit);
        previous = GrowingArrays.atLeast(previous, dim * points, limit);
        row = GrowingArrays.atLeast(row, points, settings.capacity());
    }

    private long storedRows() {
        reduce[1] = ownedStored;
        reduce[0] = reduce[1];
        sync.allreduceSum(reduce, 1);
        return (long) reduce[0];
    }

    private void initialLayout() {
        Random random = new Random(settings.seed());
        for (int i = 0; i < n; i++) {
            smacof.setPoint(i, random.nextDouble(), random.nextDouble(), random.nextDouble());
        }
    }

    private boolean annealing() {
        return !Double.isNaN(annealTemperature);
    }

    /**
     * Starts deterministic annealing over the current points: from the top temperature (cold start) or a fraction of
     * it (warm: the layout is good already) down to zero, each temperature until the stress stops falling. It goes on
     * over the next rounds ({@link #annealSteps}), so new points are still placed, and seen, while it runs.
     */
    private void startAnnealing(boolean cold) {
        double[] range = smacof.distanceRange(n);
        double tMax = range[0] / SQRT_2L;
        minTemperature = settings.tminFactor() * range[1] / SQRT_2L;
        if (cold || Double.isNaN(topTemperature)) {
            topTemperature = settings.alpha() * tMax;
        }
        double t = cold ? topTemperature : Math.max(minTemperature, WARM_START * topTemperature);
        annealTemperature = t < minTemperature ? 0 : t;
        annealLast = Double.NaN;
        annealIterationsHere = 0;
        annealingFromTop = cold;
        converged = false;
    }

    /**
     * Up to K iterations of the annealing schedule; a round with a new row waiting ends after
     * {@link #MIN_ANNEAL_ITERATIONS}. Finishes the schedule when the last temperature (zero) has converged.
     */
    private int annealSteps() {
        refinedLast = Double.NaN;
        int it = 0;
        double s = Double.NaN;
        while (it < settings.iterationsPerRound()) {
            s = smacof.iterate(n, SQRT_2L * annealTemperature, rowsWaiting);
            it++;
            annealIterationsHere++;
            boolean done = (!Double.isNaN(annealLast) && !(annealLast - s >= ANNEAL_THRESHOLD))
                    || annealIterationsHere >= ANNEAL_ITERATIONS_PER_TEMPERATURE;
            annealLast = s;
            if (done) {
                if (annealTemperature == 0) {
                    finishAnnealing();
                    return it;
                }
                annealTemperature *= settings.alpha();
                if (annealTemperature < minTemperature) {
                    annealTemperature = 0;
                }
                annealLast = Double.NaN;
                annealIterationsHere = 0;
            }
            if (it >= MIN_ANNEAL_ITERATIONS && smacof.signal() > 0) {
                endedForRows = true;
                break;
            }
        }
        temperature = annealTemperature;
        stress = s; // against the shifted targets while T > 0: the map is not final yet
        return it;
    }

    /**
     * A full anneal (from the top temperature, as a batch run) of the current points, out of sight: no frame shows it
     * until it ends, and it is kept only if it ends with a lower stress (uniform 8-D data streamed into 3-D ended
     * 1.010x batch DA-MDS's stress after a warm re-anneal; a full one published as it ran reached 1.008x but moved the
     * map by up to 12 map radii in its frames). A row arriving meanwhile abandons it.
     */
    private void startShadowAnneal() {
        shadowSaved = GrowingArrays.atLeast(shadowSaved == null ? NO_POINTS : shadowSaved, TriangleSmacof.DIM * n,
                TriangleSmacof.DIM * settings.capacity());
        smacof.copyPoints(n, shadowSaved);
        shadowStress = stress;
        shadow = true;
        // from the seeded random layout a batch run starts from, not the current one: the anneal's top temperature
        // does not erase where it starts, and the streamed layout's minimum is the one this anneal is to improve on
        initialLayout();
        startAnnealing(true);
    }

    /** Puts back the map the last frame showed, as it was before the shadow anneal. */
    private void abandonShadow() {
        refinedLast = Double.NaN;
        smacof.setPoints(n, shadowSaved);
        annealTemperature = Double.NaN;
        temperature = 0;
        stress = shadowStress;
        converged = true;
        shadow = false;
        unpublished = false;
        frameAnnealed = false;
    }

    private void finishAnnealing() {
        annealTemperature = Double.NaN;
        temperature = 0;
        stress = smacof.stress(n);
        if (shadow) {
            if (!(stress < shadowStress)) {
                abandonShadow();
                annealedAt = n; // tried: not again before the map grows
                freshAnnealedAt = n;
                annealedStress = stress;
                unpublished = true; // a frame says the map has settled (it shows the same points)
                return;
            }
            shadow = false;
            polished = false; // the new layout is refined to convergence before the map counts as settled
        }
        annealedStress = stress;
        annealedAt = n;
        if (annealingFromTop) {
            freshAnnealedAt = n;
        }
        converged = true;
        if (clusters != null) {
            clusters.request(n);
        }
        startReveal();
    }

    /** Places points {@code n .. epoch-1}: each owner from its row against the current map, then one allreduce. */
    private void place(int epoch) {
        place(n, epoch);
    }

    /**
     * Places points {@code from .. to-1} against points {@code 0 .. from-1} as the map holds them: each owner from
     * its row, then one allreduce. Collective.
     */
    private void place(int from, int to) {
        refinedLast = Double.NaN;
        int count = to - from;
        Arrays.fill(placed, 0, TriangleSmacof.DIM * count, 0);
        smacof.copyPoints(from, positions);
        Placement placement = vectorPlacement != null && from >= VECTOR_PLACEMENT_FROM ? vectorPlacement
                : this.placement;
        int[] ids = owned.ids(); // listed up to the epoch (reserve)
        for (int k = 0; k < owned.count() && ids[k] < to; k++) {
            int id = ids[k];
            if (id < from) {
                continue;
            }
            rows.copy(id, 0, from, row);
            try {
                placement.place(positions, from, row, null, one, 0);
            } catch (IllegalArgumentException noDistance) {
                // every distance to the map is missing: nothing says where it goes; refinement will move it
                centroid(one);
            }
            int o = TriangleSmacof.DIM * (id - from);
            placed[o] = one[0];
            placed[o + 1] = one[1];
            placed[o + 2] = one[2];
        }
        sync.allreduceSum(placed, TriangleSmacof.DIM * count);
        for (int i = 0; i < count; i++) {
            smacof.setPoint(from + i, placed[3 * i], placed[3 * i + 1], placed[3 * i + 2]);
        }
        converged = false;
    }

    private void centroid(double[] out) {
        Arrays.fill(out, 0);
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < TriangleSmacof.DIM; k++) {
                out[k] += positions[TriangleSmacof.DIM * i + k] / n;
            }
        }
    }

    /** Up to K iterations at the final temperature; stops once the stress changes by less than the threshold. */
    private int refine() {
        double last = refinedLast;
        boolean waiting = false;
        int it = 0;
        converged = false;
        polished = false;
        while (it < settings.iterationsPerRound()) {
            // each task says, in the iteration's own allreduce, whether its next row has arrived: then the round ends
            // early, so a new point waits one iteration for its placement, not a whole round
            double s = smacof.iterate(n, 0, rowsWaiting);
            it++;
            boolean small = !Double.isNaN(last) && Math.abs(last - s) <= settings.threshold() * Math.max(s, 1e-12);
            last = s;
            if (small) {
                converged = true;
                break;
            }
            if (smacof.signal() > 0) {
                waiting = true;
                endedForRows = true;
                break;
            }
            if (movedAFrame()) {
                waiting = true; // shown now; the next round goes on from here
                break;
            }
        }
        refinedLast = last;
        temperature = 0;
        // with rows waiting (or the refinement going on next round), the stress of the last iteration (of the layout
        // before its update) stands in for a full pass that costs as much as an iteration: the next round comes at
        // once and measures again
        stress = waiting ? last : smacof.stress(n);
        return it;
    }

    /**
     * With no new row, refinement goes on to the batch engine's own convergence (absolute stress change below 1e-6),
     * so that a map the stream has stopped feeding ends where batch DA-MDS would; a row arriving ends it.
     */
    private int polish() {
        // an iteration returns the stress of the layout it starts from: the first one's is the refined layout's own,
        // so only the second compares two layouts; a polish that goes on from the last round compares from the first
        double last = polishing ? refinedLast : Double.NaN;
        polishing = false;
        int it = 0;
        while (it < settings.iterationsPerRound()) {
            double s = smacof.iterate(n, 0, rowsWaiting);
            it++;
            boolean done = !Double.isNaN(last) && !(Math.abs(last - s) >= ANNEAL_THRESHOLD);
            last = s;
            if (done) {
                polished = true;
                break;
            }
            if (smacof.signal() > 0) {
                endedForRows = true;
                break;
            }
            if (movedAFrame()) {
                refinedLast = last;
                polishing = true;
                stress = last; // as in refine(): shown now, polished further next round
                return it;
            }
        }
        refinedLast = last;
        stress = smacof.stress(n);
        return it;
    }

    /**
     * Whether refinement has moved the shown points by {@link #FRAME_MOVEMENT}, measured as the next frame's drift
     * would be (O(N), against an iteration's O(N^2 / P)). Every task holds the same points, so every task decides
     * the same without an exchange.
     */
    private boolean movedAFrame() {
        if (previousN == 0) {
            return false;
        }
        smacof.copyPoints(previousN, positions);
        alignment.fit(previous, positions, previousN);
        return alignment.drift() > FRAME_MOVEMENT;
    }

    /** Whether the map has moved by more than two frames' worth since the last frame (as {@link #movedAFrame}). */
    private boolean movedTwoFrames() {
        if (previousN == 0) {
            return false;
        }
        smacof.copyPoints(previousN, positions);
        alignment.fit(previous, positions, previousN);
        return alignment.drift() > 2 * FRAME_MOVEMENT;
    }

    /**
     * A frame of a reveal: its points are aligned to the last frame already (a rigid fit would move them off the
     * straight path); the drift is measured as usual. The reveal's last frame ends its use.
     */
    private double showAsIs() {
        smacof.copyPoints(n, positions);
        alignment.fit(previous, positions, previousN);
        double drift = alignment.drift();
        System.arraycopy(positions, 0, previous, 0, TriangleSmacof.DIM * n);
        previousN = n;
        if (!revealing()) {
            revealFrame = 0;
        }
        return drift;
    }

    /** Aligns the map to the previous frame; every task does the same, so all keep the same map. */
    private double align() {
        smacof.copyPoints(n, positions);
        double drift = 0;
        if (previousN > 0) {
            alignment.align(previous, positions, previousN, n);
            drift = alignment.drift();
            smacof.setPoints(n, positions);
        }
        System.arraycopy(positions, 0, previous, 0, TriangleSmacof.DIM * n);
        previousN = n;
        return drift;
    }

    /**
     * Aligns the map to the previous frame (every task does, so all keep the same map) and publishes it; without
     * {@code aligned}, the points as last shown. The frame's times and iterations cover the work since the previous
     * frame.
     */
    private Frame publish(long stored, boolean aligned) {
        if (aligned && revealFrame == 0 && movedTwoFrames()) {
            // a step no frame may take: refinement cuts its frames at FRAME_MOVEMENT, but after an iteration, and one
            // iteration moved the map by 1.1-1.85 % (bench stream, uniform, N = 4000 after a reveal, whose points
            // placed meanwhile sit where they were put): the layout reached is revealed like a re-anneal's
            startReveal();
        }
        double drift = !aligned ? 0 : revealFrame > 0 ? showAsIs() : align();
        frame++;
        // only the publishing task's frames carry the points and labels (copies, for the publisher thread); the
        // others' frames are their figures only, so a round there copies nothing
        boolean publishes = listener != null && task == 0;
        int[] labels = publishes ? new int[n] : NO_LABELS;
        int k = 0;
        if (clusters != null) {
            clusters.poll(n);
            clusters.labelUpTo(n);
            if (publishes) {
                clusters.copyLabels(n, labels);
            }
            k = clusters.clusters();
        } else {
            Arrays.fill(labels, -1);
        }
        boolean[] outlierFlags = publishes ? new boolean[n] : NO_FLAGS;
        int outlierCount = outliers == null ? 0 : flagOutliers(publishes ? outlierFlags : null);
        long now = System.nanoTime();
        long nanos = frameWorkNanos + now - segmentStart;
        long collective = sync.nanos() - collectiveAtFrame;
        Frame f = new Frame(frame, n, publishes ? Arrays.copyOf(positions, TriangleSmacof.DIM * n)
                : NO_POINTS, labels, outlierFlags, stress, temperature, k, outlierCount, drift, n - shownN,
                (int) (smacof.iterations() - iterationsAtFrame), frameAnnealed,
                nanos / 1e9, (nanos - collective) / 1e9, collective / 1e9, placementNanos / 1e9,
                Math.max(0, stored - n), stored, System.currentTimeMillis(),
                settled());
        shownSettled = f.settled();
        shownN = n;
        segmentStart = now;
        frameWorkNanos = 0;
        placementNanos = 0;
        collectiveAtFrame = sync.nanos();
        iterationsAtFrame = smacof.iterations();
        frameAnnealed = false;
        unpublished &= !aligned;
        if (aligned) {
            passesAtShown = smacof.passes();
        }
        if (listener != null) {
            listener.onFrame(f);
        }
        return f;
    }

    /**
     * Task 0, while publishing a frame of {@link #positions}: asks for DA-VS on it when it is the first to show a
     * DA-PWC run's clusters (a copy of its points and labels: O(N) once a run), then flags its points not flagged
     * yet from the frozen DA-VS state (O(K) a point). Copies the flags into {@code out} (null: none); returns how many
     * are set.
     */
    private int flagOutliers(boolean[] out) {
        if (clusters.runsTaken() != outliersAskedForRun) {
            outliersAskedForRun = clusters.runsTaken();
            int[] runLabels = new int[n];
            clusters.copyLabels(n, runLabels);
            outliers.request(Arrays.copyOf(positions, TriangleSmacof.DIM * n), runLabels, n);
        }
        outliers.flagUpTo(n, positions);
        return outliers.copyFlags(n, out);
    }

    @Override
    public void close() {
        if (outliers != null) {
            outliers.close();
        }
        if (clusters != null) {
            clusters.close();
        }
        // unmapping under a reading thread crashes the JVM: a DA-PWC run still under way reads these rows (its
        // thread does not stop when asked), so then the mappings go when the reader is collected
        if (clusters == null || !clusters.running()) {
            rows.close();
        }
    }
}
