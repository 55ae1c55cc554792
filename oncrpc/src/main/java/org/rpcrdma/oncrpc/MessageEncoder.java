package org.rpcrdma.oncrpc;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.function.Consumer;
import org.rpcrdma.xdr.XdrOverflowException;
import org.rpcrdma.xdr.XdrWriter;

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
 * §3.4). {@link #encodeLeavingOut} leaves the data of the first items out of the message
 * instead (their length words stay; RFC 8166 §3.4.5's reduced stream): the caller's
 * segments go to the transport as they are ({@link Encoded#leftOut()}), never copied here.
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

    private static final MemorySegment[] NO_SEGMENTS = new MemorySegment[0];

    /**
     * An encoded message and its DDP-eligible items: item i's data is
     * {@code [ddpOffsets[i], ddpOffsets[i] + ddpLengths[i])} of {@code message} (after its
     * length word; the XDR roundup follows), offsets counted from the XID, ascending;
     * except the first {@code leftOut.length} items, whose data is {@code leftOut[i]},
     * left out of the message with its pad: {@code ddpOffsets[i]} is where it belongs.
     */
    record Encoded(MemorySegment message, long[] ddpOffsets, long[] ddpLengths, MemorySegment[] leftOut) {
        Encoded(MemorySegment message, long[] ddpOffsets, long[] ddpLengths) {
            this(message, ddpOffsets, ddpLengths, NO_SEGMENTS);
        }
    }

    private MessageEncoder() {}

    /** The bytes {@code body} writes, in a segment of exactly that size. */
    static MemorySegment encode(Consumer<XdrWriter> body) {
        return encodeWithItems(body).message();
    }

    /** The bytes {@code body} writes and where its DDP-eligible items lie in them. */
    static Encoded encodeWithItems(Consumer<XdrWriter> body) {
        return encodeLeavingOut(body, 0);
    }

    /**
     * As {@link #encodeWithItems}, the data of the first {@code max} DDP-eligible items left
     * out of the message and handed back as the segments the codec was given.
     */
    static Encoded encodeLeavingOut(Consumer<XdrWriter> body, int max) {
        Items items = ITEMS.get();
        if (items.active) { // a codec that encodes a message of its own: give it its own holder
            ITEMS.set(new Items());
            try {
                return encodeLeavingOut(body, max);
            } finally {
                ITEMS.set(items);
            }
        }
        items.active = true;
        items.leaveOut = max;
        try {
            byte[] buf = items.scratch();
            while (true) {
                XdrWriter w = new XdrWriter(MemorySegment.ofArray(buf), 0, buf.length);
                items.clear(); // each pass locates them again
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
                        : new Encoded(m, Arrays.copyOf(items.offsets, items.count), Arrays.copyOf(items.lengths, items.count),
                                items.leftOut == 0 ? NO_SEGMENTS : Arrays.copyOf(items.payloads, items.leftOut));
            }
        } finally {
            items.active = false;
            items.leaveOut = 0;
            items.clear();
        }
    }

    /**
     * Called by a DDP-eligible codec before it writes its item, whose data would start at
     * {@code dataOffset}: true if the encode here leaves {@code data} out (the codec then
     * writes the length word alone); false to write it all. Either way the item is located
     * in the message. Outside an encode here (a codec used on a caller's own writer) it
     * does nothing and answers false.
     */
    static boolean leaveOut(long dataOffset, MemorySegment data) {
        Items items = ITEMS.get();
        if (!items.active) {
            return false;
        }
        items.add(dataOffset, data.byteSize());
        if (items.leftOut < items.leaveOut) {
            items.payloads[items.count - 1] = data;
            items.leftOut++;
            return true;
        }
        return false;
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
        /** The data of the first {@link #leftOut} items (the caller's segments), left out of the message. */
        MemorySegment[] payloads = new MemorySegment[2];
        int count;
        /** How many items' data to leave out; how many were. */
        int leaveOut;
        int leftOut;

        /** Starts a pass (or ends the encode): no item, no reference to a caller's segment kept. */
        void clear() {
            Arrays.fill(payloads, 0, leftOut, null);
            count = 0;
            leftOut = 0;
        }

        void add(long offset, long length) {
            if (count == offsets.length) {
                offsets = Arrays.copyOf(offsets, count * 2);
                lengths = Arrays.copyOf(lengths, count * 2);
                payloads = Arrays.copyOf(payloads, count * 2);
            }
            offsets[count] = offset;
            lengths[count] = length;
            count++;
        }
    }
}
