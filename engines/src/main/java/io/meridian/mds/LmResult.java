package io.meridian.mds;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * What an LM run ({@link LmMds}) produced: the layout (row-major N x dim) and its figures. {@code normalizedStress}
 * is the one DA-MDS reports ({@link MdsResult#normalizedStress}), so the two compare; {@code secondsToFinal} is the
 * time from the start to the last accepted step (the one that reached the final stress), {@code secondsToWithin1Percent}
 * to the first iteration whose stress was within 1.01x of the final one.
 */
public record LmResult(int n, int dim, double[] points, double normalizedStress, double startStress, double chisq,
                       int chisqNorm, long iterations, long rejectedSteps, long cgIterations, double finalQ,
                       String stopReason, double seconds, double secondsToFinal,
                       double secondsToWithin1Percent) {

    /** {@code id<TAB>x<TAB>y<TAB>z}, one line per point, ids from 0: the same file DA-MDS writes. */
    public void writePoints(Path file) throws IOException {
        new MdsResult(n, dim, points, normalizedStress, Double.NaN, 0, iterations, cgIterations, seconds, 0, 0,
                false, Double.NaN, Double.NaN, 0).writePoints(file);
    }

    public String summaryJson() {
        return String.format(Locale.ROOT,
                "{\"n\":%d,\"dim\":%d,\"solver\":\"lm\",\"normalizedStress\":%s,\"startStress\":%s,\"chisq\":%s,"
                        + "\"chisqNorm\":%d,\"iterations\":%d,\"rejectedSteps\":%d,\"cgIterations\":%d,"
                        + "\"finalQ\":%s,\"stopReason\":\"%s\",\"seconds\":%.3f,\"secondsToFinalStress\":%.3f,"
                        + "\"secondsToWithin1PercentOfFinalStress\":%.3f}",
                n, dim, num(normalizedStress), num(startStress), num(chisq), chisqNorm, iterations, rejectedSteps,
                cgIterations, num(finalQ), stopReason, seconds, secondsToFinal, secondsToWithin1Percent);
    }

    private static String num(double v) {
        return Double.isFinite(v) ? Double.toString(v) : "null";
    }

    public void writeSummary(Path file) throws IOException {
        Files.writeString(file, summaryJson() + "\n");
    }
}
