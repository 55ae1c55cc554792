package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import java.lang.reflect.Field;
import org.rpcrdma.transport.core.ChunkBuffer;
import org.rpcrdma.transport.core.Link;
import org.rpcrdma.transport.core.SendContextRing;

/**
 * What tests that play a misbehaving or late peer against a real endpoint need of a
 * connection's insides: its link (to post RDMA Reads and Writes or expose memory by hand),
 * a Send of bytes exactly as given (no encoding, no credit, no XID table), and a tap that
 * turns the connection into a raw peer seeing every message undecoded.
 *
 * <p>A Send must come from one of the connection's send contexts: they are the only memory
 * its link's send lkey covers, and the context ring's accounting is what frees them when a
 * signalled Send completes. So a raw Send takes the next context under the send queue's
 * lock, as the send queue itself does, and posts it through the link's own send path. The
 * link, the send queue and the receive taps are private to the connection: reached by
 * reflection here, so that the transport keeps no method for tests.
 */
final class RawAccess {
    private RawAccess() {
    }

    /** Sends {@code bytes} as one Send exactly as given. */
    static void send(Connection c, MemorySegment bytes) {
        send(c, bytes, 0);
    }

    /**
     * As {@link #send(Connection, MemorySegment)}, by Send with Invalidate of the peer's
     * {@code invalidateRkey} unless 0.
     *
     * @throws IllegalStateException if every send context is in flight
     */
    static void send(Connection c, MemorySegment bytes, int invalidateRkey) {
        SendQueue sends = (SendQueue) get(Connection.class, c, "sends");
        SendContextRing ring = (SendContextRing) get(SendQueue.class, sends, "ring");
        MemorySegment[] buffers = (MemorySegment[]) get(SendQueue.class, sends, "buffers");
        LinkFailure failure = (LinkFailure) get(SendQueue.class, sends, "failure");
        Link link = link(c);
        synchronized (sends) {
            int slot = ring.tryAcquire();
            if (slot < 0) {
                throw new IllegalStateException("no free send context");
            }
            MemorySegment.copy(bytes, 0, buffers[slot], 0, bytes.byteSize());
            boolean signalled = ring.shouldSignal();
            try {
                if (invalidateRkey == 0) {
                    link.postSend(slot, buffers[slot], (int) bytes.byteSize(), signalled);
                } else {
                    link.postSendWithInvalidate(slot, buffers[slot], (int) bytes.byteSize(), signalled,
                            invalidateRkey);
                }
            } catch (RuntimeException e) {
                failure.force(e); // as a failed post of the send queue's own: the connection is lost
            }
        }
        failure.settle();
    }

    /** The link below {@code c}. */
    static Link link(Connection c) {
        return (Link) get(Connection.class, c, "link");
    }

    /**
     * Exposes {@code memory} of {@code c}'s side to the peer's RDMA Reads (and Writes if
     * {@code writable}) by hand, as a requester would for a chunk; returns the rkey.
     */
    static int expose(Connection c, MemorySegment memory, boolean writable) {
        return link(c).expose(new ChunkBuffer(memory, 0, null, b -> { }), 0, memory.byteSize(), writable);
    }

    /** Makes {@code c} a raw peer: every message it receives and every RDMA completion goes to {@code tap}. */
    static void tap(Connection c, Unmarshal.RawTap tap) {
        Object arrivals = get(Connection.class, c, "arrivals");
        set(Unmarshal.class, get(Arrivals.class, arrivals, "unmarshal"), "rawTap", tap);
        set(RdmaQueue.class, get(Arrivals.class, arrivals, "rdma"), "rawTap", tap);
    }

    private static Object get(Class<?> type, Object o, String name) {
        try {
            Field f = type.getDeclaredField(name);
            f.setAccessible(true);
            return f.get(o);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(type.getSimpleName() + "." + name + " not found: " + e, e);
        }
    }

    private static void set(Class<?> type, Object o, String name, Object value) {
        try {
            Field f = type.getDeclaredField(name);
            f.setAccessible(true);
            f.set(o, value);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(type.getSimpleName() + "." + name + " not found: " + e, e);
        }
    }
}
