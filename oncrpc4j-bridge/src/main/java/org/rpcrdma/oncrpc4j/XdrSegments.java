package org.rpcrdma.oncrpc4j;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.dcache.oncrpc4j.xdr.Xdr;
import org.glassfish.grizzly.Buffer;
import org.rpcrdma.transport.ReceivedMessage;

/**
 * Moves RPC messages between oncrpc4j's {@link Xdr} and the transport's memory segments.
 *
 * <p>An {@code Xdr} is a garbage-collected Grizzly buffer with no release hook, and a
 * program may keep a call's or reply's {@code Xdr} after it returns; so a received message
 * is copied out of its receive buffer once (the buffer goes back to the peer's credits at
 * once). An encoded message is handed to the transport as a view of the {@code Xdr}'s own
 * heap array (no copy here); the transport copies it into its registered send buffer as it
 * does any caller's message.
 */
final class XdrSegments {
    private static final ValueLayout.OfInt INT_BE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /** msg_type of an RPC message (RFC 5531 §9). */
    static final int CALL = 0;
    static final int REPLY = 1;

    private XdrSegments() {
    }

    /** The encoded message of {@code xdr} (after {@code endEncoding}), from its XID on. */
    static MemorySegment encoded(Xdr xdr) {
        Buffer b = xdr.asBuffer();
        if (b.hasArray()) {
            return MemorySegment.ofArray(b.array()).asSlice(b.arrayOffset() + b.position(), b.remaining());
        }
        // a composite buffer (shallow-encoded opaque): Grizzly gathers it into one
        return MemorySegment.ofBuffer(b.toByteBuffer());
    }

    static int xid(MemorySegment message) {
        return message.get(INT_BE, 0);
    }

    /** msg_type of an encoded message, or -1 if it is too short to have one. */
    static int messageType(MemorySegment message) {
        return message.byteSize() < 8 ? -1 : message.get(INT_BE, 4);
    }

    /** A copy of {@code message} (from its XID on) as an {@code Xdr} positioned for decoding. */
    static Xdr received(ReceivedMessage message) {
        Xdr xdr = new Xdr(message.toByteArray());
        xdr.beginDecoding();
        return xdr;
    }
}
