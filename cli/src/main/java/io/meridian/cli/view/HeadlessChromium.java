package io.meridian.cli.view;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Debian's Chromium, headless, driven over the Chrome DevTools protocol: one browser process with its own throw-away
 * profile, one page, commands as JSON over the JDK's WebSocket client (no chromedriver, no Selenium: the viewer's
 * tests and {@code ./meridian bench view} need navigate, evaluate, click and screenshot, about 200 lines here). WebGL
 * runs on Chromium's software renderer (SwiftShader) where there is no GPU.
 * <p>
 * The binary is {@code $MERIDIAN_CHROMIUM}, else {@code chromium} on the PATH ({@code deploy/install/40-browser.sh}).
 * Commands are called from one thread at a time; replies and events arrive on the WebSocket's thread.
 */
public final class HeadlessChromium implements AutoCloseable {
    public static final String BINARY_ENV = "MERIDIAN_CHROMIUM";
    static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(60);
    private static final Pattern DEVTOOLS = Pattern.compile("DevTools listening on (ws://\\S+)");

    private final Process process;
    private final Path profile;
    private final Deque<String> stderrTail = new ArrayDeque<>();
    private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    private final List<String> pageErrors = new ArrayList<>();
    private final AtomicInteger ids = new AtomicInteger();
    private final Thread reaper;
    private WebSocket socket;
    private String session;

    private HeadlessChromium(Process process, Path profile) {
        this.process = process;
        this.profile = profile;
        // a JVM that ends without close() (Ctrl-C on a bench, a test fork killed) takes its browser with it
        this.reaper = new Thread(() -> {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }, "chromium-reaper");
        Runtime.getRuntime().addShutdownHook(reaper);
    }

    /**
     * Starts the browser with a {@code width} x {@code height} window and opens a blank page. {@code flags} are added
     * to Chromium's command line (e.g. {@code --disable-frame-rate-limit}).
     */
    public static HeadlessChromium launch(int width, int height, List<String> flags) throws IOException {
        String binary = System.getenv().getOrDefault(BINARY_ENV, "chromium");
        Path profile = Files.createTempDirectory("meridian-chromium-");
        List<String> command = new ArrayList<>(List.of(binary, "--headless", "--remote-debugging-port=0",
                "--user-data-dir=" + profile, "--window-size=" + width + "," + height, "--hide-scrollbars",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
                "--disable-background-networking", "--disable-component-update", "--mute-audio",
                "--enable-unsafe-swiftshader"));
        if ("root".equals(System.getProperty("user.name"))) {
            command.add("--no-sandbox"); // Chromium refuses to run as root with its sandbox
        }
        command.addAll(flags);
        Process process;
        try {
            process = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            deleteTree(profile);
            throw new IOException("cannot start " + binary + " (" + e.getMessage() + "): install Chromium with"
                    + " deploy/install/40-browser.sh, or name the binary in $" + BINARY_ENV, e);
        }
        HeadlessChromium browser = new HeadlessChromium(process, profile);
        try {
            browser.connect(browser.awaitDevToolsUrl());
            return browser;
        } catch (IOException | RuntimeException | Error e) {
            browser.close();
            throw e;
        }
    }

    private URI awaitDevToolsUrl() throws IOException {
        CompletableFuture<URI> url = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader err = new BufferedReader(new InputStreamReader(process.getErrorStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = err.readLine()) != null) {
                    Matcher m = DEVTOOLS.matcher(line);
                    if (m.find()) {
                        url.complete(URI.create(m.group(1)));
                    }
                    synchronized (stderrTail) {
                        stderrTail.addLast(line);
                        if (stderrTail.size() > 30) {
                            stderrTail.removeFirst();
                        }
                    }
                }
            } catch (IOException e) {
                // the browser is gone
            }
            url.completeExceptionally(new IOException("chromium exited before it listened: " + stderrTail()));
        }, "chromium-stderr");
        reader.setDaemon(true);
        reader.start();
        try {
            return url.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IOException(e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new IOException("chromium did not announce its DevTools address within 30 s: " + stderrTail());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    private void connect(URI url) throws IOException {
        socket = HttpClient.newHttpClient().newWebSocketBuilder().connectTimeout(Duration.ofSeconds(10))
                .buildAsync(url, new Listener()).join();
        ObjectNode blank = MapFiles.JSON.createObjectNode().put("url", "about:blank");
        String target = send(null, "Target.createTarget", blank).path("targetId").asText();
        ObjectNode attach = MapFiles.JSON.createObjectNode().put("targetId", target).put("flatten", true);
        session = send(null, "Target.attachToTarget", attach).path("sessionId").asText();
        command("Page.enable", null);
        command("Runtime.enable", null);
    }

    /** Loads {@code url} in the page and waits for its load event to have fired (document complete). */
    public void navigate(URI url) throws IOException {
        command("Page.navigate", MapFiles.JSON.createObjectNode().put("url", url.toString()));
        waitFor("document.readyState === 'complete'", Duration.ofSeconds(30));
    }

    /** The value of {@code expression} in the page (a promise is awaited), as JSON. */
    public JsonNode evaluate(String expression) throws IOException {
        ObjectNode params = MapFiles.JSON.createObjectNode().put("expression", expression).put("awaitPromise", true)
                .put("returnByValue", true);
        JsonNode reply = command("Runtime.evaluate", params);
        if (reply.has("exceptionDetails")) {
            JsonNode d = reply.get("exceptionDetails");
            throw new IOException("page: " + d.path("exception").path("description").asText(d.path("text").asText())
                    + " (evaluating " + expression + ")");
        }
        return reply.path("result").path("value");
    }

    /** Polls {@code expression} until it is true. */
    public void waitFor(String expression, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!evaluate("!!(" + expression + ")").asBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IOException("the page did not reach " + expression + " within " + timeout.toSeconds()
                        + " s; page errors: " + pageErrors());
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }
    }

    /** The page as it is shown now, a PNG. */
    public byte[] screenshot() throws IOException {
        JsonNode reply = command("Page.captureScreenshot", MapFiles.JSON.createObjectNode().put("format", "png"));
        return Base64.getDecoder().decode(reply.path("data").asText());
    }

    /** Moves the mouse to CSS pixel (x, y) of the page. */
    public void moveMouse(double x, double y) throws IOException {
        mouse("mouseMoved", x, y, "none", 0);
    }

    /** A left click at CSS pixel (x, y): the page gets pointer, mouse and click events as from a user. */
    public void click(double x, double y) throws IOException {
        mouse("mouseMoved", x, y, "none", 0);
        mouse("mousePressed", x, y, "left", 1);
        mouse("mouseReleased", x, y, "left", 1);
    }

    /** Types {@code text} into the focused element. */
    public void type(String text) throws IOException {
        command("Input.insertText", MapFiles.JSON.createObjectNode().put("text", text));
    }

    /** Uncaught exceptions and console errors of the page so far. */
    public List<String> pageErrors() {
        synchronized (pageErrors) {
            return List.copyOf(pageErrors);
        }
    }

    private void mouse(String type, double x, double y, String button, int clicks) throws IOException {
        command("Input.dispatchMouseEvent", MapFiles.JSON.createObjectNode().put("type", type).put("x", x)
                .put("y", y).put("button", button).put("buttons", "mousePressed".equals(type) ? 1 : 0)
                .put("clickCount", clicks));
    }

    private JsonNode command(String method, ObjectNode params) throws IOException {
        return send(session, method, params);
    }

    private JsonNode send(String sessionId, String method, ObjectNode params) throws IOException {
        int id = ids.incrementAndGet();
        ObjectNode message = MapFiles.JSON.createObjectNode().put("id", id).put("method", method);
        if (params != null) {
            message.set("params", params);
        }
        if (sessionId != null) {
            message.put("sessionId", sessionId);
        }
        CompletableFuture<JsonNode> reply = new CompletableFuture<>();
        pending.put(id, reply);
        try {
            socket.sendText(message.toString(), true).get(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            JsonNode r = reply.get(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            if (r.has("error")) {
                throw new IOException(method + ": " + r.get("error").path("message").asText());
            }
            return r.path("result");
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException(method + " got no reply within " + COMMAND_TIMEOUT.toSeconds() + " s (" + e
                    + "); chromium: " + (process.isAlive() ? "running" : "exited " + process.exitValue()) + ", "
                    + stderrTail(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } finally {
            pending.remove(id);
        }
    }

    private void onMessage(String text) {
        JsonNode m;
        try {
            m = MapFiles.JSON.readTree(text);
        } catch (IOException e) {
            return;
        }
        if (m.has("id")) {
            CompletableFuture<JsonNode> reply = pending.get(m.get("id").asInt());
            if (reply != null) {
                reply.complete(m);
            }
            return;
        }
        String method = m.path("method").asText();
        JsonNode p = m.path("params");
        String error = null;
        if ("Runtime.exceptionThrown".equals(method)) {
            JsonNode d = p.path("exceptionDetails");
            error = d.path("exception").path("description").asText(d.path("text").asText());
        } else if ("Runtime.consoleAPICalled".equals(method) && "error".equals(p.path("type").asText())) {
            error = "console.error: " + p.path("args").path(0).path("value").asText(p.path("args").toString());
        }
        if (error != null) {
            synchronized (pageErrors) {
                pageErrors.add(error);
            }
        }
    }

    private String stderrTail() {
        synchronized (stderrTail) {
            return stderrTail.isEmpty() ? "(nothing on stderr)" : String.join(" | ", stderrTail);
        }
    }

    /** Collects a message's parts, one message at a time (the protocol's replies can be megabytes). */
    private final class Listener implements WebSocket.Listener {
        private final StringBuilder text = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            text.append(data);
            if (last) {
                onMessage(text.toString());
                text.setLength(0);
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            pending.values().forEach(f -> f.completeExceptionally(new IOException("DevTools connection closed")));
            return null;
        }
    }

    @Override
    public void close() {
        if (socket != null) {
            try {
                send(null, "Browser.close", null);
            } catch (IOException e) {
                // it is going anyway
            }
            socket.abort();
        }
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        deleteTree(profile);
        try {
            Runtime.getRuntime().removeShutdownHook(reaper);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs anyway
        }
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory left behind
        }
    }
}
