package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.chunk.RdmaQueue;

/**
 * What the completion thread hands one {@link ConnectionEngine} (≈ Linux's
 * {@code rpcrdma_wc_receive} and {@code rpcrdma_wc_send}): a completed receive is reposted
 * for, classified by {@link Unmarshal} and its buffer given back unless a message keeps it;
 * Send and RDMA completions free their contexts; a flushed receive means the QP is in
 * error. Receives are replaced before a message is handled, so the credits we grant are
 * always backed by posted receives (RFC 8166 §3.3.1, RFC 8167 §4.3).
 *
 * <p>Threading: one completion thread at a time, except {@link #release}, which any thread
 * that held a received message calls. A failure here loses the connection on this thread,
 * holding no lock.
 */
public final class Arrivals {
    private final ConnectionLife life;
    private final ReceiveQueue receives;
    private final ReceiveDemand demand;
    private final Unmarshal unmarshal;
    private final Requester requester;
    private final SendQueue sends;
    private final RdmaQueue rdma;

    public Arrivals(ConnectionLife life, ReceiveQueue receives, ReceiveDemand demand, Unmarshal unmarshal,
            Requester requester, SendQueue sends, RdmaQueue rdma) {
        this.life = life;
        this.receives = receives;
        this.demand = demand;
        this.unmarshal = unmarshal;
        this.requester = requester;
        this.sends = sends;
        this.rdma = rdma;
    }

    /** A signalled Send completed: its context and all older ones are free. */
    public void sendCompleted(int slot) {
        sends.completed(slot);
    }

    /** A receive completed with {@code length} bytes in receive buffer {@code slot}. */
    public void received(int slot, int length) {
        if (life.isLost()) {
            receives.completedAfterLoss(slot); // a connection's own buffers were reclaimed with it
            return;
        }
        MemorySegment buf;
        try {
            buf = receives.completed(slot);
        } catch (IllegalStateException e) {
            if (life.isLost()) {
                return; // lost between the check and here: the buffer was reclaimed
            }
            throw e;
        }
        boolean keep = false;
        RuntimeException broke = null;
        try {
            // ORDER: repost before handling, so that a reply we send (which lets the peer
            // send another message) never finds fewer receives posted than credits granted
            demand.afterCompletion();
            keep = unmarshal.dispatch(slot, buf, length);
        } catch (RuntimeException e) {
            broke = e; // no lock is held here: the loss runs on this thread, after the buffer went back
        } finally {
            if (!keep) {
                release(slot);
            }
            life.arrived();
        }
        if (broke != null) {
            life.lost(broke);
        }
    }

    /** A signalled RDMA Read or Write completed (the link's token). */
    public void rdmaCompleted(int token) {
        if (life.isLost()) {
            return;
        }
        try {
            rdma.completed(token);
        } catch (RuntimeException e) {
            life.lost(e); // no lock is held here
        }
    }

    /** A posted receive came back flushed (QP in error): the connection is gone. */
    public void flushed(int slot) {
        if (!life.isLost()) {
            try {
                receives.flushed(slot);
            } catch (IllegalStateException e) {
                // reclaimed by a concurrent loss
            }
        } else {
            receives.completedAfterLoss(slot);
        }
        life.lost(new RpcRdmaException("receive flushed"));
    }

    /** A received message was released: its buffer may let a waiting call go. */
    public void release(int slot) {
        receives.release(slot);
        if (!life.isLost()) {
            requester.pump();
        }
    }
}
