package io.meridian.transport.mmap;

import java.util.Map;
import org.apache.storm.Config;

/** Turns the mmap transport on in a topology's configuration (or a storm.yaml map). */
public final class MmapTransport {
    /**
     * What Chronicle Queue needs on Java 17 (the parent pom's {@code meridian.jvm.opens}; a test keeps the two equal),
     * with its analytics phone-home and banner off.
     */
    public static final String JVM_FLAGS = "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED"
        + " --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED --add-exports=java.base/jdk.internal.util=ALL-UNNAMED"
        + " --add-exports=java.base/sun.nio.ch=ALL-UNNAMED --add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED"
        + " --add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED"
        + " --add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED"
        + " --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED"
        + " --add-opens=java.base/java.util=ALL-UNNAMED -Dchronicle.analytics.disable=true -Dchronicle.announcer.disable=true";

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
}
