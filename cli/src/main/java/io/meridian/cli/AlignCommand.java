package io.meridian.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meridian.align.AlignOptions;
import io.meridian.align.Similarity;
import io.meridian.align.SimilarityFit;
import io.meridian.cli.view.MapFileException;
import io.meridian.cli.view.MapFiles;
import io.meridian.cli.view.MapLoader;
import io.meridian.config.CommandLine;
import io.meridian.config.UsageException;
import io.meridian.engine.BadInputException;
import io.meridian.engine.BadInputException.Input;
import io.meridian.matrix.Weighting;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code ./meridian align}: lays a map over a reference map of the same points by the least-squares similarity
 * transform ({@link SimilarityFit}, the rotation mode of SPIDAL's MDSasChisq), and writes the moved map (points.tsv,
 * so that {@code ./meridian view} shows it), the transform (transform.json) and each point's residual
 * (residuals.tsv). Both maps are read by the viewer's reader ({@link MapFiles}), at full precision.
 */
final class AlignCommand implements Command {
    static final String POINTS_FILE = MapFiles.POINTS_FILE;
    static final String TRANSFORM_FILE = "transform.json";
    static final String RESIDUALS_FILE = "residuals.tsv";
    private static final ObjectMapper JSON = new ObjectMapper();

    @Override
    public String usage() {
        return "align --reference MAP --map MAP --out DIR [--rotation-only] [--no-scale] [--weights FILE]"
                + " [--relative [--min-distance D]] [--force]\n"
                + "    fits s R y + t to x by least squares, x the points of --reference, y those of --map (the same\n"
                + "    ids 0..N-1), R a rotation or a rotation with a reflection, s > 0: in closed form (Umeyama's\n"
                + "    method, the SVD of the 3 x 3 cross-covariance), the minimum MDSasChisq's rotation mode reaches\n"
                + "    iteratively. Writes into DIR:\n"
                + "      points.tsv      --map moved onto --reference (id x y z: ./meridian view DIR shows it)\n"
                + "      transform.json  s, R (3 x 3, by rows), t, whether R reflects, residual RMS, chi-square\n"
                + "      residuals.tsv   id, |s R y + t - x| of each point\n"
                + "    and prints one line: points, scale, rotation or reflection, residual RMS, chi-square.\n"
                + "    MAP: a points.tsv, or a directory holding one (./meridian mds's --out, a live frame-N/),\n"
                + "    or a live map's snapshot directory (map.snapshotDirectory): its current frame, e.g.\n"
                + "    --reference the batch map and --map the live one, to see where they differ\n"
                + "    --rotation-only   R a proper rotation (det +1), even for a mirror image (3 points; else 4)\n"
                + "    --no-scale        s = 1 (a rigid motion)\n"
                + "    --weights FILE    one weight >= 0 a line, line k for id k: minimises\n"
                + "                      sum_i w_i |s R y_i + t - x_i|^2 (a point of weight 0 is moved, not fitted)\n"
                + "    --relative        relative errors: each squared residual divided by |x_i|^2 (x_i as given,\n"
                + "                      not centred), MDSasChisq's RotationOption=1; with --weights, both apply\n"
                + "    --min-distance D  with --relative, |x_i| counts as at least D (default 0: a point of\n"
                + "                      --reference at the origin is refused)\n"
                + "    --force           overwrite the results of an earlier run in DIR";
    }

    @Override
    public String optionFor(BadInputException.Input input) {
        return switch (input) {
            case REFERENCE_MAP -> "--reference";
            case MAP -> "--map";
            case POINT_WEIGHTS -> "--weights";
            default -> null;
        };
    }

    @Override
    public int run(String[] args) throws IOException {
        CommandLine cl = CommandLine.parse("align", args, Set.of("reference", "map", "out", "weights", "min-distance"),
                Set.of("rotation-only", "no-scale", "relative", "force"));
        cl.requireNoPositional();
        Path referenceFile = pointsFile(Input.REFERENCE_MAP, cl.requiredString("reference"));
        Path mapFile = pointsFile(Input.MAP, cl.requiredString("map"));
        cl.requiredString("out");
        if (cl.has("min-distance") && !cl.flag("relative")) {
            throw new UsageException("--min-distance is the floor of |x_i| for --relative; give --relative too");
        }
        double minimumDistance = cl.doubleValue("min-distance", 0, 0, Double.MAX_VALUE, false);
        AlignOptions options = new AlignOptions(!cl.flag("rotation-only"), !cl.flag("no-scale"), cl.flag("relative"),
                minimumDistance);
        Path weightsFile = cl.has("weights") ? BadInputException.checkReadable(Input.POINT_WEIGHTS,
                Path.of(cl.requiredString("weights"))) : null;

        double[] x = read(Input.REFERENCE_MAP, referenceFile);
        double[] y = read(Input.MAP, mapFile);
        int nx = x.length / 3;
        int ny = y.length / 3;
        if (nx != ny) {
            // both files hold ids 0..N-1 (MapFiles checks), so the first id one lacks is the other's N
            boolean mapShort = ny < nx;
            throw new BadInputException(mapShort ? Input.MAP : Input.REFERENCE_MAP, mapShort ? mapFile : referenceFile,
                    (mapShort ? mapFile : referenceFile) + " has no id " + Math.min(nx, ny) + ": it holds "
                    + Math.min(nx, ny) + " points (ids 0.." + (Math.min(nx, ny) - 1) + "), "
                    + (mapShort ? referenceFile : mapFile) + " holds " + Math.max(nx, ny)
                    + " (align needs the same points in both maps)");
        }
        double[] weights = weightsFile == null ? null : Weighting.readPointWeights(weightsFile, nx);
        Similarity fit;
        try {
            fit = SimilarityFit.of(x, y, weights, options);
        } catch (BadInputException e) {
            if (e.file() != null) {
                throw e;
            }
            Path file = e.input() == Input.REFERENCE_MAP ? referenceFile
                    : e.input() == Input.POINT_WEIGHTS ? weightsFile : mapFile;
            throw new BadInputException(e.input(), file, file + ": " + e.getMessage(), e);
        }
        // the inputs are read and fitted before DIR is made: a refused run leaves nothing behind
        Path out = cl.resultDirectory("out", List.of(POINTS_FILE, TRANSFORM_FILE, RESIDUALS_FILE));
        write(out, mapFile, fit.apply(y), fit);
        Files.writeString(out.resolve(TRANSFORM_FILE), transformJson(fit, referenceFile, mapFile, options,
                weightsFile), StandardCharsets.UTF_8);
        System.out.println(summaryLine(fit, out));
        return 0;
    }

    /**
     * The points.tsv that MAP names: the file itself, the one in the directory, or a live map snapshot directory's
     * current frame's ({@link MapLoader#pointsFile}, as {@code ./meridian view} reads them).
     */
    private static Path pointsFile(Input input, String map) {
        Path path = Path.of(map);
        try {
            return MapLoader.pointsFile(path);
        } catch (MapFileException e) {
            throw new BadInputException(input, path, e.getMessage());
        }
    }

    private static double[] read(Input input, Path file) throws IOException {
        BadInputException.checkReadable(input, file);
        try {
            return MapFiles.readCoordinates(file);
        } catch (MapFileException e) {
            throw new BadInputException(input, file, e.getMessage());
        }
    }

    /** The moved map as {@code points.tsv} (Double.toString: exact), and the residuals. */
    private static void write(Path out, Path mapFile, double[] moved, Similarity fit) throws IOException {
        StringBuilder points = new StringBuilder(moved.length * 24);
        StringBuilder residuals = new StringBuilder(moved.length * 8);
        double[] r = fit.residualsById();
        for (int i = 0; i < r.length; i++) {
            points.append(i).append('\t').append(moved[3 * i]).append('\t').append(moved[3 * i + 1]).append('\t')
                    .append(moved[3 * i + 2]).append('\n');
            residuals.append(i).append('\t').append(r[i]).append('\n');
        }
        Files.writeString(out.resolve(POINTS_FILE), points, StandardCharsets.UTF_8);
        Files.writeString(out.resolve(RESIDUALS_FILE), residuals, StandardCharsets.UTF_8);
    }

    static String transformJson(Similarity fit, Path referenceFile, Path mapFile, AlignOptions options,
                                Path weightsFile) throws IOException {
        ObjectNode json = JSON.createObjectNode();
        json.put("reference", referenceFile.toString());
        json.put("map", mapFile.toString());
        json.put("points", fit.points());
        json.put("scale", fit.scale());
        ArrayNode rows = json.putArray("rotation");
        for (int a = 0; a < 3; a++) {
            ArrayNode row = rows.addArray();
            for (int b = 0; b < 3; b++) {
                row.add(fit.rotation(a, b));
            }
        }
        ArrayNode t = json.putArray("translation");
        for (double v : fit.translation()) {
            t.add(v);
        }
        json.put("reflection", fit.reflection());
        json.put("rank", fit.rank());
        json.put("rmsResidual", fit.rmsResidual());
        json.put("chiSquare", fit.chiSquare());
        ObjectNode fitted = json.putObject("options");
        fitted.put("rotationOnly", !options.allowReflection());
        fitted.put("scale", options.fitScale());
        fitted.put("relative", options.relativeErrors());
        fitted.put("minDistance", options.minimumDistance());
        fitted.put("weights", weightsFile == null ? null : weightsFile.toString());
        return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(json) + "\n";
    }

    static String summaryLine(Similarity fit, Path out) {
        return String.format(Locale.ROOT, "align: %d points, scale %.6g, %s%s, residual rms %.6g, chi-square %.6g;"
                        + " wrote %s, %s, %s in %s",
                fit.points(), fit.scale(), fit.reflection() ? "reflection" : "rotation",
                fit.rank() == 2 ? " (points in a plane: proper rotation)" : "", fit.rmsResidual(), fit.chiSquare(),
                POINTS_FILE, TRANSFORM_FILE, RESIDUALS_FILE, out);
    }
}
