package io.meridian.collective;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;

/** Whether a host answers over TCP: one connection, accepted or refused (either way the host is there). */
public final class HostProbe {
    private HostProbe() {
    }

    /** Null when {@code host} answered on {@code port} within {@code timeoutMs}, else what went wrong, in one line. */
    public static String unanswered(String host, int port, int timeoutMs) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, port), timeoutMs);
            return null;
        } catch (ConnectException e) {
            String m = String.valueOf(e.getMessage());
            return m.contains("refused") ? null : m;
        } catch (IOException e) {
            return e.getClass().getSimpleName() + ": " + e.getMessage();
        }
    }
}
