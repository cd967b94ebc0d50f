package io.meridian.cli;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Whether anything listens at a service's addresses, asked with one TCP connection each and a short timeout before a
 * client library is created: Kafka's and Storm's clients learn that nothing listens only by retrying for 10-20 s and
 * logging every attempt.
 */
final class Endpoints {
    /** Long enough for a host across a LAN, short enough that a command with nothing to talk to ends at once. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);

    private Endpoints() {
    }

    /**
     * Null when one of {@code addresses} ({@code HOST:PORT}, comma-separated; {@code [v6]:PORT} too) accepts a
     * connection within {@code timeout}; otherwise why none did, address by address
     * ({@code "localhost:9092 refuses connections"}).
     */
    static String noneAnswers(String addresses, Duration timeout) {
        List<String> why = new ArrayList<>();
        for (String address : addresses.split(",")) {
            String a = address.trim();
            if (a.isEmpty()) {
                continue;
            }
            String failure = connect(a, timeout);
            if (failure == null) {
                return null;
            }
            why.add(failure);
        }
        return why.isEmpty() ? "no address given" : String.join("; ", why);
    }

    /** Null when {@code host:port} accepts a TCP connection within {@code timeout}, else why not. */
    static String connect(String hostPort, Duration timeout) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0 || colon == hostPort.length() - 1) {
            return hostPort + " is not HOST:PORT";
        }
        String host = hostPort.substring(0, colon).replace("[", "").replace("]", "");
        int port;
        try {
            port = Integer.parseInt(hostPort.substring(colon + 1));
        } catch (NumberFormatException e) {
            return hostPort + " is not HOST:PORT";
        }
        InetSocketAddress address = new InetSocketAddress(host, port);
        if (address.isUnresolved()) {
            return hostPort + ": unknown host " + host;
        }
        try (Socket s = new Socket()) {
            s.connect(address, (int) timeout.toMillis());
            return null;
        } catch (ConnectException e) {
            return hostPort + " refuses connections";
        } catch (SocketTimeoutException e) {
            return hostPort + " does not answer within " + timeout.toMillis() / 1000.0 + " s";
        } catch (NoRouteToHostException e) {
            return hostPort + ": no route to host";
        } catch (UnknownHostException e) {
            return hostPort + ": unknown host " + host;
        } catch (IOException e) {
            return hostPort + ": " + e.getMessage();
        }
    }
}
