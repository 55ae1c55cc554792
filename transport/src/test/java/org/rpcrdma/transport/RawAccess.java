package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.chunk.ChunkBuffer;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.transport.link.LinkFailure;
import org.rpcrdma.transport.rpc.SendContextRing;
import org.rpcrdma.transport.rpc.SendQueue;

/**
 * What tests that play a misbehaving or late peer against a real endpoint need of a
 * connection's insides: its link (to post RDMA Reads and Writes or expose memory by hand),
 * and a Send of bytes exactly as given (no encoding, no credit, no XID table); {@link RawPeer}
 * takes the link's completions in the engine's place. Reached through the
 * connection's engine, so a change there breaks compilation here.
 *
 * <p>A Send must come from one of the connection's send contexts: they are the only memory
 * its link's send lkey covers, and the context ring's accounting is what frees them when a
 * signalled Send completes. So a raw Send takes the next context under the send queue's
 * lock, as the send queue itself does, and posts it through the link's own send path.
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
        SendQueue sends = c.engine().sends();
        SendContextRing ring = sends.ring();
        LinkFailure failure = sends.failure();
        Link link = link(c);
        synchronized (sends) {
            int slot = ring.tryAcquire();
            if (slot < 0) {
                throw new IllegalStateException("no free send context");
            }
            MemorySegment context = sends.context(slot);
            MemorySegment.copy(bytes, 0, context, 0, bytes.byteSize());
            boolean signalled = ring.shouldSignal();
            try {
                if (invalidateRkey == 0) {
                    link.postSend(slot, context, (int) bytes.byteSize(), signalled);
                } else {
                    link.postSendWithInvalidate(slot, context, (int) bytes.byteSize(), signalled, invalidateRkey);
                }
            } catch (RuntimeException e) {
                failure.force(e); // as a failed post of the send queue's own: the connection is lost
            }
        }
        failure.settle();
        InMemoryPair.settle(link); // in memory: what it sets off has happened, as tests expect of a Send they post
    }

    /** The link below {@code c}. */
    static Link link(Connection c) {
        return c.engine().link();
    }

    /**
     * Exposes {@code memory} of {@code c}'s side to the peer's RDMA Reads (and Writes if
     * {@code writable}) by hand, as a requester would for a chunk; returns the rkey.
     */
    static int expose(Connection c, MemorySegment memory, boolean writable) {
        return link(c).expose(new ChunkBuffer(memory, 0, null, b -> { }), 0, memory.byteSize(), writable);
    }

    /**
     * The pair once everything sent so far has been delivered: the in-memory link delivers
     * asynchronously, like a NIC, so a side's counters may lag what the other side already saw.
     */
    static InMemoryPair settled(InMemoryPair p) {
        if (!p.settle()) {
            throw new AssertionError("the in-memory link did not deliver what was sent within its wait");
        }
        return p;
    }
}
