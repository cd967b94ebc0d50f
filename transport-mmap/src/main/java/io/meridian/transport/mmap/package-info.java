/**
 * A Storm messaging transport for workers on the same host: memory-mapped Chronicle Queue files instead of TCP.
 * Select it with {@code storm.messaging.transport: io.meridian.transport.mmap.MmapContext} (or
 * {@link io.meridian.transport.mmap.MmapTransport#enable}); peers on other hosts go through Storm's own Netty transport,
 * which {@link io.meridian.transport.mmap.MmapContext} composes.
 *
 * <h2>Layout</h2>
 * One queue per (sender worker, receiver worker) pair, written only by the sender, read only by the receiver:
 * <pre>
 *   &lt;dir&gt;/&lt;topology&gt;/w&lt;port&gt;/receiver.ctl        receiver -&gt; senders: pid, heartbeat, backpressure, loads
 *   &lt;dir&gt;/&lt;topology&gt;/w&lt;port&gt;/doorbell.sock       Unix socket: senders wake a reader that sleeps
 *   &lt;dir&gt;/&lt;topology&gt;/w&lt;port&gt;/from-&lt;sport&gt;/      the queue (5 s cycle files)
 *   &lt;dir&gt;/&lt;topology&gt;/w&lt;port&gt;/from-&lt;sport&gt;.pos  receiver -&gt; sender and -&gt; its own restart: delivered position
 *   &lt;dir&gt;/&lt;topology&gt;/w&lt;port&gt;/from-&lt;sport&gt;.ring payload ring of large tuples, sender -&gt; receiver
 * </pre>
 * {@code <dir>} defaults to {@code /dev/shm/meridian-transport-<user>}; every directory is rwx------.
 *
 * <h2>Framing</h2>
 * A {@code send} batch becomes documents of about 1 MiB of tuples, raw bytes (no Wire fields): a 40-byte header (first
 * sequence number, bytes before, count, payload bytes, payload ring head, where the frames are), and the frames,
 * {@code task, length, bytes} per message; a single tuple may be up to 8 MiB (a larger one fails the send with a
 * message naming its size and task). The frames go into the pair's {@link io.meridian.transport.mmap.PayloadRing} (a
 * 64 MiB mapped file whose pages are reused) whenever it has room, and the queue document is the header alone:
 * appending them to the queue itself faults in, zeroes and later frees a fresh tmpfs page for every 4 KiB. When the
 * ring is full the frames go inline, tuples of 4 KiB or more alone in the ring ({@code task, -length, ring
 * position}). See {@link io.meridian.transport.mmap.Frames}. Frames are stored
 * and loaded at the document's mapped address ({@link io.meridian.transport.mmap.Chunks}), not through Chronicle's
 * per-field {@code Bytes} calls, whose byte-array copy is a Java loop.
 *
 * <h2>Waiting</h2>
 * The reader polls all its queues on one thread with the configured idle strategy. With back-off (the default), after
 * {@code meridian.transport.idle.sleep.after.us} without a message it announces in the control file that it is about
 * to block, looks once more, and blocks on its {@link io.meridian.transport.mmap.Doorbell}; a sender that appended
 * and sees the announcement (both sides fenced, so one of them always sees the other) rings it with one byte. A
 * busy reader costs senders no system call; an idle one costs no CPU.
 *
 * <h2>Readiness, backpressure, load</h2>
 * A sender is {@code Ready} while the receiver's control file and its reader position both have a heartbeat younger
 * than {@code meridian.transport.heartbeat.timeout.ms} from the same pid. Storm's backpressure statuses and load
 * metrics are written by the receiver into its control file (complete snapshots, bit sets plus a version); each
 * worker's poller thread mirrors a changed version into Storm's {@code remoteBpStatus} flags within about 1 ms while
 * any of its receivers is backpressured or not yet ready, and within 10 ms otherwise; a new sender reads the current
 * status when it attaches. The poller, through each sender's {@link io.meridian.transport.mmap.ReceiverLink}, is the
 * one writer of those flags (it also turns lag into backpressure, below) and writes them again every 100 ms, so no
 * update can stay lost. Because a queue never pushes back, the sender also computes the
 * reader's lag exactly (its sequence numbers minus the delivered count) and, above {@code meridian.transport.max.lag.*},
 * flags every task of that receiver as backpressured until the lag falls below half the limit.
 *
 * <h2>Restart and cleanup</h2>
 * The receiver commits (delivered count, delivered bytes, last index) after each batch it handed to Storm; a restarted
 * receiver moves to the committed index and skips by sequence number, so it neither loses nor repeats what it had not
 * delivered. A restarted sender continues the numbering from the last document in its queue. After committing into a
 * newer cycle, the reader deletes older cycle files: the queue holds about two 5 s cycles. An orderly shutdown
 * removes the receiver's directory; directories of workers dead for over {@code meridian.transport.stale.minutes} are
 * swept when a transport starts and every minute by each receiver's cleaner (a worker that Storm halts before its
 * orderly shutdown reaches the transport leaves its files, as a killed one does; they stay that long in case the
 * supervisor restarts it).
 *
 * <h2>A full tmpfs</h2>
 * Files this transport creates reserve their pages through the channel first ({@link io.meridian.shm.TmpfsSpace}),
 * so a full tmpfs is a named {@code IOException} at creation, not a SIGBUS later. A sender whose queue cannot be
 * created, or whose append fails for want of pages (Chronicle's next cycle file), goes on through Netty for good:
 * the receiver serves Netty anyway, and going back would need it to merge two streams (docs/transport.md).
 */
package io.meridian.transport.mmap;
