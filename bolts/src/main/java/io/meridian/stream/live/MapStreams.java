package io.meridian.stream.live;

import org.apache.storm.tuple.Fields;

/** Component and stream ids of the live map part of the topology. */
public final class MapStreams {
    public static final String MAP = "live-map";
    /**
     * Row store -> map: rows were stored (a notification; the map reads the rows from the row store files), one tuple
     * per batch the row store took: the ids ({@code int[]}), each one's publish time ({@code long[]}, epoch ms), and the
     * time they were stored ({@code long}, epoch ms).
     */
    public static final String STORED = "stored";
    public static final String IDS = "ids";
    public static final String PUBLISHED_MS = "publishedMs";
    public static final String STORED_MS = "storedMs";
    public static final Fields STORED_FIELDS = new Fields(IDS, PUBLISHED_MS, STORED_MS);
    /**
     * Map task 0 -> the row stores on its host, direct, when the map spans hosts: the lowest id whose mirror copy
     * ({@link MapLayout#mirrorStore}) the publishing task may still read ({@code int}). Blocks wholly below it are
     * dropped; sent again every {@link #MIRROR_NEEDED_RESEND_SECS} s, so a restarted row store learns it too.
     */
    public static final String MIRROR_NEEDED = "mirrorNeeded";
    public static final String FROM_ID = "fromId";
    public static final Fields MIRROR_NEEDED_FIELDS = new Fields(FROM_ID);
    public static final int MIRROR_NEEDED_RESEND_SECS = 10;

    /** Metrics v2 names of the live map (gauges unless said otherwise; docs/metrics.md has their Prometheus names). */
    public static final String FRAME = "meridian.map.frame";
    public static final String POINTS = "meridian.map.points";
    public static final String STRESS = "meridian.map.stress";
    public static final String TEMPERATURE = "meridian.map.temperature";
    public static final String CLUSTERS = "meridian.map.clusters";
    /** Points of the last frame flagged as outliers (in DA-VS's sponge, {@code io.meridian.live.MapOutliers}). */
    public static final String OUTLIERS = "meridian.map.outliers";
    public static final String DRIFT = "meridian.map.driftRatio";
    public static final String STALENESS = "meridian.map.stalenessRows";
    /** Time histograms ({@code TimeHistogram}, exported in seconds). */
    public static final String ROUND = "meridian.map.round";
    public static final String COMPUTE = "meridian.map.compute";
    public static final String COLLECTIVE = "meridian.map.collective";
    /** Per frame, of the collective time: waiting for other tasks, the host's shared memory level, MPI between hosts. */
    public static final String COLLECTIVE_WAIT = "meridian.map.collectiveWait";
    public static final String COLLECTIVE_SHM = "meridian.map.collectiveSharedMemory";
    public static final String COLLECTIVE_INTER_HOST = "meridian.map.collectiveInterHost";
    /**
     * Row stored -> its point first published (task 0): placed on arrival against the last frame
     * ({@code ArrivalPlacer}), or in a frame of the rounds, whichever came first.
     */
    public static final String PLACEMENT = "meridian.map.placement";
    /**
     * A row placeable by the rounds (it and every lower id stored: the rounds' map holds a prefix of the ids) -> the
     * rounds' first frame that holds it (task 0): how long the rounds alone would have kept it out of sight.
     */
    public static final String PLACEABLE = "meridian.map.placeable";
    /** Row stored -> the map's task 0 notified of it (the row store's tuple received; task 0). */
    public static final String NOTIFIED = "meridian.map.storedNotified";
    /** Row published to Kafka -> its point first published, as {@link #PLACEMENT} (task 0). */
    public static final String PUBLISHED_TO_FRAME = "meridian.map.publishedToFrame";
    /** Counters. */
    public static final String PLACED = "meridian.map.placed";
    /** Points shown on arrival, ahead of the rounds (task 0). */
    public static final String ARRIVALS = "meridian.map.arrivalsPlaced";
    public static final String ROUNDS = "meridian.map.rounds";
    public static final String FAILURES = "meridian.map.collectiveFailures";
    /** Generations failed because the regions' tmpfs was full (also counted in {@link #FAILURES}). */
    public static final String SHM_FAILURES = "meridian.map.shmFailures";

    private MapStreams() {
    }
}
