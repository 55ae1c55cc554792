package org.rpcrdma.transport.rpc;

import java.util.concurrent.ScheduledFuture;

/**
 * When a {@link CallRequest} times out. Its timeout is set once, at issue, and its deadline
 * keeps running across reconnects. A requester sweeps it on {@link CallTimer}'s tick; a call
 * parked with no connection gets a scheduled task. The clock is not read for a call that
 * goes to a requester: the first sweep that sees it stamps its deadline from a clock read
 * made after it was queued, so it never times out early (at most a tick late), and a call
 * answered before that sweep never reads the clock. Guarded by the requester's lock that
 * has the call (or the call is between connections); the task is volatile.
 */
final class CallDeadline {
    /** Its deadline passed and its failure is on its way. */
    private boolean expiring;
    /** System.nanoTime() after which the call times out; 0: not stamped yet, or never. */
    private long at;
    /** 0: none. */
    private long timeoutNanos;
    private volatile ScheduledFuture<?> task;

    /** A new call (fields skipped when already clear: the request is reused per call). */
    void reset() {
        expiring = false;
        at = 0;
        timeoutNanos = 0;
        if (task != null) {
            task = null;
        }
    }

    /** The call's timeout ({@code nanos} > 0). */
    void timeout(long nanos) {
        timeoutNanos = nanos;
    }

    /** A call with no requester: its deadline starts now, and {@code expire} runs when it passes. */
    void schedule(Runnable expire) {
        at(System.nanoTime());
        task = CallTimer.schedule(expire, timeoutNanos);
    }

    /**
     * A call that left its requester (handed over by a lost connection) and waits for
     * another: {@code expire} runs when its deadline, stamped there or now, passes. A task
     * of an earlier wait is cancelled first.
     */
    void scheduleRemaining(Runnable expire) {
        ScheduledFuture<?> t = task;
        if (t != null) {
            t.cancel(false);
        }
        long now = System.nanoTime();
        task = CallTimer.schedule(expire, Math.max(0, at(now) - now));
    }

    boolean timed() {
        return timeoutNanos != 0;
    }

    /** The call's timeout in nanoseconds (0: none). */
    long timeoutNanos() {
        return timeoutNanos;
    }

    /**
     * The deadline (0: none), stamped {@code now} + the timeout if it was not yet. {@code now}
     * must be a clock read made after the call was issued.
     */
    long at(long now) {
        if (at == 0 && timeoutNanos != 0) {
            long d = now + timeoutNanos;
            at = d == 0 ? 1 : d;
        }
        return at;
    }

    long timeoutMillis() {
        return timeoutNanos == 0 ? 0 : Math.max(1, timeoutNanos / 1_000_000);
    }

    boolean expiring() {
        return expiring;
    }

    /** Whether it passed at {@code now} (then it is expiring: not collected again). */
    boolean passed(long now) {
        if (now - at(now) >= 0) {
            expiring = true;
            return true;
        }
        return false;
    }

    /** The call ended: a scheduled task is cancelled. */
    void stop() {
        cancel(task);
    }

    /** This use's scheduled task, or null: read before the call ends, cancelled after ({@link #cancel}). */
    ScheduledFuture<?> task() {
        return task;
    }

    static void cancel(ScheduledFuture<?> t) {
        if (t != null) {
            t.cancel(false);
        }
    }
}
