package io.meridian.transport.mmap;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
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
    private final ServerSocketChannel server;
    private final Selector selector;
    private final ByteBuffer drain = ByteBuffer.allocateDirect(256);
    private final Consumer<SelectionKey> onReady = this::ready;
    private volatile long rings; // written by the reader thread only

    private Doorbell(Path path, ServerSocketChannel server, Selector selector) {
        this.path = path;
        this.server = server;
        this.selector = selector;
    }

    /** Binds the receiver's doorbell, replacing a socket file a killed receiver left; null if the OS cannot. */
    static Doorbell bind(Path receiverDir) {
        Path path = receiverDir.resolve(SOCKET);
        if (path.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_PATH_BYTES) {
            LOG.warn("mmap transport: {} is too long for a Unix socket; the reader polls instead of sleeping", path);
            return null;
        }
        ServerSocketChannel server = null;
        try {
            Files.deleteIfExists(path);
            server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            server.bind(UnixDomainSocketAddress.of(path));
            server.configureBlocking(false);
            Selector selector = Selector.open();
            server.register(selector, SelectionKey.OP_ACCEPT);
            return new Doorbell(path, server, selector);
        } catch (IOException | UnsupportedOperationException e) {
            LOG.warn("mmap transport: cannot bind the doorbell {} ({}); the reader polls instead of sleeping", path, e.toString());
            if (server != null) {
                try {
                    server.close();
                } catch (IOException ignored) {
                    // nothing more to release
                }
            }
            return null;
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
            Path path = receiverDir.resolve(SOCKET);
            if (!Files.exists(path)) {
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
