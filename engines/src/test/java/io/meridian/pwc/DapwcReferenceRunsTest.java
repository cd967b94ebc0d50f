package io.meridian.pwc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meridian.collective.SingleProcessSync;
import io.meridian.matrix.RowPartition;
import io.meridian.pwc.ReferenceData.DataSet;
import io.meridian.pwc.ReferenceData.Run;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * SPIDAL dapwc's 16 reference runs (two blob sets, breast cancer, wine and iris, K = 2..10), on their data rebuilt here
 * from the recipes: {@link PwcSettings.Builder#dapwc()} must give dapwc's labels and, within a few, its EM iteration
 * counts; the default settings must end at least as close to the true classes as dapwc (adjusted Rand index). The two
 * runs on 2000 points take most of the time (about 15-25 s each on a quiet machine).
 */
class DapwcReferenceRunsTest {
    /** dapwc and the dapwc mode agree to the iteration on 13 runs; on three the freezing phase ends 3 or 4 later/earlier. */
    private static final int ITERATION_SLACK = 5;

    @TempDir
    static Path dir;
    private static final Map<String, DataSet> DATA = new HashMap<>();

    static List<Run> runs() {
        return ReferenceData.runs();
    }

    static synchronized DataSet data(String name) {
        return DATA.computeIfAbsent(name, d -> ReferenceData.build(d, dir));
    }

    static PwcResult cluster(DataSet data, PwcSettings settings) {
        return new PwcEngine(data.block(), RowPartition.of(data.n(), 1), SingleProcessSync.INSTANCE, settings, null).run();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("runs")
    void dapwcModeGivesDapwcsLabelsAndIterations(Run run) {
        DataSet data = data(run.dataset());
        PwcResult r = cluster(data, PwcSettings.builder().dapwc().maxClusters(run.k()).build());
        int[] dapwc = run.dapwcLabels(data.n());
        assertEquals(1.0, Ari.adjustedRandIndex(dapwc, r.labels()), 1e-12,
                run + ": dapwc's labels; ours have sizes " + Arrays.toString(r.sizes()));
        assertEquals(run.emIterations(), r.emIterations(), ITERATION_SLACK, run + ": EM iterations");
        assertEquals(run.splitTestEmIterations(), r.duplicateEmIterations(), ITERATION_SLACK,
                run + ": EM iterations in duplicated-cluster split tests");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("runs")
    void defaultModeIsAtLeastAsCloseToTheTrueClassesAsDapwc(Run run) {
        DataSet data = data(run.dataset());
        PwcResult r = cluster(data, PwcSettings.builder().maxClusters(run.k()).build());
        double ours = Ari.adjustedRandIndex(data.truth(), r.labels());
        double dapwc = Ari.adjustedRandIndex(data.truth(), run.dapwcLabels(data.n()));
        assertTrue(ours >= dapwc - 1e-12, String.format(Locale.ROOT,
                "%s: ARI against the true classes %.4f, dapwc's %.4f (sizes %s)", run, ours, dapwc,
                Arrays.toString(r.sizes())));
    }
}
