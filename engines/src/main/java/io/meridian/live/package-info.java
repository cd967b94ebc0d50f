/**
 * The numerics of a live map: a 3-D DA-MDS map that grows as new points stream in, with DA-PWC clusters. No Storm
 * types; each class works on flat row-major arrays it is handed and allocates nothing per call.
 *
 * <ul>
 *   <li>{@link io.meridian.live.Placement} places a new point with the map held fixed (SPIDAL's MI-MDS over the whole
 *       row);</li>
 *   <li>{@link io.meridian.live.FrozenClusters} gives it a cluster from DA-PWC's frozen final state;</li>
 *   <li>{@link io.meridian.live.RigidAlignment} lays each refined frame over the previous one (Procrustes) and
 *       measures the drift that is left, so refinement can stop when the map would move for little gain.</li>
 * </ul>
 */
package io.meridian.live;
