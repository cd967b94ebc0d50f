package io.meridian.perf;

import io.meridian.engine.BadInputException;
import io.meridian.collective.SingleProcessSync;
import io.meridian.matrix.RowBlock;
import io.meridian.matrix.ShortMatrixFormat;
import io.meridian.matrix.Weighting;
import io.meridian.mds.DaMds;
import io.meridian.mds.MdsOptions;
import io.meridian.mds.MdsResult;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * The measured side of {@code ./meridian bench mds}, run by {@link MdsBench} in a child JVM of its own so that its peak
 * RSS is the engine's: times SMACOF iterations (1 process, 1 thread) and the roofline kernel on the same mapped
 * matrix, counts heap allocation per iteration, reads VmHWM. Prints {@code key=value} lines on stdout.
 */
public final class MdsBenchChild {
    private MdsBenchChild() {
    }

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]);
        int n = Integer.parseInt(args[1]);
        int iterations = Integer.parseInt(args[2]);
        boolean fullRun = Boolean.parseBoolean(args[3]);
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long self = Thread.currentThread().getId();

        DaMds engine = new DaMds(file, n, ByteOrder.LITTLE_ENDIAN, Weighting.unit(), new MdsOptions().seed(1),
                SingleProcessSync.INSTANCE);
        engine.prepare();
        // a mid-schedule temperature: delta_hat = delta - sqrt(2L) T with T = 0.1 Tmax, like most of a run
        double shift = 0.1 * engine.maxDistance();
        // warm-up: at least 15 iterations, and until the kernel's vector pass is compiled and in use (while C2
        // compiles it, the engine runs the scalar pass and warms the vector one up on a small tile, which allocates)
        int warmUp = 0;
        while (warmUp < 15 || (DaMds.vectorKernelAvailable() && !DaMds.vectorKernel() && warmUp < 400)) {
            engine.iterate(shift);
            warmUp++;
        }
        // allocation, engine alone
        long allocatedBefore = threads.getThreadAllocatedBytes(self);
        for (int i = 0; i < 20; i++) {
            engine.iterate(shift);
        }
        long allocated = threads.getThreadAllocatedBytes(self) - allocatedBefore;
        // the engine's peak, read before the roofline maps the file a second time (RSS would count its pages twice)
        long engineHwm = vmHwmKiB();
        long enginePeakHeap = DaMds.peakHeapBytes();

        // engine iterations and roofline passes alternate, so both see the same load on a shared machine
        Roofline roofline = new Roofline(RowBlock.mapAll(BadInputException.Input.DISTANCES, file, n, ByteOrder.LITTLE_ENDIAN));
        for (int i = 0; i < 4; i++) {
            roofline.pass();
        }
        double[] wall = new double[iterations];
        double[] cpu = new double[iterations];
        double[] roofWall = new double[iterations];
        double[] roofCpu = new double[iterations];
        double[] ratio = new double[iterations];
        double[] cpuRatio = new double[iterations];
        double checksum = 0;
        for (int i = 0; i < iterations; i++) {
            long t0 = System.nanoTime();
            long c0 = threads.getCurrentThreadCpuTime();
            engine.iterate(shift);
            cpu[i] = (threads.getCurrentThreadCpuTime() - c0) / 1e6;
            wall[i] = (System.nanoTime() - t0) / 1e6;
            t0 = System.nanoTime();
            c0 = threads.getCurrentThreadCpuTime();
            checksum += roofline.pass();
            roofCpu[i] = (threads.getCurrentThreadCpuTime() - c0) / 1e6;
            roofWall[i] = (System.nanoTime() - t0) / 1e6;
            ratio[i] = wall[i] / roofWall[i];
            cpuRatio[i] = cpu[i] / roofCpu[i];
        }

        print("iterations", iterations);
        print("vectorKernel", DaMds.vectorKernel() ? 1 : 0);
        print("warmUpIterations", warmUp);
        print("msPerIteration", median(wall));
        print("cpuMsPerIteration", median(cpu));
        print("bestMsPerIteration", min(wall));
        print("rooflineMs", median(roofWall));
        print("rooflineCpuMs", median(roofCpu));
        print("bestRooflineMs", min(roofWall));
        print("rooflineChecksum", checksum);
        print("allocatedBytesPerIteration", allocated / 20.0);
        print("ratio", median(ratio));
        print("cpuRatio", median(cpuRatio));
        if (fullRun) {
            MdsResult result = new DaMds(file, n, ByteOrder.LITTLE_ENDIAN, Weighting.unit(),
                    new MdsOptions().seed(1).progress(System.err, 2000), SingleProcessSync.INSTANCE).run();
            print("fullRunSeconds", result.seconds);
            print("fullRunMsPerIteration", result.msPerIteration);
            print("fullRunIterations", result.smacofIterations);
            print("fullRunTemperatureLoops", result.temperatureLoops);
            print("fullRunNormalizedStress", result.normalizedStress);
        }
        print("peakHeapBytes", enginePeakHeap);
        print("vmHwmKiB", engineHwm);
        print("vmHwmEndKiB", vmHwmKiB());
    }

    /**
     * The roofline: one streaming pass over the same mapped 16-bit matrix, a square root per entry, every result
     * consumed (summed). Rows are bulk-copied into a reused array as the engine does; two loop shapes are timed and
     * the faster one is the roofline (C2 compiles them differently).
     */
    static final class Roofline {
        private final RowBlock block;
        private final short[] row;
        private final double[] roots;
        private int pass;

        Roofline(RowBlock block) {
            this.block = block;
            this.row = new short[block.n()];
            this.roots = new double[block.n()];
        }

        double pass() {
            return (pass++ & 1) == 0 ? summed() : stored();
        }

        /** sum += sqrt(value) per entry. */
        double summed() {
            int n = block.n();
            double s = 0;
            for (int i = block.rowStart(); i < block.rowEnd(); i++) {
                block.copyRow(i, row);
                for (int j = 0; j < n; j++) {
                    s += Math.sqrt(row[j] * ShortMatrixFormat.INV_SCALE);
                }
            }
            return s;
        }

        /** roots[j] = sqrt(value) (vectorisable), then a four-way sum of the row. */
        double stored() {
            int n = block.n();
            double s = 0;
            for (int i = block.rowStart(); i < block.rowEnd(); i++) {
                block.copyRow(i, row);
                for (int j = 0; j < n; j++) {
                    roots[j] = Math.sqrt(row[j] * ShortMatrixFormat.INV_SCALE);
                }
                double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                int j = 0;
                for (; j + 3 < n; j += 4) {
                    s0 += roots[j];
                    s1 += roots[j + 1];
                    s2 += roots[j + 2];
                    s3 += roots[j + 3];
                }
                for (; j < n; j++) {
                    s0 += roots[j];
                }
                s += (s0 + s1) + (s2 + s3);
            }
            return s;
        }
    }

    static long vmHwmKiB() throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmHWM:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }

    private static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        return v[v.length / 2];
    }

    private static double min(double[] values) {
        return Arrays.stream(values).min().orElse(Double.NaN);
    }

    private static void print(String key, double value) {
        System.out.println(key + "=" + String.format(Locale.ROOT, "%.6f", value));
    }
}
