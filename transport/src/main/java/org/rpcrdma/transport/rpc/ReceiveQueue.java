package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;

/**
 * Where a connection's receives come from (≈ Linux {@code rpcrdma_rep} buffers): the
 * connection says how many must be posted, takes a completed buffer, and gives it back.
 * {@link ReceivePool} posts to one QP's receive queue; a shared receive queue serving
 * several connections can implement the same contract.
 *
 * <p>Each buffer is FREE, POSTED (owned by the hardware) or HELD (its message is being
 * processed, or a user has it and has not released it). Thread-safe.
 */
public interface ReceiveQueue {
    /**
     * Posts FREE buffers until at least {@code required} are POSTED (as many as are free).
     *
     * @return how many were posted now
     * @throws RuntimeException if posting failed (the QP is gone); nothing changed then
     */
    int replenish(int required);

    /**
     * {@link #replenish}, called by the completion thread after {@link #completed}: an
     * implementation may skip its lock when enough are posted, since only the completion
     * thread takes POSTED buffers away (what it reads can only be short of the truth).
     */
    default int replenishAfterCompletion(int required) {
        return replenish(required);
    }

    /**
     * {@link #replenish}, then whether at least {@code required} are POSTED, atomically (or
     * whether they were at one moment of the call, which is as good: a receive completed
     * after it was one the sender no longer counts on).
     */
    boolean ensurePosted(int required);

    /** A receive completed successfully: POSTED → HELD; its buffer. */
    MemorySegment completed(int slot);

    /** A receive was flushed (QP in error): POSTED → FREE. */
    void flushed(int slot);

    /** The holder is done with the buffer: HELD → FREE. */
    void release(int slot);

    /** The QP is gone: POSTED buffers are FREE again and nothing is posted from now on. */
    void shutdown();

    /** Buffer {@code slot} (the hardware writes received bytes here). */
    MemorySegment buffer(int slot);

    /**
     * Bytes {@code [offset, offset + length)} of buffer {@code slot}, the message a receive
     * carries. Completion thread only; an implementation may hand out the same view again
     * for the next message in that slot at the same place (no slice per message).
     */
    default MemorySegment view(int slot, long offset, long length) {
        return buffer(slot).asSlice(offset, length);
    }

    /**
     * The sender of one more of our own calls, {@code outstanding} being out: whether a
     * receive is there for its reply ({@code required} in all posted for this connection).
     */
    default boolean ensureForOwnCall(int outstanding, int required) {
        return ensurePosted(required);
    }

    /** Our own calls out now (their replies need receives); under the requester's lock. */
    default void ownCallsOut(int outstanding) {
    }

    /**
     * The credits the next reply grants the peer (RFC 8166 §3.3.1): {@code configured} for
     * a connection with receives of its own; a shared receive queue's share otherwise.
     */
    default int grantToPeer(int configured) {
        return configured;
    }

    /** Calls the peer may have out at most now (more is a credit violation). */
    default int peerLimit(int configured) {
        return configured;
    }

    /** A call of the peer's arrived (counted against what it was granted). */
    default void peerCallArrived() {
    }

    /**
     * A receive completed after the connection was lost: a buffer of a queue shared with
     * other connections goes back to it; one of this connection's own was reclaimed already.
     */
    default void completedAfterLoss(int slot) {
    }

    int posted();

    int held();

    int capacity();
}
