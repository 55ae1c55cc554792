package org.rpcrdma.oncrpc;

import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;
import org.rpcrdma.transport.wire.XdrOverflowException;
import org.rpcrdma.transport.wire.XdrWriter;

/**
 * Encodes one RPC message (header and body) into a heap segment of exactly its size. A
 * codec does not say how large its value is, so the message is encoded into a buffer that
 * grows: encode, and when the writer runs out ({@link XdrOverflowException}, nothing else),
 * encode again into one twice as large. Codecs are pure functions of their value, so a
 * second pass writes the same bytes. The transport copies the message into its registered
 * send buffer, so the heap bytes are not kept.
 */
final class MessageEncoder {
    /** Most messages (headers, small arguments) fit the first try. */
    static final int FIRST_TRY = 512;
    /**
     * A message larger than this is refused here: today the transport sends only inline
     * messages (at most 256 KiB), and with chunks a bulk payload moves by DDP, not in the
     * encoded stream.
     */
    static final int MAX_MESSAGE = 64 << 20;

    private MessageEncoder() {}

    /** The bytes {@code body} writes, in a segment of exactly that size. */
    static MemorySegment encode(Consumer<XdrWriter> body) {
        for (int size = FIRST_TRY; ; size *= 2) {
            byte[] buf = new byte[size];
            XdrWriter w = new XdrWriter(MemorySegment.ofArray(buf), 0, size);
            try {
                body.accept(w);
            } catch (XdrOverflowException e) {
                if (size >= MAX_MESSAGE) {
                    throw new IllegalArgumentException("RPC message larger than " + MAX_MESSAGE + " bytes", e);
                }
                continue;
            }
            return MemorySegment.ofArray(buf).asSlice(0, w.written());
        }
    }
}
