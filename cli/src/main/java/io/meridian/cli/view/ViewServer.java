package io.meridian.cli.view;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The HTTP server of {@code ./meridian view}, on loopback only (JDK's {@code com.sun.net.httpserver}): the page and
 * three.js from the jar ({@link #FILES}, read once at start), the map as one binary response ({@code GET /api/frame},
 * layout in {@link MapFrame}), and server-sent events ({@code GET /api/events}) that announce each map
 * {@link #publish}ed, so that a page following a live map fetches the new frame and animates to it without reloading.
 * <p>
 * Threads: {@link #publish} and the heartbeat write to the event streams under this object's lock; the HTTP
 * threads only read {@link #current} and register streams.
 */
public final class ViewServer implements AutoCloseable {
    /** Where the build puts the page (cli/src/main/web) and three.js's module files (from npm). */
    static final String WEB = "/io/meridian/cli/view/web/";
    static final List<String> FILES = List.of("index.html", "viewer.js", "viewer.css", "three/build/three.module.js",
            "three/build/three.core.js", "three/examples/jsm/controls/OrbitControls.js", "three/LICENSE");
    /** A comment line every 15 s finds event streams whose page has gone (the write fails). */
    static final long HEARTBEAT_SECONDS = 15;

    private final HttpServer http;
    private final ExecutorService handlers;
    private final ScheduledExecutorService heartbeat;
    private final Map<String, byte[]> files = new HashMap<>();
    private final List<HttpExchange> streams = new CopyOnWriteArrayList<>();
    private volatile Published current;
    private long seq;

    private record Published(long seq, byte[] frame, String event) {
    }

    private ViewServer(HttpServer http) throws IOException {
        this.http = http;
        for (String name : FILES) {
            try (InputStream in = ViewServer.class.getResourceAsStream(WEB + name)) {
                if (in == null) {
                    throw new IllegalStateException("the viewer's " + name + " is not in the jar (" + WEB
                            + "); the build copies it from cli/src/main/web and npm's three package: rebuild with"
                            + " ./meridian build");
                }
                files.put("/" + name, in.readAllBytes());
            }
        }
        handlers = Executors.newFixedThreadPool(4, daemon("meridian-view-http"));
        heartbeat = Executors.newSingleThreadScheduledExecutor(daemon("meridian-view-heartbeat"));
        http.setExecutor(handlers);
        http.createContext("/", this::handle);
    }

    /**
     * Listens on 127.0.0.1:{@code port} ({@code 0}: any free port).
     *
     * @throws java.net.BindException when the port is taken
     */
    public static ViewServer start(int port) throws IOException {
        HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 16);
        ViewServer server;
        try {
            server = new ViewServer(http);
        } catch (IOException | RuntimeException e) {
            http.stop(0);
            throw e;
        }
        http.start();
        server.heartbeat.scheduleAtFixedRate(server::ping, HEARTBEAT_SECONDS, HEARTBEAT_SECONDS, TimeUnit.SECONDS);
        return server;
    }

    /** The page's address, e.g. {@code http://127.0.0.1:8765/}. */
    public URI uri() {
        InetSocketAddress a = http.getAddress();
        return URI.create("http://" + a.getAddress().getHostAddress() + ":" + a.getPort() + "/");
    }

    /** Makes {@code frame} the map served, and tells every page that follows. */
    public synchronized void publish(MapFrame frame) {
        long s = ++seq;
        current = new Published(s, frame.encode(s), frame.event(s));
        broadcast("data: " + current.event + "\n\n");
    }

    /** Maps published so far. */
    public synchronized long published() {
        return seq;
    }

    /** Pages following the events now. */
    public int followers() {
        return streams.size();
    }

    private void handle(HttpExchange x) throws IOException {
        String path = x.getRequestURI().getPath();
        if (!"GET".equals(x.getRequestMethod()) && !"HEAD".equals(x.getRequestMethod())) {
            reply(x, 405, "text/plain", "only GET\n".getBytes(StandardCharsets.UTF_8));
            return;
        }
        if ("/api/events".equals(path)) {
            openStream(x);
            return;
        }
        if ("/api/frame".equals(path)) {
            Published p = current;
            if (p == null) {
                reply(x, 503, "text/plain", "no frame yet\n".getBytes(StandardCharsets.UTF_8));
            } else {
                reply(x, 200, "application/octet-stream", p.frame);
            }
            return;
        }
        byte[] body = files.get("/".equals(path) ? "/index.html" : path);
        if (body == null) {
            reply(x, 404, "text/plain", ("no " + path + "\n").getBytes(StandardCharsets.UTF_8));
            return;
        }
        reply(x, 200, contentType(path), body);
    }

    private void openStream(HttpExchange x) throws IOException {
        x.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
        x.getResponseHeaders().set("Cache-Control", "no-cache");
        x.sendResponseHeaders(200, 0);
        synchronized (this) {
            Published p = current;
            if (!write(x, "retry: 1000\n\n" + (p == null ? "" : "data: " + p.event + "\n\n"))) {
                return;
            }
            streams.add(x);
        }
        // the exchange stays open: publish() and ping() write to it until the page goes
    }

    private synchronized void ping() {
        broadcast(": ping\n\n");
    }

    private void broadcast(String text) {
        for (HttpExchange x : streams) {
            if (!write(x, text)) {
                streams.remove(x);
            }
        }
    }

    private static boolean write(HttpExchange x, String text) {
        try {
            OutputStream out = x.getResponseBody();
            out.write(text.getBytes(StandardCharsets.UTF_8));
            out.flush();
            return true;
        } catch (IOException e) {
            x.close();
            return false;
        }
    }

    private static void reply(HttpExchange x, int status, String type, byte[] body) throws IOException {
        x.getResponseHeaders().set("Content-Type", type);
        x.getResponseHeaders().set("Cache-Control", "no-cache");
        boolean head = "HEAD".equals(x.getRequestMethod());
        x.sendResponseHeaders(status, head ? -1 : body.length);
        try (OutputStream out = x.getResponseBody()) {
            if (!head) {
                out.write(body);
            }
        }
    }

    private static String contentType(String path) {
        if (path.endsWith(".html") || "/".equals(path)) {
            return "text/html; charset=utf-8";
        } else if (path.endsWith(".js")) {
            return "text/javascript; charset=utf-8";
        } else if (path.endsWith(".css")) {
            return "text/css; charset=utf-8";
        }
        return "text/plain; charset=utf-8";
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    @Override
    public void close() {
        heartbeat.shutdownNow();
        synchronized (this) {
            for (HttpExchange x : streams) {
                x.close();
            }
            streams.clear();
        }
        http.stop(0);
        handlers.shutdownNow();
    }
}
