package org.rpcrdma.transport.link;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The receives one side of an in-memory wire has posted, in order: a single-producer
 * single-consumer ring (the side's receive pool posts under the pool's lock, the peer's
 * Sends take them under the peer's send lock), a power of two long (indexed with a mask:
 * a division per Send showed in the profile).
 */
final class PostedReceives {
    private static final VarHandle HEAD;
    private static final VarHandle TAIL;

    static {
        try {
            var l = MethodHandles.lookup();
            HEAD = l.findVarHandle(PostedReceives.class, "head", long.class);
            TAIL = l.findVarHandle(PostedReceives.class, "tail", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int[] posted;
    private final int mask;
    private final int receives;
    /** Taken so far: the peer's sending thread (one at a time, under its send lock) only. */
    private long head;
    /** Posted so far: this side's poster (one at a time, under its receive pool's lock) only. */
    private long tail;

    /** @param receives the side's receive buffers: the most it can have posted at once */
    PostedReceives(int receives) {
        this.receives = receives;
        posted = new int[Integer.highestOneBit(Math.max(1, receives - 1)) << 1];
        mask = posted.length - 1;
    }

    void post(int[] slots, int n) {
        long t = tail;
        if (t + n - (long) HEAD.getAcquire(this) > receives) {
            throw new IllegalStateException("more receives posted than buffers");
        }
        for (int i = 0; i < n; i++) {
            posted[(int) (t + i) & mask] = slots[i];
        }
        TAIL.setRelease(this, t + n); // ORDER: after the slots, which the peer reads once it sees the tail
    }

    /** The next posted receive, or -1 if none. */
    int take() {
        long h = head;
        if (h == (long) TAIL.getAcquire(this)) {
            return -1;
        }
        int slot = posted[(int) h & mask];
        HEAD.setRelease(this, h + 1);
        return slot;
    }
}
