package io.meridian.cli;

import io.meridian.live.SnapshotSummary;
import java.util.Locale;

/** One terminal line per live map frame, for {@code local} and {@code demo}. */
final class FrameLines {
    private FrameLines() {
    }

    static String line(SnapshotSummary s) {
        return String.format(Locale.ROOT, "frame %d: N = %d, stress %.5f, %s, drift %s, %s%d iterations, %.0f ms%s",
                s.frame(), s.points(), s.stress(), s.clusters() > 0 ? s.clusters() + " clusters" : "clusters pending",
                Double.isNaN(s.drift()) ? "-" : String.format(Locale.ROOT, "%.2f%%", 100 * s.drift()),
                s.placed() > 0 ? "+" + s.placed() + " placed, " : "", s.iterations(), 1000 * s.roundSeconds(),
                s.annealed() ? " (annealed)" : s.settled() ? " (settled)" : "");
    }
}
