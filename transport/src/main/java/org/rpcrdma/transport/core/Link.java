package org.rpcrdma.transport.core;

import java.lang.foreign.MemorySegment;

/**
 * What a {@code Connection} needs from the hardware below it (≈ the verbs half of Linux
 * {@code rpcrdma_ep}): post one Send from a send-context buffer, post receive buffers, and
 * tear the connection down. Completions flow back through the connection's
 * {@code onSendCompleted}, {@code onReceive}, {@code onReceiveFlushed} and
 * {@code onLinkLost} methods, called by the link's completion poller.
 *
 * <p>The verbs implementation maps {@link #postSend} to one IBV_WR_SEND with one SGE on the
 * RC QP (wr_id = {@link WrId#pack}(OP_SEND, slot, generation)) and {@link #postReceives}
 * to one chained ibv_post_recv; a host test implementation copies bytes in memory.
 */
public interface Link {
    /** Posts a Send of {@code buffer[0, length)}; buffer belongs to send context {@code slot}. */
    void postSend(int slot, MemorySegment buffer, int length, boolean signalled);

    /** Posts receives for the given receive-pool slots. */
    void postReceives(int[] slots, int count);

    /** Starts disconnecting; pending work completes with flush errors or is dropped. Idempotent. */
    void disconnect();

    /**
     * Drives completions on the calling thread until {@code done} or {@code deadlineNanos}
     * (System.nanoTime), so a blocking caller gets its reply without a thread hand-off.
     * Returns false at once if this link does not do that (the caller then waits for its
     * future, which the link's own poller completes).
     */
    default boolean pollOnCaller(java.util.function.BooleanSupplier done, long deadlineNanos) {
        return false;
    }

    /**
     * A thread is about to make a blocking call and then {@link #pollOnCaller wait for its
     * reply}: called before its Send is posted, paired with {@link #blockingCallEnds}.
     */
    default void blockingCallStarts() {
    }

    /** The thread of a {@link #blockingCallStarts} has its reply, or gave up. */
    default void blockingCallEnds() {
    }
}
