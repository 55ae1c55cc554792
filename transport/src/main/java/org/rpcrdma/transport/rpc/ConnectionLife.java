package org.rpcrdma.transport.rpc;

import java.lang.System.Logger.Level;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.chunk.RdmaQueue;
import org.rpcrdma.transport.link.Link;

/**
 * The life of one {@link ConnectionEngine}: OPEN, CLOSING while {@code close} drains, then LOST,
 * once (≈ Linux's {@code xprt_rdma_close} and {@code rpcrdma_xprt_disconnect}). Losing it
 * gives back every receive buffer, Send context and RDMA context, then ends or hands over
 * every call exactly once: RPC-over-RDMA has no way to resume a connection (RFC 8166 §3.3.1
 * credits and the receives posted for them belong to one QP), so what was outstanding is
 * retransmitted on a new one or fails.
 *
 * <p>Lock: this object's monitor guards the state change only; it is first in the
 * connection's lock order and nothing else is taken under it.
 */
public final class ConnectionLife {
    private static final System.Logger LOG = System.getLogger(ConnectionLife.class.getName());

    private enum State { OPEN, CLOSING, LOST }

    private final String name;
    private final StatsCounters stats;
    private final Link link;
    private final ReceiveQueue receives;
    private final SendQueue sends;
    private final RdmaQueue rdma;
    private final Requester requester;
    private final CallHandOver handOver;
    /** close() waits here for outstanding calls; notified as messages arrive while CLOSING. */
    private final Object drained = new Object();
    private volatile State state = State.OPEN;

    public ConnectionLife(String name, StatsCounters stats, Link link, ReceiveQueue receives, SendQueue sends, RdmaQueue rdma,
            Requester requester, CallHandOver handOver) {
        this.name = name;
        this.stats = stats;
        this.link = link;
        this.receives = receives;
        this.sends = sends;
        this.rdma = rdma;
        this.requester = requester;
        this.handOver = handOver;
    }

    public boolean isOpen() {
        return state == State.OPEN;
    }

    boolean isClosing() {
        return state == State.CLOSING;
    }

    boolean isLost() {
        return state == State.LOST;
    }

    /** A message arrived: a closing connection's drain looks again. */
    void arrived() {
        if (state == State.CLOSING) {
            synchronized (drained) {
                drained.notifyAll();
            }
        }
    }

    /** The connection is gone: frees every buffer and call exactly once. Safe from any thread holding no transport lock. */
    public void lost(Throwable cause) {
        synchronized (this) {
            if (state == State.LOST) {
                return;
            }
            state = State.LOST;
            handOver.lostBecause(cause);
        }
        stats.connectionsLost.increment();
        Events.state(name, "LOST", String.valueOf(cause));
        LOG.log(Level.DEBUG, "{0}: connection lost: {1}", name, String.valueOf(cause));
        link.disconnect();
        // ORDER: buffers back in the pool and sends stopped before any caller learns of
        // the loss, so what a failed call observes is the final state.
        receives.shutdown();
        sends.shutdown();
        rdma.shutdown();
        Requester.Taken t = requester.takeAll();
        synchronized (drained) {
            drained.notifyAll();
        }
        handOver.lost(t);
    }

    /** Refuses new calls, waits up to {@code timeout} for the calls somebody waits for, then is lost. */
    public void close(long timeout, TimeUnit unit) {
        synchronized (this) {
            if (state == State.OPEN) {
                state = State.CLOSING;
            }
            handOver.closedByUser();
        }
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        synchronized (drained) {
            long left;
            while (requester.active() > 0 && state != State.LOST && (left = deadline - System.nanoTime()) > 0) {
                try {
                    // woken by each message received while CLOSING; the bound covers a reply
                    // that slipped in between the check and the wait
                    drained.wait(Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(left), 50)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        lost(new RpcRdmaException("closed"));
    }
}
