package org.rpcrdma.oncrpc;

import java.lang.foreign.MemorySegment;

/**
 * While a reply to a call that offered a receptacle is decoded on this thread: that
 * receptacle and how many bytes the responder placed in it through the write chunk
 * (RFC 8166 §3.4.6, {@code ReceivedMessage.placedBytes()}). The reply the transport
 * delivers is the reduced one: a DDP result's length word stays inline, its data and pad
 * do not. {@link Codecs#payloadInto} asks here whether its data is inline or placed.
 */
final class Placement {
    private static final ThreadLocal<Placement> CURRENT = new ThreadLocal<>();

    private final MemorySegment receptacle;
    private final long placed;
    private boolean taken;

    private Placement(MemorySegment receptacle, long placed) {
        this.receptacle = receptacle;
        this.placed = placed;
    }

    /** Runs {@code decode} with {@code receptacle} known to hold {@code placed} bytes. */
    static <T> T during(MemorySegment receptacle, long placed, java.util.function.Supplier<T> decode) {
        Placement outer = CURRENT.get();
        CURRENT.set(new Placement(receptacle, placed));
        try {
            return decode.get();
        } finally {
            CURRENT.set(outer);
        }
    }

    /**
     * The bytes placed in {@code receptacle} by the reply being decoded, or -1 when this
     * thread decodes no reply that offered it (the data, if any, is then inline).
     */
    static long placedIn(MemorySegment receptacle) {
        Placement p = CURRENT.get();
        return p != null && p.receptacle == receptacle ? p.placed : -1;
    }

    /**
     * The receptacle a DDP-eligible result decodes into: {@code own} if the codec has one,
     * else the one the call whose reply is being decoded on this thread offered, or null
     * (none offered, or already taken by an earlier item of this reply: the transport
     * places one item per call).
     */
    static MemorySegment take(MemorySegment own) {
        Placement p = CURRENT.get();
        if (p == null || p.taken || (own != null && own != p.receptacle)) {
            return own;
        }
        p.taken = true;
        return p.receptacle;
    }
}
