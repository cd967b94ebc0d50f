package io.meridian.collective;

/** The operation codes members publish in their slots, so the leader knows what to run and can check agreement. */
final class Ops {
    static final int ALLGATHERV = 1, ALLREDUCE_DOUBLE = 2, ALLREDUCE_LONG = 3, BROADCAST = 4, BARRIER = 5, ALLGATHERV_SUM = 6;
    private static final ReduceOp[] REDUCE_OPS = ReduceOp.values();

    private Ops() {
    }

    static int code(int kind, ReduceOp op) {
        return kind * 8 + (op == null ? 0 : op.ordinal());
    }

    static int kind(int code) {
        return code / 8;
    }

    static ReduceOp reduceOp(int code) {
        return REDUCE_OPS[code % 8];
    }

    static String name(int code) {
        return switch (kind(code)) {
            case ALLGATHERV -> "allgatherv";
            case ALLGATHERV_SUM -> "allgatherv with sum";
            case ALLREDUCE_DOUBLE -> "allreduce(double, " + reduceOp(code) + ")";
            case ALLREDUCE_LONG -> "allreduce(long, " + reduceOp(code) + ")";
            case BROADCAST -> "broadcast";
            case BARRIER -> "barrier";
            default -> "op#" + code;
        };
    }
}
