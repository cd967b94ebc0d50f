package io.meridian.cli;

import io.meridian.config.CommandLine;
import io.meridian.synthetic.SyntheticDataset;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Set;

/** {@code meridian gen}: writes a synthetic data set (16-bit distance matrix, labels, coordinates, description). */
final class GenCommand implements Command {
    static final int MAX_N = 100_000;

    @Override
    public String usage() {
        return "gen --kind blobs|uniform --n N --dim D --out DIR [--centers C] [--std S] [--seed S] [--big-endian]";
    }

    @Override
    public int run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("gen", args,
                Set.of("kind", "n", "dim", "centers", "std", "seed", "out"), Set.of("big-endian"));
        cl.requireNoPositional();
        String kind = cl.requiredString("kind");
        kind = cl.choice("kind", kind, "blobs", "uniform");
        int n = cl.requiredInt("n", 2, MAX_N);
        int dim = cl.intValue("dim", 8, 1, 10_000);
        int centers = cl.intValue("centers", 4, 1, n);
        double std = cl.doubleValue("std", 1.0, 0, 1e6, false);
        long seed = cl.longValue("seed", 1, Long.MIN_VALUE, Long.MAX_VALUE);
        Path out = cl.outputDirectory("out");
        ByteOrder order = cl.flag("big-endian") ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
        SyntheticDataset data = "blobs".equals(kind)
                ? SyntheticDataset.blobs(n, dim, centers, std, seed)
                : SyntheticDataset.uniform(n, dim, seed);
        data.write(out, order);
        System.out.println("wrote " + kind + " data set, N = " + n + ", D = " + dim + ": "
                + out.resolve(SyntheticDataset.DISTANCES_FILE) + " (+ " + SyntheticDataset.LABELS_FILE + ", "
                + SyntheticDataset.COORDINATES_FILE + ", " + SyntheticDataset.DESCRIPTION_FILE + ")");
        return 0;
    }
}
