package io.meridian.mds;

/**
 * When a kernel may run its explicit-vector tile pass ({@link TileVectors#unit3}): only once C2 has compiled it
 * (interpreted or C1-compiled, every vector operation allocates). Until then each pass warms it up a little
 * ({@link TileVectors#warmUp}) and the kernel runs the scalar twin ({@link TileVectors#unit3Lanes}, the same bits);
 * after {@link #WARM_UP_PASSES} passes without success it gives up and the scalar pass stays. One gate per kernel,
 * each with its own warm-up scratch (kernels may run in threads). Without the vector module it is always closed and
 * never loads {@link TileVectors}.
 */
final class VectorPassGate {
    /** SMACOF passes in which to wait for the vector pass to be compiled. */
    static final int WARM_UP_PASSES = 400;

    private final Object scratch;
    private int passesLeft = WARM_UP_PASSES;

    VectorPassGate(boolean vector) {
        this.scratch = vector ? new TileVectors.Scratch() : null;
    }

    /** Whether this kernel has the vector pass at all. */
    boolean available() {
        return scratch != null;
    }

    /** The warm-up scratch, for the scalar twin of the vector pass. */
    TileVectors.Scratch scratch() {
        return (TileVectors.Scratch) scratch;
    }

    /** Whether this pass may run the vector form (warming it up a little if not yet). */
    boolean open() {
        if (scratch == null || passesLeft == 0) {
            return false;
        }
        if (TileVectors.warmUp((TileVectors.Scratch) scratch)) {
            return true;
        }
        passesLeft--;
        return false;
    }
}
