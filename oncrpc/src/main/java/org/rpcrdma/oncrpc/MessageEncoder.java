package org.rpcrdma.oncrpc;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.function.Consumer;
import org.rpcrdma.transport.wire.XdrOverflowException;
import org.rpcrdma.transport.wire.XdrWriter;

/**
 * Encodes one RPC message (header and body) into a heap segment of exactly its size. A
 * codec does not say how large its value is, so the message is encoded into this thread's
 * scratch buffer, which grows (encode, and when the writer runs out,
 * {@link XdrOverflowException} and nothing else, encode again into one twice as large) and
 * is kept for the thread's next message, softly (the GC may take it back); then copied out
 * once at its exact size, which the transport may hold until the call is sent. Codecs are
 * pure functions of their value, so a second pass writes the same bytes. A thread that
 * encodes messages of similar size thus encodes each once and allocates only its copy.
 *
 * <p>The DDP seam: while a message is encoded here, each DDP-eligible item
 * ({@link XdrCodec#ddpEligible()}, {@link Codecs#payload}) records where its data lies in
 * the message ({@link Encoded#ddpOffsets()}, {@link Encoded#ddpLengths()}): exactly the
 * input of the transport's chunk arithmetic ({@code StreamReduction.reduce}, RFC 8166
 * §3.4), which sends the first as a read chunk when the call does not fit inline.
 */
final class MessageEncoder {
    /** Most messages (headers, small arguments) fit the first try. */
    static final int FIRST_TRY = 512;
    /**
     * A message larger than this is refused here, which bounds the scratch buffer's growth: a
     * call past the inline threshold travels whole in a Position-Zero Read chunk, bounded by
     * the transport's {@code maxChunkBytes} (1 MiB + 64 KiB by default), and a bulk payload
     * moves by DDP, outside the encoded stream.
     */
    static final int MAX_MESSAGE = 64 << 20;
    /** The largest scratch buffer a thread keeps (an NFS WRITE of 1 MiB and its header fit). */
    static final int MAX_KEPT = 4 << 20;

    /**
     * The DDP-eligible items of the message being encoded on this thread: one reusable
     * holder per thread, so a message without any allocates nothing for them.
     */
    private static final ThreadLocal<Items> ITEMS = ThreadLocal.withInitial(Items::new);
    private static final long[] NONE = new long[0];

    /**
     * An encoded message and its DDP-eligible items: item i's data is
     * {@code [ddpOffsets[i], ddpOffsets[i] + ddpLengths[i])} of {@code message} (after its
     * length word; the XDR roundup follows), offsets counted from the XID, ascending.
     */
    record Encoded(MemorySegment message, long[] ddpOffsets, long[] ddpLengths) {}

    private MessageEncoder() {}

    /** The bytes {@code body} writes, in a segment of exactly that size. */
    static MemorySegment encode(Consumer<XdrWriter> body) {
        return encodeWithItems(body).message();
    }

    /** The bytes {@code body} writes and where its DDP-eligible items lie in them. */
    static Encoded encodeWithItems(Consumer<XdrWriter> body) {
        Items items = ITEMS.get();
        if (items.active) { // a codec that encodes a message of its own: give it its own holder
            ITEMS.set(new Items());
            try {
                return encodeWithItems(body);
            } finally {
                ITEMS.set(items);
            }
        }
        items.active = true;
        try {
            byte[] buf = items.scratch();
            while (true) {
                XdrWriter w = new XdrWriter(MemorySegment.ofArray(buf), 0, buf.length);
                items.count = 0; // each pass locates them again
                try {
                    body.accept(w);
                } catch (XdrOverflowException e) {
                    if (buf.length >= MAX_MESSAGE) {
                        throw new IllegalArgumentException("RPC message larger than " + MAX_MESSAGE + " bytes", e);
                    }
                    buf = items.grow(buf.length * 2);
                    continue;
                }
                MemorySegment m = MemorySegment.ofArray(Arrays.copyOf(buf, Math.toIntExact(w.written())));
                return items.count == 0 ? new Encoded(m, NONE, NONE)
                        : new Encoded(m, Arrays.copyOf(items.offsets, items.count), Arrays.copyOf(items.lengths, items.count));
            }
        } finally {
            items.active = false;
            items.count = 0;
        }
    }

    /**
     * Called by a DDP-eligible codec just before it writes its item: its data will start at
     * {@code dataOffset} of the message and take {@code length} bytes. Outside an encode
     * here (a codec used on a caller's own writer) it does nothing.
     */
    static void ddpItem(long dataOffset, long length) {
        Items items = ITEMS.get();
        if (items.active) {
            items.add(dataOffset, length);
        }
    }

    /**
     * A growable pair of arrays (few items per message: usually none or one), and the
     * thread's scratch buffer.
     */
    private static final class Items {
        boolean active;
        /** The largest buffer this thread needed, up to {@link #MAX_KEPT}; softly held. */
        private java.lang.ref.SoftReference<byte[]> scratch;

        byte[] scratch() {
            byte[] b = scratch == null ? null : scratch.get();
            return b != null ? b : grow(FIRST_TRY);
        }

        /** A buffer of {@code size} bytes, kept as the scratch unless over {@link #MAX_KEPT}. */
        byte[] grow(int size) {
            byte[] b = new byte[size];
            if (size <= MAX_KEPT) {
                scratch = new java.lang.ref.SoftReference<>(b);
            }
            return b;
        }

        long[] offsets = new long[2];
        long[] lengths = new long[2];
        int count;

        void add(long offset, long length) {
            if (count == offsets.length) {
                offsets = Arrays.copyOf(offsets, count * 2);
                lengths = Arrays.copyOf(lengths, count * 2);
            }
            offsets[count] = offset;
            lengths[count] = length;
            count++;
        }
    }
}
