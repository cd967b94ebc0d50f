package io.meridian.collective;

/** Element-wise reduction of an allreduce. */
public enum ReduceOp {
    SUM, MAX, MIN;

    double apply(double a, double b) {
        return switch (this) {
            case SUM -> a + b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
        };
    }

    long apply(long a, long b) {
        return switch (this) {
            case SUM -> a + b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
        };
    }
}
