package io.meridian.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meridian.config.CommandLine;
import io.meridian.config.UsageException;
import io.meridian.davs.DavsEngine;
import io.meridian.davs.DavsResult;
import io.meridian.davs.DavsSettings;
import io.meridian.davs.SigmaMethod;
import io.meridian.davs.SpongeScore;
import io.meridian.davs.VectorsFile;
import io.meridian.engine.BadInputException;
import io.meridian.engine.BadInputException.Input;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code ./meridian davs}: DA-VS (deterministic annealing vector sponge, {@link DavsEngine}) on a vectors file; writes
 * each point's label (0 = sponge), the clusters' centres, widths and weights, and a summary.
 */
final class DavsCommand implements Command {
    static final String LABELS_FILE = "labels.tsv";
    static final String CENTERS_FILE = "centers.tsv";
    static final String SUMMARY_FILE = "summary.json";
    private static final ObjectMapper JSON = new ObjectMapper();

    @Override
    public String usage() {
        DavsSettings d = DavsSettings.defaults();
        return "davs --vectors FILE --out DIR [options]\n"
                + "    DA-VS: deterministic annealing clustering of vectors with a sponge for the points near no\n"
                + "    cluster (DSC-SPIDAL/davs). FILE: id<TAB>x1<TAB>...<TAB>xD a line, ids 0..N-1 in order\n"
                + "    (./meridian gen --kind peaks writes vectors.tsv so). Writes into DIR:\n"
                + "      labels.tsv    id<TAB>label, 0 = the sponge, 1..K the clusters\n"
                + "      centers.tsv   label, centre (D), sigma of the width model (D), measured width (D), P_k, C_k,\n"
                + "                    points\n"
                + "      summary.json  K, the sponge's weight and size, temperatures, iterations, splits, settings\n"
                + "    Width model (distances are scaled per dimension by sigma_i):\n"
                + "    --sigma-method M      0: sigma 1; 1: sigma_i = p_i; 2 (default): sigma_0 = p_0 * centre's\n"
                + "                          first value (LC-MS m/z), sigma_i = p_i after; 3: as 2 with p_0\n"
                + "                          annealed down\n"
                + "    --sigma P0,P1,...     p_i (default " + list(d.sigmaParameters()) + ", the original's)\n"
                + "    --final-sigma0 P, --final-sigma-temperature T\n"
                + "                          method 3: p_0 falls to P at temperature T and stays there (defaults:\n"
                + "                          the smaller of the first --sigma and " + plain(d.finalSigma0()) + "; "
                + plain(d.finalSigmaTemperature()) + ")\n"
                + "    Sponge:\n"
                + "    --sponge-factor F     the sponge's scaled distance (default " + plain(d.spongeFactor())
                + "; the original's " + plain(DavsSettings.ORIGINAL_SPONGE_FACTOR) + ", as --original uses;"
                + " 0: none)\n"
                + "    --sponge-temperature T  add the sponge when T falls to this (default: from the start)\n"
                + "    --sponge-weight W     P(sponge) = W / (K + 1) (default " + d.spongeWeight() + ")\n"
                + "    --free-sponge-weight  P(sponge) = C(sponge) / N like the clusters instead\n"
                + "    Annealing:\n"
                + "    --max-clusters K      (default " + d.maxClusters() + ")   --cooling F (default "
                + d.coolingFactor() + ")\n"
                + "    --t-min T             last temperature; negative: T0 / |T| (default " + d.minimumTemperature()
                + ")\n"
                + "    --em-limit I, --final-em-limit I, --membership-change X, --final-membership-change X\n"
                + "    --split-wait S, --splits-at-once S, --too-small-to-split C, --min-width-to-split W2\n"
                + "    --min-count C, --min-count-sponge C, --min-points P  (clean-up of small clusters)\n"
                + "    --clean-up-temperatures T1,T2,...  (default " + list(d.cleanUpTemperatures()) + ")\n"
                + "    --closeness-temperature T, --closeness-distance D2  (of two close clusters the smaller goes)\n"
                + "    --exp-cut X\n"
                + "    --original            the original's control flow (DSC-SPIDAL/davs ControlVectorSpongeDA:\n"
                + "                          clean-up at every temperature, split priorities, fine cooling after\n"
                + "                          the first split, cooling on until the memberships freeze) and the\n"
                + "                          configuration of its reference runs (sponge added below T = 10)\n"
                + "    --truth FILE          id<TAB>label, 0 = background (gen's labels.tsv): adds ARI on the\n"
                + "                          peaks' points and the sponge's recall and precision to the summary\n"
                + "    --force               overwrite the results of an earlier run in DIR\n"
                + "    See docs/davs.md for what each default is in the original.";
    }

    @Override
    public String optionFor(BadInputException.Input input) {
        return switch (input) {
            case VECTORS -> "--vectors";
            case TRUE_LABELS -> "--truth";
            default -> null;
        };
    }

    @Override
    public int run(String[] args) throws IOException {
        CommandLine cl = CommandLine.parse("davs", args, Set.of("vectors", "out", "truth", "sigma-method", "sigma",
                "final-sigma0", "final-sigma-temperature", "sponge-factor", "sponge-temperature", "sponge-weight",
                "max-clusters", "t-min", "cooling", "em-limit", "final-em-limit", "membership-change",
                "final-membership-change", "split-wait", "splits-at-once", "too-small-to-split", "min-width-to-split",
                "min-count", "min-count-sponge", "min-points", "clean-up-temperatures", "closeness-temperature",
                "closeness-distance", "exp-cut"), Set.of("free-sponge-weight", "force", "original"));
        cl.requireNoPositional();
        Path vectorsFile = Path.of(cl.requiredString("vectors"));
        cl.requiredString("out");
        DavsSettings settings = settings(cl);
        Path truthFile = cl.has("truth") ? Path.of(cl.requiredString("truth")) : null;
        VectorsFile.Vectors vectors = VectorsFile.read(vectorsFile);
        int[] truth = truthFile == null ? null : VectorsFile.readLabels(truthFile, vectors.n());
        DavsResult result;
        try {
            result = DavsEngine.run(vectors.xRowMajor(), vectors.n(), vectors.d(), settings);
        } catch (IllegalArgumentException e) {
            throw new BadInputException(Input.VECTORS, vectorsFile, vectorsFile + ": " + e.getMessage(), e);
        }
        SpongeScore score = truth == null ? null : SpongeScore.of(truth, 0, result.labels(), DavsResult.SPONGE);
        // read and clustered before DIR is made: a refused run leaves nothing behind
        Path out = cl.resultDirectory("out", List.of(LABELS_FILE, CENTERS_FILE, SUMMARY_FILE));
        write(out, result);
        Files.writeString(out.resolve(SUMMARY_FILE), summaryJson(result, settings, vectorsFile, truthFile, score),
                StandardCharsets.UTF_8);
        System.out.println(summaryLine(result, score, out));
        return 0;
    }

    static DavsSettings settings(CommandLine cl) {
        // --original starts from the original's control flow and reference configuration; options still override
        boolean original = cl.flag("original");
        DavsSettings.Builder b = original ? DavsSettings.builder().original() : DavsSettings.builder();
        try {
            b.sigmaMethod(SigmaMethod.ofCode(cl.intValue("sigma-method", 2, Integer.MIN_VALUE, Integer.MAX_VALUE)));
            if (cl.has("sigma")) {
                b.sigmaParameters(numbers(cl, "sigma"));
                b.finalSigma0(Math.min(numbers(cl, "sigma")[0], DavsSettings.DEFAULT_SIGMA_PARAMETERS[0]));
            }
            if (cl.has("final-sigma0")) {
                b.finalSigma0(cl.doubleValue("final-sigma0", 0, -Double.MAX_VALUE, Double.MAX_VALUE, false));
            }
            if (cl.has("clean-up-temperatures")) {
                b.cleanUpTemperatures(numbers(cl, "clean-up-temperatures"));
            }
            DavsSettings d = original ? DavsSettings.original() : DavsSettings.defaults();
            return b.finalSigmaTemperature(number(cl, "final-sigma-temperature", d.finalSigmaTemperature()))
                    .spongeFactor(number(cl, "sponge-factor", d.spongeFactor()))
                    .spongeTemperature(number(cl, "sponge-temperature", d.spongeTemperature()))
                    .spongeWeight(number(cl, "sponge-weight", d.spongeWeight()))
                    .fixedSpongeWeight(!cl.flag("free-sponge-weight"))
                    .maxClusters(integer(cl, "max-clusters", d.maxClusters()))
                    .minimumTemperature(number(cl, "t-min", d.minimumTemperature()))
                    .coolingFactor(number(cl, "cooling", d.coolingFactor()))
                    .emIterationLimit(integer(cl, "em-limit", d.emIterationLimit()))
                    .finalIterationLimit(integer(cl, "final-em-limit", d.finalIterationLimit()))
                    .membershipChange(number(cl, "membership-change", d.membershipChange()))
                    .finalMembershipChange(number(cl, "final-membership-change", d.finalMembershipChange()))
                    .splitWait(integer(cl, "split-wait", d.splitWait()))
                    .maxSplitsAtOnce(integer(cl, "splits-at-once", d.maxSplitsAtOnce()))
                    .tooSmallToSplit(number(cl, "too-small-to-split", d.tooSmallToSplit()))
                    .minWidthSquaredToSplit(number(cl, "min-width-to-split", d.minWidthSquaredToSplit()))
                    .minCount(number(cl, "min-count", d.minCount()))
                    .minCountWithSponge(number(cl, "min-count-sponge", d.minCountWithSponge()))
                    .minPoints(integer(cl, "min-points", d.minPoints()))
                    .closenessTemperature(number(cl, "closeness-temperature", d.closenessTemperature()))
                    .closenessDistanceSquared(number(cl, "closeness-distance", d.closenessDistanceSquared()))
                    .expCut(number(cl, "exp-cut", d.expCut()))
                    .build();
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    private static double number(CommandLine cl, String name, double defaultValue) {
        return cl.doubleValue(name, defaultValue, -Double.MAX_VALUE, Double.MAX_VALUE, false);
    }

    private static int integer(CommandLine cl, String name, int defaultValue) {
        return cl.intValue(name, defaultValue, Integer.MIN_VALUE, Integer.MAX_VALUE);
    }

    private static double[] numbers(CommandLine cl, String name) {
        String[] parts = cl.requiredString(name).split(",");
        double[] values = new double[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                values[i] = Double.parseDouble(parts[i].trim());
            } catch (NumberFormatException e) {
                throw new UsageException("--" + name + " must be numbers separated by commas, got '"
                        + cl.requiredString(name) + "'");
            }
        }
        return values;
    }

    private static String list(double[] values) {
        StringBuilder s = new StringBuilder();
        for (double v : values) {
            s.append(s.length() == 0 ? "" : ",").append(plain(v));
        }
        return s.toString();
    }

    private static String plain(double v) {
        return BigDecimal.valueOf(v).stripTrailingZeros().toPlainString();
    }

    private static void write(Path out, DavsResult r) throws IOException {
        int[] labels = r.labels();
        StringBuilder text = new StringBuilder(labels.length * 8);
        for (int a = 0; a < labels.length; a++) {
            text.append(a).append('\t').append(labels[a]).append('\n');
        }
        Files.writeString(out.resolve(LABELS_FILE), text, StandardCharsets.UTF_8);
        int d = r.dimension();
        text.setLength(0);
        text.append("label");
        for (String column : new String[] {"center", "sigma", "width"}) {
            for (int i = 1; i <= d; i++) {
                text.append('\t').append(column).append(i);
            }
        }
        text.append("\tweight\tcount\tpoints\n");
        double[] centers = r.centersRowMajor();
        double[] sigmas = r.sigmasRowMajor();
        double[] widths = r.widthsRowMajor();
        for (int k = 0; k < r.clusters(); k++) {
            text.append(k + 1);
            for (double[] values : new double[][] {centers, sigmas, widths}) {
                for (int i = 0; i < d; i++) {
                    text.append('\t').append(values[k * d + i]);
                }
            }
            text.append('\t').append(r.weights()[k]).append('\t').append(r.counts()[k]).append('\t')
                    .append(r.sizes()[k]).append('\n');
        }
        Files.writeString(out.resolve(CENTERS_FILE), text, StandardCharsets.UTF_8);
    }

    static String summaryJson(DavsResult r, DavsSettings s, Path vectors, Path truth, SpongeScore score)
            throws IOException {
        ObjectNode json = JSON.createObjectNode();
        json.put("vectors", vectors.toString());
        json.put("points", r.points());
        json.put("dimension", r.dimension());
        json.put("clusters", r.clusters());
        json.put("labelMeaning", "0 = sponge, 1..K = cluster (row of centers.tsv)");
        ObjectNode sponge = json.putObject("sponge");
        sponge.put("weight", r.spongeWeight());
        sponge.put("points", r.spongeSize());
        json.put("initialTemperature", r.initialTemperature());
        json.put("finalTemperature", r.finalTemperature());
        json.put("temperatures", r.temperatures());
        json.put("emIterations", r.emIterations());
        json.put("splits", r.splits());
        json.put("removed", r.removed());
        json.put("removedAsClose", r.closeRemoved());
        json.put("seconds", r.seconds());
        if (score != null) {
            ObjectNode t = json.putObject("truth");
            t.put("file", truth.toString());
            t.put("peakAri", score.peakAri());
            t.put("backgroundRecall", score.noiseRecall());
            t.put("backgroundPrecision", score.noisePrecision());
        }
        ObjectNode settings = json.putObject("settings");
        settings.put("sigmaMethod", s.sigmaMethod().code);
        ArrayNode sigma = settings.putArray("sigma");
        for (double v : s.sigmaParameters()) {
            sigma.add(v);
        }
        settings.put("spongeFactor", s.spongeFactor());
        settings.put("spongeWeight", s.spongeWeight());
        settings.put("fixedSpongeWeight", s.fixedSpongeWeight());
        settings.put("maxClusters", s.maxClusters());
        settings.put("minimumTemperature", s.minimumTemperature());
        settings.put("coolingFactor", s.coolingFactor());
        settings.put("minPoints", s.minPoints());
        settings.put("originalSchedule", s.originalSchedule());
        settings.put("spongeTemperature", s.spongeTemperature());
        return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(json) + "\n";
    }

    static String summaryLine(DavsResult r, SpongeScore score, Path out) {
        String truth = score == null ? "" : String.format(Locale.ROOT, "; against the truth: ARI on peaks %.4f,"
                + " background recall %.3f, precision %.3f", score.peakAri(), score.noiseRecall(),
                score.noisePrecision());
        return String.format(Locale.ROOT, "davs: %d points, %d clusters + sponge (%d points), T %.4g -> %.4g in %d"
                        + " temperatures, %d EM iterations, %.2f s%s; wrote %s, %s, %s in %s", r.points(), r.clusters(),
                r.spongeSize(), r.initialTemperature(), r.finalTemperature(), r.temperatures(), r.emIterations(),
                r.seconds(), truth, LABELS_FILE, CENTERS_FILE, SUMMARY_FILE, out);
    }
}
