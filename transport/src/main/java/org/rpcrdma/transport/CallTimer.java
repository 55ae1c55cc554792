package org.rpcrdma.transport;

import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Call deadlines for every connection of the process, on one daemon thread.
 *
 * <p>A call on a connection costs nothing here beyond a {@code long}: its requester is
 * swept every {@value #TICK_MILLIS} ms while it has calls with a deadline (and forgotten
 * when it has none), as Linux checks its RPC timers on a tick rather than arming one per
 * request. A call parked with no connection (a client reconnecting, a backchannel waiting
 * for its client) gets a scheduled task instead: that path is rare. Either way the timer
 * only completes the call's future exceptionally (the same path as a caller's
 * {@code orTimeout} or {@code cancel}). A call's deadline is stamped by the first tick
 * that sees it (no clock read per call on the caller's thread), so a timeout is never
 * early and at most two ticks late.
 */
final class CallTimer {
    static final long TICK_MILLIS = 10;
    private static final ConcurrentLinkedQueue<Requester> WATCHED = new ConcurrentLinkedQueue<>();
    private static final Thread SWEEPER = Thread.ofPlatform().daemon().name("rpcrdma-call-timer").start(CallTimer::sweep);
    private static final ScheduledThreadPoolExecutor PARKED = parkedTimer();

    private CallTimer() {}

    /** Sweeps {@code r} from the next tick on, until it reports no timed calls. */
    static void watch(Requester r) {
        WATCHED.add(r);
        LockSupport.unpark(SWEEPER);
    }

    private static void sweep() {
        while (true) {
            if (WATCHED.isEmpty()) {
                LockSupport.park(); // until watch() (a spurious return just loops)
                continue;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS));
            for (Iterator<Requester> it = WATCHED.iterator(); it.hasNext(); ) {
                Requester r = it.next();
                try {
                    if (!r.expire()) {
                        it.remove();
                    }
                } catch (RuntimeException e) {
                    it.remove(); // never let one connection stop the timer of all others
                    System.getLogger(CallTimer.class.getName()).log(System.Logger.Level.WARNING,
                            "call timer: sweeping " + r.connectionName() + " failed", e);
                }
            }
        }
    }

    private static ScheduledThreadPoolExecutor parkedTimer() {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1,
                r -> Thread.ofPlatform().daemon().name("rpcrdma-parked-call-timer").unstarted(r));
        t.setRemoveOnCancelPolicy(true); // answered calls leave nothing behind
        return t;
    }

    /** A deadline for a call that no requester holds yet. */
    static ScheduledFuture<?> schedule(Runnable expire, long nanos) {
        return PARKED.schedule(expire, nanos, TimeUnit.NANOSECONDS);
    }
}
