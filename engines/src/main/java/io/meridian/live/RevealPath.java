package io.meridian.live;

import io.meridian.mds.TriangleSmacof;

/**
 * The frames that show a large change of the live map ({@code LiveMap.startReveal}): from the map as last shown (S) to
 * the new layout (B, aligned to it), no frame with a stress above max(stress(S), stress(B)), and no more passes over
 * the triangle than the change itself took.
 *
 * <p>Why the straight path is not enough: the stress along it is not convex. A layout whose cluster is mirrored in
 * the other passes, half-way, through the cluster squashed flat; the frames of a re-anneal's reveal at 32K points went
 * up to stress 0.043 before coming back to 0.027, for two minutes (issue 32).
 *
 * <p>What holds instead: each candidate frame, one straight step from the last frame shown towards B, is measured by a
 * SMACOF iteration over the reveal's points ({@link TriangleSmacof#iterate} returns the stress of the layout it starts
 * from, in the pass it needs anyway). A candidate at or below the bound is shown as it is. One above it is not shown:
 * the iteration's Guttman step (which never raises the stress) is measured in turn by the next iteration, and so on,
 * until one measures at or below the bound; that one is shown, aligned rigidly to the last frame (distances, so the
 * stress, unchanged). Every frame shown has thus been measured at or below the bound, or is B. When the budget of
 * passes runs out, B is shown. The later steps go from wherever the last frame stands, so a pulled frame's move is
 * carried, not undone; with fewer passes left than frames, the steps grow so that B is reached within the budget.
 *
 * <p>Every decision is taken on reduced values (the iterations' stresses) and the pass counts every task shares, so
 * all tasks show the same frames. The arrays are the caller's (row-major, n x 3); nothing is allocated per frame.
 */
final class RevealPath {
    private static final int DIM = TriangleSmacof.DIM;

    private final RigidAlignment alignment = new RigidAlignment();
    private int points;
    private double bound;
    private double targetStress;
    private double frameStress;
    private int framesLeft;
    private long budgetEnd;
    private long passesAtStart;
    private int guttmanSteps;
    private int framesShown;
    private long passesAtFrames;

    /**
     * Starts a reveal of {@code frames} frames over points {@code 0 .. points-1}: measures both ends (two passes, each
     * an iteration that leaves the map changed: {@link #step} sets it). Returns false, having done nothing, when the
     * budget does not pay for both ends and one measured frame between them: then B is to be shown at once.
     *
     * @param shown  the map as last shown, aligned; it becomes each frame as it is shown
     * @param target B, aligned to {@code shown}
     */
    boolean start(TriangleSmacof smacof, double[] shown, double[] target, int points, int frames, long passBudget) {
        framesLeft = 0;
        guttmanSteps = 0;
        passesAtStart = smacof.passes();
        budgetEnd = passesAtStart + passBudget;
        // both ends and one frame; the first iteration sums the denominator when n changed since the last
        if (frames < 2 || passBudget < smacof.iterationPasses(points) + 2) {
            return false;
        }
        this.points = points;
        double from = measure(smacof, shown);
        targetStress = measure(smacof, target);
        bound = Math.max(from, targetStress);
        framesLeft = frames;
        framesShown = 0;
        passesAtFrames = smacof.passes();
        return true;
    }

    /** The stress of {@code layout} over the reveal's points: it is set and iterated once (the map is left moved). */
    private double measure(TriangleSmacof smacof, double[] layout) {
        smacof.setPoints(points, layout);
        return smacof.iterate(points, 0);
    }

    /**
     * Sets the map's points {@code 0 .. points-1} to the next frame (copied to {@code shown}); returns whether it is
     * the last, B. {@code scratch} holds {@code points} rows. Collective.
     */
    boolean step(TriangleSmacof smacof, double[] shown, double[] target, double[] scratch) {
        // the passes a frame has taken so far (a measured candidate, and the Guttman steps it needed): the steps are
        // sized so that the passes left reach B at that rate, rather than crawl and leave a jump to the last frame
        long perFrame = framesShown == 0 ? smacof.iterationPasses(points)
                : Math.max(1, (smacof.passes() - passesAtFrames + framesShown - 1) / framesShown);
        int ahead = (int) Math.min(framesLeft, passesLeft(smacof) / perFrame + 1);
        int length = DIM * points;
        if (ahead > 1) {
            double f = 1.0 / ahead;
            for (int k = 0; k < length; k++) {
                scratch[k] = shown[k] + f * (target[k] - shown[k]);
            }
            double s = measure(smacof, scratch);
            boolean pulled = false;
            while (!(s <= bound) && passesLeft(smacof) >= smacof.iterationPasses(points)) {
                smacof.copyPoints(points, scratch); // the Guttman step, which the next iteration measures
                s = measure(smacof, scratch);
                guttmanSteps++;
                pulled = true;
            }
            if (s <= bound) {
                if (pulled) {
                    // a Guttman step re-centres the map and may turn it: shown without that rigid part
                    alignment.align(shown, scratch, points, points);
                }
                smacof.setPoints(points, scratch);
                System.arraycopy(scratch, 0, shown, 0, length);
                frameStress = s;
                framesLeft--;
                framesShown++;
                return false;
            }
        }
        smacof.setPoints(points, target);
        System.arraycopy(target, 0, shown, 0, length);
        frameStress = targetStress;
        framesLeft = 0;
        return true;
    }

    /** Passes left of the budget the last {@link #start} was given. */
    long passesLeft(TriangleSmacof smacof) {
        return Math.max(0, budgetEnd - smacof.passes());
    }

    /** The stress of the frame {@link #step} set last, over the reveal's points (measured, or B's). */
    double frameStress() {
        return frameStress;
    }

    /** max(stress(S), stress(B)): no frame is shown above it. */
    double bound() {
        return bound;
    }

    /** Passes over the triangle since {@link #start}. */
    long passes(TriangleSmacof smacof) {
        return smacof.passes() - passesAtStart;
    }

    /** Guttman steps taken so far to bring candidate frames under the bound. */
    int guttmanSteps() {
        return guttmanSteps;
    }
}
