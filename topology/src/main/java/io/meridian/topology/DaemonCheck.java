package io.meridian.topology;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * One check of one daemon: ZooKeeper is asked {@code ruok} (a four-letter word; the cluster's zoo.cfg allows it, and
 * a server that refuses it still proves its client port answers), every other daemon gets a TCP connect to its port
 * (Kafka's listener, Nimbus's thrift port, the Supervisor's {@code supervisor.thrift.port}). A SIGKILLed daemon's
 * port refuses at once; the timeout bounds a host that does not answer at all.
 */
final class DaemonCheck {
    /** What one check found: {@code detail} says what answered or why it is down, naming the address. */
    record Answer(boolean up, double seconds, String detail) {
    }

    private DaemonCheck() {
    }

    static Answer check(ClusterDaemon daemon, int timeoutMillis) {
        long started = System.nanoTime();
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(daemon.host(), daemon.port()), timeoutMillis);
            String detail = daemon.kind() == ClusterDaemon.Kind.ZOOKEEPER ? ruok(socket, timeoutMillis)
                    : "port answers";
            detail = daemon.address() + ": " + detail;
            return new Answer(true, seconds(started), detail);
        } catch (IOException | IllegalArgumentException e) {
            return new Answer(false, seconds(started), daemon.address() + ": " + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : ": " + e.getMessage()));
        }
    }

    private static String ruok(Socket socket, int timeoutMillis) throws IOException {
        socket.setSoTimeout(timeoutMillis);
        OutputStream out = socket.getOutputStream();
        out.write("ruok".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = socket.getInputStream();
        // ZooKeeper closes the connection after answering a four-letter word
        String reply = new String(in.readNBytes(256), StandardCharsets.US_ASCII).strip();
        if (reply.equals("imok")) {
            return "ruok: imok";
        }
        if (reply.contains("whitelist")) {
            return "client port answers (ruok is not in 4lw.commands.whitelist)";
        }
        throw new IOException(reply.isEmpty() ? "ruok: connection closed without an answer" : "ruok: '" + reply + "'");
    }

    private static double seconds(long startedNanos) {
        return (System.nanoTime() - startedNanos) / 1e9;
    }
}
