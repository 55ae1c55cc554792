package org.rpcrdma.transport.rpc;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.LongAdder;
import org.rpcrdma.transport.InMemoryPair;

/**
 * A {@link LongAdder} whose first writing thread counts without atomic operations: the
 * counters on the call path are bumped by one thread almost always (a connection's
 * completion thread, a caller that polls its own replies, the one thread of an
 * {@link InMemoryPair}), and a {@code LongAdder}'s uncontended add is still a
 * compare-and-set, a dozen of them per call, a good part of the transport's own cost per
 * call. The owner writes a plain field with opaque stores (never torn, as a 64-bit value
 * read by another thread must not be); every other thread adds through the
 * {@code LongAdder}. {@link #sum} adds both: exact once writers are quiet, otherwise a
 * moment stale, as a {@code LongAdder}'s sum is under concurrent updates.
 *
 * <p>The owner is the first thread that adds, for good (by id, so no thread is kept
 * alive): if that was a short-lived thread, the others pay what a {@code LongAdder}
 * costs, no more.
 */
final class OwnedCounter extends LongAdder {
    private static final long serialVersionUID = 1L;
    private static final long NO_OWNER = -1;
    private static final VarHandle OWNED;
    private static final VarHandle OWNER;

    static {
        try {
            var l = MethodHandles.lookup();
            OWNED = l.findVarHandle(OwnedCounter.class, "owned", long.class);
            OWNER = l.findVarHandle(OwnedCounter.class, "owner", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Id of the thread that counts in {@link #owned}; NO_OWNER until the first add. */
    private volatile long owner = NO_OWNER;
    /** Written by the owner only (opaque), read by anyone (opaque). */
    private long owned;

    @Override
    public void add(long x) {
        long me = Thread.currentThread().threadId();
        long o = owner;
        if (o == me || o == NO_OWNER && OWNER.compareAndSet(this, NO_OWNER, me)) {
            OWNED.setOpaque(this, (long) OWNED.getOpaque(this) + x);
        } else {
            super.add(x);
        }
    }

    @Override
    public void increment() {
        add(1L);
    }

    @Override
    public void decrement() {
        add(-1L);
    }

    @Override
    public long sum() {
        return (long) OWNED.getOpaque(this) + super.sum();
    }

    /** As {@link LongAdder#reset}: exact only while nobody adds (the owner's count is not atomically cleared). */
    @Override
    public void reset() {
        OWNED.setOpaque(this, 0L);
        super.reset();
    }

    @Override
    public long sumThenReset() {
        long s = sum();
        reset();
        return s;
    }
}
