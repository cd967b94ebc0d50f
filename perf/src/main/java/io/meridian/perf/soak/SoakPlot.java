package io.meridian.perf.soak;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;
import javax.imageio.ImageIO;

/**
 * The soak's samples over time as a PNG: one panel per measure, one line per JVM, minutes on the x axis, the early
 * and late windows shaded. Drawn with java.awt (headless), so no plotting dependency.
 */
final class SoakPlot {
    private static final int PANEL_W = 560;
    private static final int PANEL_H = 250;
    private static final int COLUMNS = 2;
    private static final int MARGIN_L = 70;
    private static final int MARGIN_R = 150;
    private static final int MARGIN_T = 26;
    private static final int MARGIN_B = 30;
    private static final Color[] PALETTE = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
        new Color(0xff7f0e), new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f)};
    private static final double MB = 1 << 20;

    private SoakPlot() {
    }

    static void write(Path png, List<SoakSample> samples, SoakTrend trend, String title) throws IOException {
        System.setProperty("java.awt.headless", "true");
        TreeSet<String> names = new TreeSet<>();
        samples.forEach(s -> names.addAll(s.jvms().keySet()));
        List<Panel> panels = List.of(
                perJvm("RSS (MB)", samples, names, j -> j.proc() == null ? Double.NaN : j.proc().rssBytes() / MB),
                perJvm("heap after GC (MB)", samples, names, SoakSample.Jvm::heapAfterGcBytes, MB),
                perJvm("threads", samples, names, j -> j.proc() == null ? Double.NaN : j.proc().threads()),
                perJvm("open files", samples, names, j -> j.proc() == null ? Double.NaN : j.proc().openFiles()),
                perJvm("memory mappings", samples, names, j -> j.proc() == null ? Double.NaN : j.proc().mappings()),
                series("disk and /dev/shm (MB)", samples, Map.of(
                        "row stores", s -> s.storeBytes() / MB,
                        "run's /dev/shm", s -> s.shmBytes() / MB,
                        "/dev/shm used", s -> s.devShmUsedBytes() / MB)),
                placement(samples),
                series("rows (thousands)", samples, Map.of(
                        "offered", s -> s.offered() / 1e3,
                        "stored (new)", s -> s.storedRows() / 1e3)));
        int rows = (panels.size() + COLUMNS - 1) / COLUMNS;
        BufferedImage image = new BufferedImage(PANEL_W * COLUMNS, PANEL_H * rows + 30, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, image.getWidth(), image.getHeight());
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
            g.drawString(title, 10, 20);
            double xMax = samples.isEmpty() ? 1 : Math.max(1e-9, samples.get(samples.size() - 1).seconds() / 60);
            for (int p = 0; p < panels.size(); p++) {
                int x0 = (p % COLUMNS) * PANEL_W;
                int y0 = 30 + (p / COLUMNS) * PANEL_H;
                draw(g, panels.get(p), x0, y0, xMax, trend);
            }
        } finally {
            g.dispose();
        }
        ImageIO.write(image, "png", png.toFile());
    }

    /** A panel: its title and its lines (x in minutes, y in the panel's unit). */
    private record Panel(String title, Map<String, double[][]> lines) {
    }

    private static Panel perJvm(String title, List<SoakSample> samples, TreeSet<String> names,
                                ToDoubleFunction<SoakSample.Jvm> f, double unit) {
        return perJvm(title, samples, names, j -> f.applyAsDouble(j) / unit);
    }

    private static Panel perJvm(String title, List<SoakSample> samples, TreeSet<String> names,
                                ToDoubleFunction<SoakSample.Jvm> f) {
        Map<String, double[][]> lines = new LinkedHashMap<>();
        for (String name : names) {
            double[][] xy = new double[2][samples.size()];
            for (int i = 0; i < samples.size(); i++) {
                SoakSample.Jvm j = samples.get(i).jvms().get(name);
                xy[0][i] = samples.get(i).seconds() / 60;
                xy[1][i] = j == null ? Double.NaN : f.applyAsDouble(j);
            }
            if (java.util.Arrays.stream(xy[1]).anyMatch(Double::isFinite)) {
                lines.put(name, xy);
            }
        }
        return new Panel(title, lines);
    }

    private static Panel series(String title, List<SoakSample> samples, Map<String, ToDoubleFunction<SoakSample>> fs) {
        Map<String, double[][]> lines = new LinkedHashMap<>();
        for (Map.Entry<String, ToDoubleFunction<SoakSample>> e : new java.util.TreeMap<>(fs).entrySet()) {
            double[][] xy = new double[2][samples.size()];
            for (int i = 0; i < samples.size(); i++) {
                xy[0][i] = samples.get(i).seconds() / 60;
                xy[1][i] = e.getValue().applyAsDouble(samples.get(i));
            }
            lines.put(e.getKey(), xy);
        }
        return new Panel(title, lines);
    }

    /** Placement p99 between each sample and the one before it (the histograms' buckets differenced). */
    private static Panel placement(List<SoakSample> samples) {
        int n = Math.max(0, samples.size() - 1);
        double[][] xy = new double[2][n];
        for (int i = 1; i < samples.size(); i++) {
            xy[0][i - 1] = samples.get(i).seconds() / 60;
            xy[1][i - 1] = 1e3 * SoakTrend.difference(samples.get(i - 1).placement(), samples.get(i).placement())
                    .quantile(SoakTrend.PLACEMENT, 0.99, x -> true);
        }
        return new Panel("placement p99 per sample interval (ms)", Map.of("p99", xy));
    }

    private static void draw(Graphics2D g, Panel panel, int x0, int y0, double xMax, SoakTrend trend) {
        int w = PANEL_W - MARGIN_L - MARGIN_R;
        int h = PANEL_H - MARGIN_T - MARGIN_B;
        int left = x0 + MARGIN_L;
        int top = y0 + MARGIN_T;
        double yMin = Double.MAX_VALUE;
        double yMax = -Double.MAX_VALUE;
        for (double[][] xy : panel.lines().values()) {
            for (double v : xy[1]) {
                if (Double.isFinite(v)) {
                    yMin = Math.min(yMin, v);
                    yMax = Math.max(yMax, v);
                }
            }
        }
        if (yMin > yMax) {
            yMin = 0;
            yMax = 1;
        }
        // from zero when the data sit near it; a flat line gets a band around it so its noise is not magnified
        if (yMin > 0 && yMin < 0.5 * yMax) {
            yMin = 0;
        }
        double pad = Math.max(0.05 * (yMax - yMin), 0.02 * Math.abs(yMax) + 1e-9);
        yMin -= pad;
        yMax += pad;
        g.setColor(new Color(0xeeeeee));
        shade(g, trend.earlyFrom() / 60, trend.earlyTo() / 60, xMax, left, top, w, h);
        shade(g, trend.lateFrom() / 60, xMax, xMax, left, top, w, h);
        g.setColor(Color.BLACK);
        g.setStroke(new BasicStroke(1f));
        g.drawRect(left, top, w, h);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 12));
        g.drawString(panel.title(), left, top - 8);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
        for (int t = 0; t <= 4; t++) {
            double yv = yMin + (yMax - yMin) * t / 4;
            int y = top + h - (int) Math.round(h * t / 4.0);
            g.drawLine(left - 3, y, left, y);
            g.drawString(label(yv), x0 + 4, y + 4);
            double xv = xMax * t / 4;
            int x = left + (int) Math.round(w * t / 4.0);
            g.drawLine(x, top + h, x, top + h + 3);
            g.drawString(String.format(Locale.ROOT, "%.1f", xv), x - 8, top + h + 15);
        }
        g.drawString("minutes", left + w - 40, top + h + 27);
        int k = 0;
        for (Map.Entry<String, double[][]> e : panel.lines().entrySet()) {
            Color c = PALETTE[k % PALETTE.length];
            g.setColor(c);
            g.setStroke(new BasicStroke(1.6f));
            double[][] xy = e.getValue();
            int px = -1;
            int py = -1;
            for (int i = 0; i < xy[0].length; i++) {
                if (!Double.isFinite(xy[1][i])) {
                    px = -1;
                    continue;
                }
                int x = left + (int) Math.round(w * xy[0][i] / xMax);
                int y = top + h - (int) Math.round(h * (xy[1][i] - yMin) / (yMax - yMin));
                if (px >= 0) {
                    g.drawLine(px, py, x, y);
                }
                g.fillRect(x - 1, y - 1, 3, 3);
                px = x;
                py = y;
            }
            g.fillRect(left + w + 8, top + 4 + 14 * k, 10, 4);
            g.setColor(Color.BLACK);
            g.drawString(e.getKey(), left + w + 22, top + 10 + 14 * k);
            k++;
        }
    }

    private static void shade(Graphics2D g, double from, double to, double xMax, int left, int top, int w, int h) {
        int a = left + (int) Math.round(w * Math.min(1, from / xMax));
        int b = left + (int) Math.round(w * Math.min(1, to / xMax));
        g.fillRect(a, top, Math.max(0, b - a), h);
    }

    private static String label(double v) {
        double a = Math.abs(v);
        return a >= 100 ? String.format(Locale.ROOT, "%.0f", v) : a >= 1 ? String.format(Locale.ROOT, "%.1f", v)
                : String.format(Locale.ROOT, "%.3f", v);
    }
}
