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

    int posted();

    int held();

    int capacity();
}
