package io.meridian.cli;

import io.meridian.collective.SingleProcessSync;
import io.meridian.config.CommandLine;
import io.meridian.matrix.Weighting;
import io.meridian.mds.MdsJob;
import io.meridian.mds.MdsOptions;
import io.meridian.mds.MdsResult;
import io.meridian.synthetic.SyntheticDataset;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Set;

/**
 * {@code meridian demo}: for now the batch job: generates Gaussian blobs, maps them to 3-D with DA-MDS and prints
 * where everything went. {@link #runBatch} is the reusable part.
 */
final class DemoCommand implements Command {
    @Override
    public String usage() {
        return "demo [--n 1000] [--seed 1] [--out DIR]   (default DIR: .meridian/demo)";
    }

    @Override
    public int run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("demo", args, Set.of("n", "seed", "out"), Set.of());
        cl.requireNoPositional();
        int n = cl.intValue("n", 1000, 10, GenCommand.MAX_N);
        long seed = cl.longValue("seed", 1, Long.MIN_VALUE, Long.MAX_VALUE);
        Path out = Path.of(cl.string("out", defaultDirectory().toString()));
        runBatch(out, n, seed);
        return 0;
    }

    static Path defaultDirectory() {
        String home = System.getenv("MERIDIAN_HOME");
        return (home == null ? Path.of(".") : Path.of(home)).resolve(".meridian").resolve("demo");
    }

    /** Writes blobs (N points, 8-D, 5 centres) to {@code out/data} and their DA-MDS map to {@code out/mds}. */
    static MdsResult runBatch(Path out, int n, long seed) throws Exception {
        Path data = out.resolve("data");
        Path maps = out.resolve("mds");
        System.out.println("demo: generating " + n + " points in 5 Gaussian blobs (8-D) into " + data);
        SyntheticDataset.blobs(n, 8, 5, 2.0, seed).write(data, ByteOrder.LITTLE_ENDIAN);
        System.out.println("demo: DA-MDS to 3-D (progress on stderr) ...");
        MdsResult result = MdsJob.run(data.resolve(SyntheticDataset.DISTANCES_FILE), n, ByteOrder.LITTLE_ENDIAN,
                Weighting.unit(), new MdsOptions().seed(seed).progress(System.err, 2000), SingleProcessSync.INSTANCE, maps);
        System.out.printf(Locale.ROOT, "demo: normalized stress %.5f after %d temperature loops, %d SMACOF iterations, %.1f s%n",
                result.normalizedStress, result.temperatureLoops, result.smacofIterations, result.seconds);
        System.out.println("demo: outputs:");
        System.out.println("  " + data.resolve(SyntheticDataset.DISTANCES_FILE) + "  16-bit distance matrix (SPIDAL format)");
        System.out.println("  " + data.resolve(SyntheticDataset.LABELS_FILE) + "  blob of each point");
        System.out.println("  " + maps.resolve(MdsJob.POINTS_FILE) + "  3-D map: id, x, y, z");
        System.out.println("  " + maps.resolve(MdsJob.SUMMARY_FILE) + "  stress, iterations, timings");
        return result;
    }
}
