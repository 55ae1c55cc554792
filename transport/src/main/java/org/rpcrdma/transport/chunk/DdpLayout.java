package org.rpcrdma.transport.chunk;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.DdpArgument;

/**
 * Where a {@link DdpArgument} lies in the call that carries it (RFC 8166 §3.4.5: a
 * DDP-eligible argument moves as a Read chunk at its XDR position, its XDR pad not sent),
 * and how the call is assembled around a payload given as a segment of its own.
 */
public final class DdpLayout {
    private DdpLayout() {
    }

    /** Whether the data is a segment of its own, not in the message. */
    public static boolean separate(DdpArgument d) {
        return d.payload() != null;
    }

    /** The data's length with its XDR pad. */
    public static long paddedLength(DdpArgument d) {
        return (d.length() + 3) & ~3L;
    }

    /** Where the data's XDR pad ends in the message (the data inside it): the inline content resumes there. */
    public static long paddedEnd(DdpArgument d) {
        return d.offset() + paddedLength(d);
    }

    /** The whole call's XDR length, data and pad included, for {@code message}. */
    public static long callLength(DdpArgument d, MemorySegment message) {
        return separate(d) ? message.byteSize() + paddedLength(d) : message.byteSize();
    }

    /** Throws {@link IllegalArgumentException} if {@code d} does not lie in (or insert into) {@code message}. */
    public static void checkIn(DdpArgument d, MemorySegment message) {
        long end = separate(d) ? d.offset() : paddedEnd(d);
        if (end > message.byteSize()) {
            throw new IllegalArgumentException(d + (separate(d) ? " is inserted beyond the end of the "
                    : " with its XDR pad lies beyond the ") + message.byteSize() + "-byte call");
        }
    }

    /**
     * Copies the whole call into {@code to} at {@code at}: the message's XDR up to the data,
     * the payload, zeros for its pad, the rest of the message. Only for a separate payload.
     * Returns the bytes written.
     */
    public static long assemble(DdpArgument d, MemorySegment message, MemorySegment to, long at) {
        MemorySegment.copy(message, 0, to, at, d.offset());
        MemorySegment.copy(d.payload(), 0, to, at + d.offset(), d.length());
        to.asSlice(at + d.offset() + d.length(), paddedLength(d) - d.length()).fill((byte) 0);
        MemorySegment.copy(message, d.offset(), to, at + paddedEnd(d), message.byteSize() - d.offset());
        return callLength(d, message);
    }
}
