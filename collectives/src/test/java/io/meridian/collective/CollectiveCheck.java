package io.meridian.collective;

import java.time.Duration;
import mpi.Intracomm;
import mpi.MPI;

/**
 * Run under mpirun by the integration tests: for every communicator size p = 1 .. world size (the first p ranks) and
 * every mode (flat, two-level with M = 1, 2, 3 groups per node), checks every collective against values each rank
 * computes itself, with uneven part sizes, through both the off-heap API and the heap {@link BlockSync} adapter.
 * Prints "CHECKED ..." lines on rank 0; any mismatch throws (non-zero exit). With {@code --stuck-block B}, block B stops
 * calling at the second round (simulating a hung member) and the others must fail with the timeout naming it.
 */
public final class CollectiveCheck {
    public static void main(String[] args) throws Exception {
        MPI.Init(new String[0]);
        int world = MPI.COMM_WORLD.getSize();
        int me = MPI.COMM_WORLD.getRank();
        String modes = arg(args, "--modes", "flat,1,2,3");
        int stuck = Integer.parseInt(arg(args, "--stuck-block", "-1"));
        long timeoutMs = Long.parseLong(arg(args, "--timeout-ms", "20000"));
        int minP = Integer.parseInt(arg(args, "--min-procs", "1"));
        java.nio.file.Path regionRoot = java.nio.file.Path.of(arg(args, "--region-root", "/dev/shm"));
        try {
            for (int p = minP; p <= world; p++) {
                for (String mode : modes.split(",")) {
                    Intracomm sub = MPI.COMM_WORLD.split(me < p ? 0 : MPI.UNDEFINED, me);
                    if (me < p) {
                        CollectiveOptions options = CollectiveOptions.of(64 * 1024, 4096).timeout(Duration.ofMillis(timeoutMs))
                                .regionRoot(regionRoot);
                        Collectives c = mode.equals("flat") ? MpiCollectives.flat(sub, options)
                                : MpiCollectives.twoLevel(sub, options.groupsPerNode(Integer.parseInt(mode)));
                        String groups = c instanceof TwoLevelCollectives t ? t.groups() + " groups" : "flat";
                        CollectiveChecks.check(c, stuck);
                        long allocated = CollectiveChecks.allocatedPerRound(c);
                        if (allocated > 64) {
                            throw new AssertionError("rank " + me + " allocated " + allocated + " bytes per round of calls"
                                    + " (p=" + p + ", mode " + mode + ")");
                        }
                        c.close();
                        sub.free();
                        if (me == 0) {
                            System.out.println("CHECKED p=" + p + " mode=" + mode + " (" + groups + "), "
                                    + allocated + " bytes allocated per round of 6 calls");
                        }
                    }
                    MPI.COMM_WORLD.barrier();
                }
            }
        } catch (CollectiveException e) {
            System.out.println("COLLECTIVE FAILURE on rank " + me + ": " + e.getMessage());
            System.out.flush();
            System.exit(3);
        }
        MPI.Finalize();
    }

    private static String arg(String[] args, String name, String dflt) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals(name)) {
                return args[i + 1];
            }
        }
        return dflt;
    }
}
