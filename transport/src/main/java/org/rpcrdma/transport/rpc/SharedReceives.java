package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;

/**
 * One server connection's receives when they come from the server's shared receive queue
 * ({@link SharedReceivePool}): the {@link ReceiveQueue} the connection sees, with the
 * credits it grants decided by its share of the pool ({@link SharedCredits}) instead of
 * the configured credits. The pool keeps every free buffer posted (its watermark), so
 * "posting for this connection" is the pool's business; what is this connection's is its
 * share: the grants its replies carry, and the receives kept for the replies to our own
 * (backward) calls on it.
 *
 * <p>Buffers are the pool's slots: a completion on this connection's QP names one, and
 * gives it back to the pool whatever became of the connection. {@link #shutdown} ends the
 * share (its receives are free for the others); the pool goes on.
 */
public final class SharedReceives implements ReceiveQueue {
    private final SharedReceivePool pool;
    private final SharedCredits credits;
    private final SharedCredits.Share share;

    /** @param share this connection's, from {@link SharedCredits#join} */
    public SharedReceives(SharedReceivePool pool, SharedCredits credits, SharedCredits.Share share) {
        this.pool = pool;
        this.credits = credits;
        this.share = share;
    }

    /** The pool posts at its watermark; a connection adds nothing but a nudge. */
    @Override
    public int replenish(int required) {
        return pool.replenish();
    }

    /**
     * Nothing: a completion frees no buffer (the pool posts when one is released), and
     * the pool's lock is one for all connections.
     */
    @Override
    public int replenishAfterCompletion(int required) {
        return 0;
    }

    /**
     * Whatever {@code required} says: the grants are backed by the pool as a whole
     * ({@link SharedCredits}), not by receives posted for this connection.
     */
    @Override
    public boolean ensurePosted(int required) {
        return true;
    }

    @Override
    public boolean ensureForOwnCall(int outstanding, int required) {
        return credits.reserveOwn(share, outstanding + 1);
    }

    @Override
    public void ownCallsOut(int outstanding) {
        credits.reserveOwn(share, outstanding);
    }

    @Override
    public int grantToPeer(int configured) {
        return credits.grant(share);
    }

    @Override
    public int peerLimit(int configured) {
        return credits.promise(share);
    }

    @Override
    public void peerCallArrived() {
        credits.callArrived(share);
    }

    @Override
    public MemorySegment completed(int slot) {
        return pool.completed(slot);
    }

    @Override
    public void flushed(int slot) {
        pool.reclaim(slot);
    }

    @Override
    public void completedAfterLoss(int slot) {
        pool.reclaim(slot);
    }

    @Override
    public void release(int slot) {
        pool.release(slot);
    }

    /** The connection is gone: its share is free for the others (the pool and its buffers stay). */
    @Override
    public void shutdown() {
        credits.leave(share);
    }

    @Override
    public MemorySegment buffer(int slot) {
        return pool.buffer(slot);
    }

    @Override
    public MemorySegment view(int slot, long offset, long length) {
        return pool.view(slot, offset, length);
    }

    @Override
    public int posted() {
        return pool.posted();
    }

    @Override
    public int held() {
        return pool.held();
    }

    @Override
    public int capacity() {
        return pool.capacity();
    }
}
