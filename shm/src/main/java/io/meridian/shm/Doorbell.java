package io.meridian.shm;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.function.Consumer;

/**
 * How a waiter sleeps without missing its event: a Unix domain socket at a path it names, that the processes it waits
 * for ring (one byte) once it has announced in shared memory that it is about to block, and it has looked at its
 * condition once more after the announcement (the transport's reader: {@code ReceiverControl.announceSleep}; an idle
 * collectives leader daemon: its region's leader-sleeping flag). While the waiter polls, nobody rings and the data path
 * makes no system call; a sleeping waiter costs nothing and wakes within a scheduler tick of the first ring, instead of
 * polling through parks that burn CPU on a host with fewer cores than busy threads.
 *
 * <p>Owned by the waiting thread: {@link #await} and {@link #close} (after the waiter stopped); {@link #interrupt}
 * from any thread. Reports what fails by exceptions; its owners log.
 */
public final class Doorbell implements AutoCloseable {
    /** sun_path holds 108 bytes with its terminating NUL. */
    private static final int MAX_PATH_BYTES = 107;

    private final Path path;
    private final Path link; // the same as path unless the socket lies in shortDir()
    private final ServerSocketChannel server;
    private final Selector selector;
    /** Whether this doorbell made its selector (else it shares another's, which closes it). */
    private final boolean ownsSelector;
    private final ByteBuffer drain = ByteBuffer.allocateDirect(256);
    private final Consumer<SelectionKey> onReady = Doorbell::dispatch;
    private volatile long rings; // written by the thread in await on the selector (a sharer's: the owner's)

    private Doorbell(Path path, Path link, ServerSocketChannel server, Selector selector, boolean ownsSelector) {
        this.path = path;
        this.link = link;
        this.server = server;
        this.selector = selector;
        this.ownsSelector = ownsSelector;
    }

    /**
     * Binds the doorbell at {@code link}, replacing a socket file a killed owner left. When {@code link} is longer than
     * a socket address holds (a long transport root or topology id: {@code bench stream}'s receiver directories are 130
     * bytes), the socket lies in {@link #shortDir()} under a name derived from {@code link}, and {@code link} is a
     * symbolic link to it that ringers follow. Throws when the OS cannot bind it (the owner then polls).
     */
    public static Doorbell bind(Path link) throws IOException {
        return bind(link, null);
    }

    /**
     * As {@link #bind(Path)}, but when {@code sharing} is given the socket waits on {@code sharing}'s selector: one
     * thread that serves several waiters' events sleeps in {@code sharing.await} until any of them rings (a leader
     * daemon of two memory groups). Close the sharers before {@code sharing}.
     */
    public static Doorbell bind(Path link, Doorbell sharing) throws IOException {
        Path path = fits(link) ? link : shortDir().resolve(shortName(link));
        if (!fits(path)) {
            throw new IOException(path + " is too long for a Unix socket");
        }
        ServerSocketChannel server = null;
        try {
            if (path != link) {
                OwnerOnlyFiles.ensureOwned(path.getParent());
                sweepUnanswered(path.getParent());
                Files.deleteIfExists(link);
            }
            Files.deleteIfExists(path);
            server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            server.bind(UnixDomainSocketAddress.of(path));
            server.configureBlocking(false);
            if (path != link) {
                Files.createSymbolicLink(link, path);
            }
            Selector selector = sharing == null ? Selector.open() : sharing.selector;
            Doorbell bell = new Doorbell(path, link, server, selector, sharing == null);
            server.register(selector, SelectionKey.OP_ACCEPT, bell);
            return bell;
        } catch (IOException | UnsupportedOperationException e) {
            if (server != null) {
                try {
                    server.close();
                    Files.deleteIfExists(path);
                } catch (IOException ignored) {
                    // nothing more to release
                }
            }
            throw e instanceof IOException io ? io : new IOException("cannot bind a Unix socket at " + path, e);
        }
    }

    /** Where doorbells whose own path is too long live: a per-user owner-only directory with a short path. */
    public static Path shortDir() {
        return OwnerOnlyFiles.perUserDirectory("meridian-bells");
    }

    /** The socket's name in {@link #shortDir()}: 16 hex digits of a SHA-256 of {@code link}'s absolute path. */
    public static String shortName(Path link) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256")
                .digest(link.toAbsolutePath().normalize().toString().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(h, 0, 8) + ".sock";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    /**
     * Deletes the sockets in {@code dir} that nobody listens on (connecting is refused): those of owners that were
     * killed or halted before their orderly close, whose links are gone (a killed topology's receivers, or a bench's
     * that deleted its transport root). Returns how many it deleted.
     */
    public static int sweepUnanswered(Path dir) {
        int deleted = 0;
        try (DirectoryStream<Path> sockets = Files.newDirectoryStream(dir, "*.sock")) {
            for (Path socket : sockets) {
                try (SocketChannel probe = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
                    // a live doorbell: its owner accepts and then sees the hang-up, which it handles
                } catch (IOException refused) {
                    if (Files.deleteIfExists(socket)) {
                        deleted++;
                    }
                }
            }
        } catch (IOException | UnsupportedOperationException e) {
            return deleted; // best effort, like the stale sweep
        }
        return deleted;
    }

    private static boolean fits(Path socket) {
        return socket.toString().getBytes(StandardCharsets.UTF_8).length <= MAX_PATH_BYTES;
    }

    /** The socket a ringer connects to: {@code link} itself or where it points; null while absent. */
    public static Path socketOf(Path link) {
        try {
            return Files.isSymbolicLink(link) ? Files.readSymbolicLink(link) : Files.exists(link) ? link : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** Deletes the socket a dead owner's {@code link} points to (not the link); for the stale sweeps. */
    public static void deleteLinkedSocket(Path link) {
        try {
            if (Files.isSymbolicLink(link)) {
                Files.deleteIfExists(Files.readSymbolicLink(link));
            }
        } catch (IOException ignored) {
            // best effort, like the rest of the sweep
        }
    }

    /** Blocks until a ringer rings, connects or hangs up, or {@code timeoutMillis} pass. */
    public void await(long timeoutMillis) throws IOException {
        selector.select(onReady, Math.max(1, timeoutMillis));
    }

    /** Bytes rung so far. */
    public long rings() {
        return rings;
    }

    /** Returns a blocked {@link #await} at once (the owner is closing). */
    public void interrupt() {
        selector.wakeup();
    }

    /** A ready key of the selector, to the doorbell whose socket it is (the selector may be shared). */
    private static void dispatch(SelectionKey key) {
        ((Doorbell) key.attachment()).ready(key);
    }

    private void ready(SelectionKey key) {
        try {
            if (key.isAcceptable()) {
                SocketChannel bell = server.accept();
                if (bell != null) {
                    bell.configureBlocking(false);
                    bell.register(selector, SelectionKey.OP_READ, this);
                }
            } else if (key.isReadable()) {
                SocketChannel bell = (SocketChannel) key.channel();
                drain.clear();
                int n = bell.read(drain);
                if (n > 0) {
                    rings += n;
                } else if (n < 0) {
                    key.cancel();
                    bell.close();
                }
            }
        } catch (IOException e) {
            key.cancel();
            try {
                key.channel().close();
            } catch (IOException ignored) {
                // a sender that went away
            }
        }
    }

    /** Closes the socket and its connections and deletes its file and link. */
    @Override
    public void close() throws IOException {
        for (SelectionKey k : selector.keys()) {
            if (k.attachment() == this) {
                k.channel().close();
            }
        }
        if (ownsSelector) {
            selector.close();
        }
        server.close();
        Files.deleteIfExists(path);
        Files.deleteIfExists(link);
    }

    /** A ringer's end (the transport: connected on the sender's poller thread, rung from its transfer thread). */
    public static final class Ringer implements AutoCloseable {
        private final SocketChannel channel;
        private final ByteBuffer ding = ByteBuffer.allocateDirect(1);

        private Ringer(SocketChannel channel) {
            this.channel = channel;
        }

        /** @return the connected ringer, or null while nobody listens at {@code link} (yet) */
        public static Ringer connect(Path link) {
            Path path = socketOf(link);
            if (path == null || !fits(path)) {
                return null;
            }
            try {
                SocketChannel channel = SocketChannel.open(UnixDomainSocketAddress.of(path));
                channel.configureBlocking(false);
                return new Ringer(channel);
            } catch (IOException | UnsupportedOperationException e) {
                return null;
            }
        }

        /** @return false if the owner is gone; a full socket buffer means it has rings pending, which is fine */
        public boolean ring() {
            ding.clear();
            try {
                channel.write(ding);
                return true;
            } catch (IOException e) {
                return false;
            }
        }

        @Override
        public void close() {
            try {
                channel.close();
            } catch (IOException ignored) {
                // already gone
            }
        }
    }
}
