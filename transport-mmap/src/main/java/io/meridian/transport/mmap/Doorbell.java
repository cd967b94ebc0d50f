package io.meridian.transport.mmap;

import io.meridian.shm.OwnerOnlyFiles;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a receiver's reader sleeps without missing a message: a Unix domain socket in the receiver's directory that
 * senders ring (one byte) when the reader has announced in its control file that it is about to block
 * ({@link ReceiverControl#announceSleep}). While the reader polls, nobody rings and the data path makes no system
 * call; an idle reader costs nothing and wakes within a scheduler tick of the first message, instead of polling
 * through parks that burn CPU on a host with fewer cores than busy threads.
 *
 * <p>Owned by the reader thread: {@link #await} and {@link #close} (after the reader stopped); {@link #interrupt} from
 * any thread.
 */
final class Doorbell implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Doorbell.class);
    static final String SOCKET = "doorbell.sock";
    /** sun_path holds 108 bytes with its terminating NUL. */
    private static final int MAX_PATH_BYTES = 107;

    private final Path path;
    private final Path link; // the same as path unless the socket lies in shortDir()
    private final ServerSocketChannel server;
    private final Selector selector;
    private final ByteBuffer drain = ByteBuffer.allocateDirect(256);
    private final Consumer<SelectionKey> onReady = this::ready;
    private volatile long rings; // written by the reader thread only

    private Doorbell(Path path, Path link, ServerSocketChannel server, Selector selector) {
        this.path = path;
        this.link = link;
        this.server = server;
        this.selector = selector;
    }

    /**
     * Binds the receiver's doorbell, replacing a socket file a killed receiver left; null if the OS cannot. When
     * {@code receiverDir/doorbell.sock} is longer than a socket address holds (a long transport root or topology id:
     * {@code bench stream}'s directories are 130 bytes), the socket lies in {@link #shortDir()} under a name derived
     * from the receiver's directory, and {@code doorbell.sock} is a symbolic link to it that senders follow.
     */
    static Doorbell bind(Path receiverDir) {
        Path link = receiverDir.resolve(SOCKET);
        Path path = fits(link) ? link : shortDir().resolve(shortName(receiverDir));
        if (!fits(path)) {
            LOG.warn("mmap transport: {} is too long for a Unix socket; the reader polls instead of sleeping", path);
            return null;
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
            Selector selector = Selector.open();
            server.register(selector, SelectionKey.OP_ACCEPT);
            return new Doorbell(path, link, server, selector);
        } catch (IOException | UnsupportedOperationException e) {
            LOG.warn("mmap transport: cannot bind the doorbell {} ({}); the reader polls instead of sleeping", path, e.toString());
            if (server != null) {
                try {
                    server.close();
                    Files.deleteIfExists(path);
                } catch (IOException ignored) {
                    // nothing more to release
                }
            }
            return null;
        }
    }

    /** Where doorbells whose receiver directory is too deep live: a per-user owner-only directory with a short path. */
    static Path shortDir() {
        return OwnerOnlyFiles.perUserDirectory("meridian-bells");
    }

    /** The socket's name in {@link #shortDir()}: 16 hex digits of a SHA-256 of the receiver directory's absolute path. */
    static String shortName(Path receiverDir) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256")
                .digest(receiverDir.toAbsolutePath().normalize().toString().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(h, 0, 8) + ".sock";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    /**
     * Deletes the sockets in {@code dir} that nobody listens on (connecting is refused): those of receivers that were
     * killed or halted before their orderly close, whose directories are gone (a killed topology's, or a bench's that
     * deleted its transport root); bench stream left one per receiver before this. Returns how many it deleted.
     */
    static int sweepUnanswered(Path dir) {
        int deleted = 0;
        try (DirectoryStream<Path> sockets = Files.newDirectoryStream(dir, "*.sock")) {
            for (Path socket : sockets) {
                try (SocketChannel probe = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
                    // a live doorbell: its receiver accepts and then sees the hang-up, which it handles
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

    /** The socket a sender connects to: {@code doorbell.sock} itself or where its link points; null while absent. */
    static Path socketOf(Path receiverDir) {
        Path link = receiverDir.resolve(SOCKET);
        try {
            return Files.isSymbolicLink(link) ? Files.readSymbolicLink(link) : Files.exists(link) ? link : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** Deletes the socket a dead receiver's link points to (the link goes with its directory); for the stale sweep. */
    static void deleteLinkedSocket(Path receiverDir) {
        Path link = receiverDir.resolve(SOCKET);
        try {
            if (Files.isSymbolicLink(link)) {
                Files.deleteIfExists(Files.readSymbolicLink(link));
            }
        } catch (IOException ignored) {
            // best effort, like the rest of the sweep
        }
    }

    /** Blocks until a sender rings, a sender connects or hangs up, or {@code timeoutMillis} pass. */
    void await(long timeoutMillis) {
        try {
            selector.select(onReady, Math.max(1, timeoutMillis));
        } catch (IOException e) {
            LOG.warn("mmap transport: doorbell {} failed: {}", path, e.toString());
        }
    }

    long rings() {
        return rings;
    }

    /** Returns a blocked {@link #await} at once (the receiver is closing). */
    void interrupt() {
        selector.wakeup();
    }

    private void ready(SelectionKey key) {
        try {
            if (key.isAcceptable()) {
                SocketChannel bell = server.accept();
                if (bell != null) {
                    bell.configureBlocking(false);
                    bell.register(selector, SelectionKey.OP_READ);
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

    @Override
    public void close() {
        try {
            for (SelectionKey k : selector.keys()) {
                k.channel().close();
            }
            selector.close();
            server.close();
            Files.deleteIfExists(path);
            Files.deleteIfExists(link);
        } catch (IOException e) {
            LOG.warn("mmap transport: closing doorbell {}: {}", path, e.toString());
        }
    }

    /** A sender's end: connected on the sender's poller thread, rung from its transfer thread. */
    static final class Ringer implements AutoCloseable {
        private final SocketChannel channel;
        private final ByteBuffer ding = ByteBuffer.allocateDirect(1);

        private Ringer(SocketChannel channel) {
            this.channel = channel;
        }

        /** @return the connected ringer, or null while the receiver has no doorbell (yet) */
        static Ringer connect(Path receiverDir) {
            Path path = socketOf(receiverDir);
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

        /** @return false if the receiver is gone; a full socket buffer means it has rings pending, which is fine */
        boolean ring() {
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
