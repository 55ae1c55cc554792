package org.rpcrdma.transport.core;

import java.util.ArrayDeque;

/**
 * The requester's credit window for one direction of one connection.
 *
 * <p>Rules (RFC 8166 §3.3.1–3.3.3, RFC 8167 §4.1; behaviour of Linux
 * {@code rpcrdma_reply_handler}): a new connection starts with a window of 1 until the
 * responder's first grant arrives; a grant of 0 is treated as 1 (otherwise the requester
 * could never send again); grants above the locally configured maximum are clamped to it,
 * because the receive buffers and send contexts were sized for that maximum. A call takes
 * one credit before its Send is posted and gives it back when its reply is matched or the
 * call is abandoned. Calls beyond the window wait in FIFO order; they are never sent early.
 *
 * <p>Waiting is asynchronous: {@link #acquire(Runnable)} either runs the continuation at
 * once or queues it; {@link #release()} and {@link #grant(int)} run queued continuations
 * on the releasing thread, outside the lock. Thread-safe.
 */
public final class CreditAccount {
    private final Direction direction;
    private final int max;
    private final ArrayDeque<Runnable> waiters = new ArrayDeque<>();
    private final RpcRdmaStats stats;
    private int window = 1;
    private int outstanding;
    private int highWater;

    /**
     * @param max the most credits this side will ever use in this direction (≥ 1)
     */
    public CreditAccount(Direction direction, int max, RpcRdmaStats stats) {
        if (max < 1) {
            throw new IllegalArgumentException("max credits must be >= 1, got " + max);
        }
        this.direction = direction;
        this.max = max;
        this.stats = stats;
    }

    public Direction direction() {
        return direction;
    }

    /** Turns a received rdma_credit value into a window: 0 → 1, above max → max. */
    public static int clampGrant(int raw, int max) {
        // rdma_credit is an unsigned 32-bit value on the wire (RFC 8166 §4.2.1).
        long v = Integer.toUnsignedLong(raw);
        if (v == 0) {
            return 1;
        }
        return (int) Math.min(v, max);
    }

    /** Applies a grant carried in a Reply of this direction. */
    public void grant(int raw) {
        synchronized (this) {
            window = clampGrant(raw, max);
        }
        drain();
    }

    /** Back to the initial window of 1 and no outstanding calls (a new connection). */
    public void reset() {
        synchronized (this) {
            window = 1;
            outstanding = 0;
        }
        drain();
    }

    /** Takes a credit if the window allows it and nobody is queued ahead. */
    public synchronized boolean tryAcquire() {
        if (waiters.isEmpty() && outstanding < window) {
            outstanding++;
            highWater = Math.max(highWater, outstanding);
            return true;
        }
        return false;
    }

    /**
     * Runs {@code whenGranted} holding one credit: now if one is free, otherwise later on
     * the thread that frees one.
     *
     * @return {@code true} if it ran at once, {@code false} if it had to wait
     */
    public boolean acquire(Runnable whenGranted) {
        synchronized (this) {
            if (!(waiters.isEmpty() && outstanding < window)) {
                waiters.addLast(whenGranted);
                if (stats != null) {
                    stats.creditWaits.increment();
                }
                return false;
            }
            outstanding++;
            highWater = Math.max(highWater, outstanding);
        }
        whenGranted.run();
        return true;
    }

    /** Returns one credit (the call's reply was matched, or the call was abandoned). */
    public void release() {
        synchronized (this) {
            if (outstanding <= 0) {
                throw new IllegalStateException(direction + " credit released more often than acquired");
            }
            outstanding--;
        }
        drain();
    }

    /** Removes a queued continuation that has not run yet; true if it was queued. */
    public synchronized boolean cancel(Runnable waiter) {
        return waiters.removeFirstOccurrence(waiter);
    }

    /** Takes every queued continuation (connection closing); they will never run here. */
    public synchronized java.util.List<Runnable> drainWaiters() {
        java.util.List<Runnable> l = new java.util.ArrayList<>(waiters);
        waiters.clear();
        return l;
    }

    private void drain() {
        while (true) {
            Runnable r;
            synchronized (this) {
                if (waiters.isEmpty() || outstanding >= window) {
                    return;
                }
                r = waiters.pollFirst();
                outstanding++;
                highWater = Math.max(highWater, outstanding);
            }
            r.run();
        }
    }

    public synchronized int window() {
        return window;
    }

    public synchronized int outstanding() {
        return outstanding;
    }

    public synchronized int waiting() {
        return waiters.size();
    }

    /** Most calls ever outstanding at once in this direction. */
    public synchronized int highWater() {
        return highWater;
    }

    public int max() {
        return max;
    }
}
