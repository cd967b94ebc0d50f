package io.meridian.collective;

/**
 * The one rule for a collective job's id: it names a directory of regions and the leader scripts' pid and log files,
 * so it is one path element. {@code main} is the rule for {@code deploy/bin/meridian-leaders}, which runs it before
 * reading or signalling anything of a job.
 */
public final class JobIds {
    public static final int MAX_BYTES = 64;

    private JobIds() {
    }

    /** Throws IllegalArgumentException naming the id and the rule unless {@code jobId} keeps to it. */
    public static void validate(String jobId) {
        if (jobId == null || !jobId.matches("[A-Za-z0-9._-]{1," + MAX_BYTES + "}") || jobId.startsWith(".")) {
            throw new IllegalArgumentException("job id '" + jobId + "': use 1-" + MAX_BYTES
                    + " letters, digits, '.', '_' or '-', not starting with '.'");
        }
    }

    /** {@code JobIds ID}: exit 0 for a valid id; otherwise the reason on stderr and exit 2. */
    public static void main(String[] args) {
        try {
            if (args.length != 1) {
                throw new IllegalArgumentException("usage: JobIds ID");
            }
            validate(args[0]);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
        }
    }
}
