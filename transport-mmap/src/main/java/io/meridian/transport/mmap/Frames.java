package io.meridian.transport.mmap;

/**
 * The layout of one queue document: a batch of Storm task messages from one {@code send} call, as raw bytes.
 *
 * <pre>
 *   long firstSeq      sequence number of the first message (messages are numbered from 0 per sender-receiver queue)
 *   long bytesBefore   payload bytes written to this queue before this batch
 *   int  count         messages in the batch
 *   int  payloadBytes  sum of the message lengths in the batch
 *   long ringHead      the sender's payload ring head after this batch (lets a restarted sender continue)
 *   long framesAt      -1: the messages follow in this document; else their frames are in the payload ring at this
 *                      position, count x {int task; int length; bytes}, count x 8 + payloadBytes bytes in all
 *   count x { int task; int length; byte[length] serialized tuple }         a message inline
 *         or { int task; int -length; long ringPosition }                   a large message in the payload ring
 * </pre>
 *
 * Frames in the ring are the usual case ({@link TransportConfig#RING_BATCHES}): a queue only appends, so every byte
 * written to it lands on a tmpfs page never touched before, which the kernel allocates, zeroes and later frees; with
 * 100-byte tuples at 2.4M/s that was 12 % of the 2-core machine's CPU (page faults 8.6 %, munmap 1.8 %, unlinking
 * consumed cycle files 1.4 %, perf -a), against 3.1 % for Netty's TCP sends. The ring's pages are reused lap after lap.
 *
 * Sequence numbers and byte counts let a receiver skip what it already delivered after a restart and let the sender
 * compute the reader's lag exactly; there is no per-field marshalling.
 */
final class Frames {
    static final int HEADER_BYTES = 40;
    static final int MESSAGE_OVERHEAD = 8;
    static final int RING_MESSAGE_BYTES = 16;
    static final int OFF_FIRST_SEQ = 0;
    static final int OFF_BYTES_BEFORE = 8;
    static final int OFF_COUNT = 16;
    static final int OFF_PAYLOAD = 20;
    static final int OFF_RING_HEAD = 24;
    static final int OFF_FRAMES_AT = 32;
    /** A batch is cut into documents of about this size, so that a document never nears Chronicle's limits. */
    static final int MAX_DOCUMENT_BYTES = 1 << 20;
    /**
     * Largest single message; bigger tuples belong in another channel. With {@link #MAX_DOCUMENT_BYTES} it keeps every
     * document inside one mapping of the queue file (blocks of {@link QueueFiles#BLOCK_BYTES} overlap by a quarter).
     */
    static final int MAX_MESSAGE_BYTES = 8 << 20;

    /** The length field of a message whose bytes went to the payload ring alone: its length, negated. */
    static int ringLengthField(int length) {
        return -length;
    }

    /** Whether a frame's length field says the message's bytes are in the payload ring. */
    static boolean inRing(int lengthField) {
        return lengthField < 0;
    }

    /** The length of a message in the payload ring, from its frame's length field. */
    static int ringLength(int lengthField) {
        return -lengthField;
    }

    /** Bytes of the frames of {@code count} inline messages with {@code payloadBytes} between them. */
    static long framesBytes(int count, long payloadBytes) {
        return (long) count * MESSAGE_OVERHEAD + payloadBytes;
    }

    private Frames() {
    }
}
