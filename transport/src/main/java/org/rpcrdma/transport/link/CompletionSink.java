package org.rpcrdma.transport.link;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.rpc.StatsCounters;

/**
 * Where a link delivers its completions (≈ the consumer of Linux's {@code rpcrdma_wc_*}
 * callbacks): the connection's engine. An interface so the link layer does not know the RPC
 * engine's class. Called by one completion thread at a time ({@link CompletionDriver}, or an
 * in-memory side's completion context), never under a link lock.
 */
public interface CompletionSink {
    /** A receive completed with {@code length} bytes in receive buffer {@code slot}. */
    void received(int slot, int length);

    /** A signalled Send completed: its context and all older ones are free. */
    void sendCompleted(int slot);

    /** A signalled RDMA Read or Write completed (the token it was posted with). */
    void rdmaCompleted(int token);

    /** A posted receive came back flushed (QP in error). */
    void flushed(int slot);

    /** The link is gone (a failed completion, a disconnect). Safe from any thread holding no link lock. */
    void onLinkLost(Throwable cause);

    /** Receive buffer {@code slot} (an in-memory link writes received bytes here). */
    MemorySegment receiveBuffer(int slot);

    /** Whether Remote Invalidation was negotiated (RFC 8797 §7): an unnegotiated one is counted. */
    boolean remoteInvalidation();

    /** The connection's counters (the link counts wakeups, chunk memory and unnegotiated invalidations there). */
    StatsCounters counters();

    /** Our calls awaiting replies now (the completion driver polls on a caller's thread only then). */
    int outstandingCalls();
}
