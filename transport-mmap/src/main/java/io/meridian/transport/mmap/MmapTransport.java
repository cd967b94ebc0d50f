package io.meridian.transport.mmap;

import java.util.Map;
import org.apache.storm.Config;

/** Turns the mmap transport on in a topology's configuration (or a storm.yaml map). */
public final class MmapTransport {
    /**
     * The JVM flags a worker needs: what Chronicle Queue needs on Java 17, its analytics phone-home and banner off, and
     * the DA-MDS kernel's vector module. Written into the jar by the build from the parent pom's
     * {@code meridian.jvm.opens}, the one list the launcher and the tests use too.
     */
    public static final String JVM_FLAGS = readJvmFlags();

    private MmapTransport() {
    }

    /**
     * Selects {@link MmapContext} as the topology's transport and adds {@link #JVM_FLAGS} to
     * {@code topology.worker.childopts} (unless they are there already).
     */
    public static void enable(Map<String, Object> topologyConf) {
        topologyConf.put(Config.STORM_MESSAGING_TRANSPORT, MmapContext.class.getName());
        Object opts = topologyConf.get(Config.TOPOLOGY_WORKER_CHILDOPTS);
        String current = opts == null ? "" : opts instanceof java.util.List<?> l ? String.join(" ", l.stream().map(String::valueOf).toList()) : opts.toString();
        if (!current.contains("--add-exports=java.base/sun.nio.ch=ALL-UNNAMED")) {
            topologyConf.put(Config.TOPOLOGY_WORKER_CHILDOPTS, (current + " " + JVM_FLAGS).trim());
        }
    }

    private static String readJvmFlags() {
        java.util.Properties p = new java.util.Properties();
        try (java.io.InputStream in = MmapTransport.class.getResourceAsStream("jvm-flags.properties")) {
            if (in == null) {
                throw new IllegalStateException("jvm-flags.properties is missing from the meridian-transport-mmap jar");
            }
            p.load(in);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        String flags = p.getProperty("flags", "");
        if (flags.isBlank() || flags.contains("${")) {
            throw new IllegalStateException("jvm-flags.properties was not filtered by the build: '" + flags + "'");
        }
        return flags.trim();
    }
}
