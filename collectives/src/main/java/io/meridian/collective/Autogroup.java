package io.meridian.collective;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The nice value of this process's Linux autogroup (its session's scheduling group, where
 * {@code kernel.sched_autogroup_enabled} is 1). A leader daemon busy-polls MPI; started in a session of its own at
 * nice 0 beside workers whose autogroup is at nice 10 (the cluster's MERIDIAN_SUPERVISOR_AUTOGROUP_NICE), it took the
 * cores from the members it serves: TwoHostClusterIT ran over 11 minutes instead of 3. On one host the
 * daemon polls no MPI and {@code meridian-leaders} leaves it at 0. Raising the value needs no
 * privilege.
 */
final class Autogroup {
    private static final Path ENABLED = Path.of("/proc/sys/kernel/sched_autogroup_enabled");
    private static final Path SELF = Path.of("/proc/self/autogroup");

    private Autogroup() {
    }

    /** Sets this process's autogroup to {@code nice} (0: leaves it); returns null when done or not needed, else why not. */
    static String lower(int nice) {
        if (nice == 0 || !Files.isReadable(ENABLED) || !Files.exists(SELF)) {
            return null;
        }
        try {
            if (!"1".equals(Files.readString(ENABLED).trim())) {
                return null;
            }
            Files.writeString(SELF, Integer.toString(nice));
            return null;
        } catch (IOException e) {
            return "could not set this process's autogroup to nice " + nice + " (" + SELF + "): " + e.getMessage();
        }
    }
}
