package io.meridian.stream.live;

import org.apache.storm.tuple.Fields;

/** Component and stream ids of the live map part of the topology. */
public final class MapStreams {
    public static final String MAP = "live-map";
    /** Row store -> map: a row was stored (a notification; the map reads the row from the row store files). */
    public static final String STORED = "stored";
    public static final String ID = "id";
    public static final String PUBLISHED_MS = "publishedMs";
    public static final String STORED_MS = "storedMs";
    public static final Fields STORED_FIELDS = new Fields(ID, PUBLISHED_MS, STORED_MS);

    /** Metrics v2 names of the live map (gauges unless said otherwise). */
    public static final String FRAME = "meridian.map.frame";
    public static final String POINTS = "meridian.map.points";
    public static final String STRESS = "meridian.map.stress";
    public static final String TEMPERATURE = "meridian.map.temperature";
    public static final String CLUSTERS = "meridian.map.clusters";
    public static final String DRIFT = "meridian.map.drift";
    public static final String STALENESS = "meridian.map.staleness";
    /** Histograms, milliseconds. */
    public static final String ROUND_MS = "meridian.map.roundMs";
    public static final String COMPUTE_MS = "meridian.map.computeMs";
    public static final String COLLECTIVE_MS = "meridian.map.collectiveMs";
    /** Per frame, of the collective time: waiting for other tasks, the host's shared memory level, MPI between hosts. */
    public static final String COLLECTIVE_WAIT_MS = "meridian.map.collectiveWaitMs";
    public static final String COLLECTIVE_SHM_MS = "meridian.map.collectiveSharedMemoryMs";
    public static final String COLLECTIVE_INTER_HOST_MS = "meridian.map.collectiveInterHostMs";
    public static final String PLACEMENT_MS = "meridian.map.placementLatencyMs";
    public static final String PUBLISHED_TO_FRAME_MS = "meridian.map.publishedToFrameMs";
    /** Counters. */
    public static final String PLACED = "meridian.map.placed";
    public static final String ROUNDS = "meridian.map.rounds";
    public static final String FAILURES = "meridian.map.collectiveFailures";

    private MapStreams() {
    }
}
