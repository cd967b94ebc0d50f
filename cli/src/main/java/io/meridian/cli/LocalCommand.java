package io.meridian.cli;

import io.meridian.config.CommandLine;
import io.meridian.config.MeridianConfig;
import io.meridian.topology.LocalRun;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;

/** {@code ./meridian local [--config FILE]}: the ingestion topology in one JVM on a file source, until the file is done. */
final class LocalCommand implements Command {
    @Override
    public String usage() {
        return "local [--config FILE]\n"
                + "  run the topology in Storm's LocalCluster on a file source (ingest.local), until the file is done and"
                + " the live map has settled; default configuration: meridian-local.yaml";
    }

    @Override
    public int run(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse("local", args, Set.of("config"), Set.of());
        cl.requireNoPositional();
        MeridianConfig config = cl.has("config") ? MeridianConfig.load(Path.of(cl.requiredString("config")))
                : MeridianConfig.loadResource(MeridianConfig.LOCAL_DEFAULTS);
        int rows = config.ingest().local().n() + config.ingest().local().badRows();
        LocalRun.Result r = LocalRun.run(config, Duration.ofSeconds(120 + rows / 20),
                frame -> System.out.println("map " + FrameLines.line(frame)));
        System.out.println(r.counts() != null ? r.counts().toText()
                : "row counts: none (the LocalCluster served no metrics: metrics.localPort " + config.metrics().localPort()
                + " taken? see the log)");
        System.out.printf(Locale.ROOT, "%d rows in %.1f s (%.0f rows/s)%n", rows, r.elapsed().toMillis() / 1000.0,
                rows / (r.elapsed().toMillis() / 1000.0));
        System.out.println("row stores: " + r.rowStores() + " (" + r.storedOnDisk() + " rows stored, block-*.tri,"
                + " 16-bit little-endian, row i: its i distances to the points before it)");
        System.out.println("rejected rows: " + r.rejectedFile());
        System.out.println("metrics: served at " + r.metrics() + " while the topology ran (docs/metrics.md)");
        if (r.map() != null) {
            System.out.printf(Locale.ROOT, "live map: %s (frame %d, N = %d, stress %.5f, %d clusters)%n",
                    r.mapSnapshots().resolve("current"), r.map().frame(), r.map().points(), r.map().stress(),
                    r.map().clusters());
        }
        return 0;
    }
}
