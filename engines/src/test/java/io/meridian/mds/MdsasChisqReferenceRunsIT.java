package io.meridian.mds;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The original MDSasChisq's slower reference runs (mds-runs.tsv rows marked {@code it}: 1000 points, or LM running to
 * its 200-iteration limit), checked as {@link MdsasChisqReferenceRunsTest} checks the fast ones; run by
 * {@code mvn verify} (failsafe), not by {@code mvn test}.
 */
class MdsasChisqReferenceRunsIT {
    @TempDir
    static Path dir;

    static List<MdsasChisqReferenceRunsTest.Run> runs() {
        return MdsasChisqReferenceRunsTest.runs("it");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("runs")
    void lmFromTheSameStartEndsWithinOnePercentOfTheOriginal(MdsasChisqReferenceRunsTest.Run run) {
        MdsasChisqReferenceRunsTest.check(run, dir);
    }
}
