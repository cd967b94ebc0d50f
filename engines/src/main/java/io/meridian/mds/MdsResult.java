package io.meridian.mds;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** What a DA-MDS run produced: the configuration (row-major N x dim) and its figures. */
public final class MdsResult {
    public final int n;
    public final int dim;
    public final double[] points;
    public final double normalizedStress;
    public final double spidalStress;
    public final int temperatureLoops;
    public final long smacofIterations;
    public final long cgIterations;
    public final double seconds;
    public final double msPerIteration;
    public final long peakHeapBytes;
    public final boolean closedForm;
    public final double maxDistance;
    public final double minPositiveDistance;
    public final long missingDistances;

    MdsResult(int n, int dim, double[] points, double normalizedStress, double spidalStress, int temperatureLoops,
              long smacofIterations, long cgIterations, double seconds, double msPerIteration, long peakHeapBytes,
              boolean closedForm, double maxDistance, double minPositiveDistance, long missingDistances) {
        this.n = n;
        this.dim = dim;
        this.points = points;
        this.normalizedStress = normalizedStress;
        this.spidalStress = spidalStress;
        this.temperatureLoops = temperatureLoops;
        this.smacofIterations = smacofIterations;
        this.cgIterations = cgIterations;
        this.seconds = seconds;
        this.msPerIteration = msPerIteration;
        this.peakHeapBytes = peakHeapBytes;
        this.closedForm = closedForm;
        this.maxDistance = maxDistance;
        this.minPositiveDistance = minPositiveDistance;
        this.missingDistances = missingDistances;
    }

    public double coordinate(int i, int k) {
        return points[i * dim + k];
    }

    public double distance(int i, int j) {
        double s = 0;
        for (int k = 0; k < dim; k++) {
            double d = points[i * dim + k] - points[j * dim + k];
            s += d * d;
        }
        return Math.sqrt(s);
    }

    /** {@code id<TAB>x<TAB>y<TAB>z}, one line per point, ids from 0. */
    public void writePoints(Path file) throws IOException {
        try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < n; i++) {
                line.setLength(0);
                line.append(i);
                for (int k = 0; k < dim; k++) {
                    line.append('\t').append(points[i * dim + k]);
                }
                out.write(line.append('\n').toString());
            }
        }
    }

    public String summaryJson() {
        return String.format(Locale.ROOT,
                "{\"n\":%d,\"dim\":%d,\"normalizedStress\":%s,\"spidalStress\":%s,\"temperatureLoops\":%d,"
                        + "\"smacofIterations\":%d,\"cgIterations\":%d,\"seconds\":%.3f,\"msPerIteration\":%.3f,"
                        + "\"peakHeapBytes\":%d,\"solver\":\"%s\",\"maxDistance\":%s,\"minPositiveDistance\":%s,"
                        + "\"missingDistances\":%d}",
                n, dim, num(normalizedStress), num(spidalStress), temperatureLoops, smacofIterations, cgIterations,
                seconds, msPerIteration, peakHeapBytes, closedForm ? "closed-form" : "cg", num(maxDistance),
                num(minPositiveDistance), missingDistances);
    }

    private static String num(double v) {
        return Double.isFinite(v) ? Double.toString(v) : "null";
    }

    public void writeSummary(Path file) throws IOException {
        Files.writeString(file, summaryJson() + "\n");
    }
}
