package io.meridian.cli;

import io.meridian.collective.CollectiveBlockSync;
import io.meridian.collective.CollectiveOptions;
import io.meridian.collective.Collectives;
import io.meridian.collective.MpiCollectives;
import io.meridian.collective.TimingBlockSync;
import io.meridian.collective.TwoLevelCollectives;
import io.meridian.config.CommandLine;
import io.meridian.config.UsageException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import mpi.MPI;
import mpi.MPIException;

/**
 * The distributed batch mode of {@code meridian mds} and {@code meridian pwc}: with {@code --procs P} the command
 * re-runs itself as P MPI ranks under mpirun (same options, plus the internal {@code --mpi-rank}); each rank owns one
 * row block and syncs through the two-level collectives ({@code --groups-per-node M}) or flat Open MPI
 * ({@code --flat-mpi}).
 */
final class BatchMpi implements AutoCloseable {
    static final Set<String> VALUED = Set.of("procs", "groups-per-node", "hostfile", "collective-timeout-ms");
    static final Set<String> FLAGS = Set.of("flat-mpi", "mpi-rank");
    static final String USAGE = " [--procs P [--groups-per-node M | --flat-mpi] [--hostfile FILE] [--collective-timeout-ms MS]]";

    private final Collectives collectives;
    final TimingBlockSync sync;
    final String mode;

    private BatchMpi(Collectives collectives, String mode) {
        this.collectives = collectives;
        this.sync = new TimingBlockSync(new CollectiveBlockSync(collectives));
        this.mode = mode;
    }

    /** Validates the distributed options; returns P (1: run in this process). */
    static int procs(CommandLine cl) {
        int procs = cl.intValue("procs", 1, 1, 4096);
        if (cl.flag("flat-mpi") && cl.has("groups-per-node")) {
            throw new UsageException("give --groups-per-node (two-level) or --flat-mpi, not both");
        }
        cl.intValue("groups-per-node", 1, 1, 1024);
        cl.longValue("collective-timeout-ms", 60_000, 1, 86_400_000L);
        if (cl.has("hostfile")) {
            CommandLine.checkReadableFile("--hostfile", Path.of(cl.string("hostfile", "")));
        }
        return procs;
    }

    /** Runs {@code command args} as {@code procs} MPI ranks and returns mpirun's exit status. */
    static int launch(String command, String[] args, int procs, CommandLine cl) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("mpirun", "--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"));
        if ("root".equals(System.getProperty("user.name"))) {
            cmd.add("--allow-run-as-root");
        }
        if (cl.has("hostfile")) {
            cmd.addAll(List.of("--hostfile", cl.string("hostfile", "")));
        }
        cmd.addAll(List.of("-np", String.valueOf(procs), Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        boolean libraryPath = false;
        for (String jvmArg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            libraryPath |= jvmArg.startsWith("-Djava.library.path=");
            cmd.add(jvmArg);
        }
        if (!libraryPath) {
            cmd.add("-Djava.library.path=/usr/lib/x86_64-linux-gnu");
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName(), command));
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--procs") || a.equals("--hostfile")) {
                i++; // the ranks run one process each, placed by mpirun
            } else if (!a.startsWith("--procs=") && !a.startsWith("--hostfile=")) {
                cmd.add(a);
            }
        }
        cmd.add("--mpi-rank");
        if (Files.notExists(Path.of("/usr/bin/mpirun")) && Files.notExists(Path.of("/usr/local/bin/mpirun"))) {
            throw new UsageException("--procs needs Open MPI (mpirun): run deploy/install/10-openmpi-java.sh");
        }
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        return p.waitFor();
    }

    /** In a rank started by {@link #launch}: MPI up, this rank's collectives ready. */
    static BatchMpi rank(CommandLine cl, int capacity) throws MPIException {
        return rank(cl, capacity, 1024);
    }

    /**
     * {@link #rank(CommandLine, int)} with room for allreduces of {@code reduceCapacity} doubles (an allreduce's result
     * lands in the gather's result area, so that grows with it).
     */
    static BatchMpi rank(CommandLine cl, int capacity, int reduceCapacity) throws MPIException {
        MPI.Init(new String[0]);
        int reduce = Math.max(reduceCapacity, 1024);
        CollectiveOptions options = CollectiveOptions.of(Math.max(capacity, reduce), reduce)
                .timeout(Duration.ofMillis(cl.longValue("collective-timeout-ms", 60_000, 1, 86_400_000L)));
        if (cl.flag("flat-mpi")) {
            return new BatchMpi(MpiCollectives.flat(MPI.COMM_WORLD, options), "flat Open MPI");
        }
        TwoLevelCollectives c = MpiCollectives.twoLevel(MPI.COMM_WORLD,
                options.groupsPerNode(cl.intValue("groups-per-node", 1, 1, 1024)));
        return new BatchMpi(c, "two-level, " + c.groups() + " memory group" + (c.groups() == 1 ? "" : "s"));
    }

    /**
     * Rank 0's line about the communication, with the slowest rank's time per {@code iteration} (e.g. "SMACOF
     * iteration"); collective: every rank calls it.
     */
    String communicationSummary(String command, String iteration, long iterations) throws MPIException {
        double[] ms = {sync.nanos() / 1e6};
        MPI.COMM_WORLD.allReduce(ms, 1, MPI.DOUBLE, MPI.MAX);
        return String.format(Locale.ROOT, "%s: %d processes (%s): communication %.3f ms per %s"
                        + " (slowest rank, %d collective calls, %.1f s in all)", command, sync.blocks(), mode,
                ms[0] / Math.max(1, iterations), iteration, sync.calls(), ms[0] / 1e3);
    }

    @Override
    public void close() throws MPIException {
        collectives.close();
        MPI.Finalize();
    }
}
