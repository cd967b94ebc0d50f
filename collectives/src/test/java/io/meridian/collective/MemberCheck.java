package io.meridian.collective;

import java.nio.file.Path;
import java.time.Duration;

/**
 * A member that is not an MPI rank (as a Storm worker would be), run as its own JVM by the leader-daemon integration
 * test: attaches to its node group's region of a job and runs {@link CollectiveChecks}, or with {@code --forever} keeps
 * calling collectives until one fails (the test kills a member to see the others fail).
 */
public final class MemberCheck {
    public static void main(String[] args) throws InterruptedException {
        String job = args[0];
        int nodeGroup = Integer.parseInt(args[1]);
        int member = Integer.parseInt(args[2]);
        long timeoutMs = Long.parseLong(args[3]);
        Path root = Path.of(args[4]);
        boolean forever = args.length > 5 && args[5].equals("--forever");
        try (TwoLevelCollectives c = TwoLevelCollectives.attach(job, nodeGroup, member, root, Duration.ofMillis(timeoutMs))) {
            if (forever) {
                long rounds = 0;
                while (true) {
                    c.reduceInputLongs().put(0, 1);
                    long got = c.allreduceLongs(1, ReduceOp.SUM).get(0);
                    if (got != c.size()) {
                        throw new AssertionError("allreduce of ones gave " + got + " for " + c.size() + " members");
                    }
                    if (++rounds == 10) {
                        System.out.println("RUNNING block " + c.rank() + " pid " + ProcessHandle.current().pid());
                        System.out.flush();
                    }
                }
            }
            CollectiveChecks.check(c, -1);
            System.out.println("CHECKED block " + c.rank() + " of " + c.size() + " (group " + c.group() + " of " + c.groups() + ")");
        } catch (CollectiveException e) {
            System.out.println("COLLECTIVE FAILURE: " + e.getMessage());
            System.out.flush();
            System.exit(3);
        }
    }
}
