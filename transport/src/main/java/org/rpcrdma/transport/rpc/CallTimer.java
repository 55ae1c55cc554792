package org.rpcrdma.transport.rpc;

import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * Call deadlines for every connection of the process, on one daemon thread.
 *
 * <p>A call on a connection costs nothing here beyond a {@code long}: its requester is
 * swept every {@value #TICK_MILLIS} ms while it has calls with a deadline (and forgotten
 * when it has none), as Linux checks its RPC timers on a tick rather than arming one per
 * request. A call parked with no connection (a client reconnecting, a backchannel waiting
 * for its client) gets a scheduled task instead: that path is rare. Either way the timer
 * only fails the call (the same path as a caller's {@code orTimeout} or {@code cancel}),
 * and never on its own threads: a timed-out call's continuations and failure callback run
 * on a thread of {@link #EXPIRY}, so one that blocks (or waits for another timed call)
 * delays no other call's timeout. A call's deadline is stamped by the first tick that sees
 * it (no clock read per call on the caller's thread), so a timeout is never early and at
 * most two ticks late.
 *
 * <p>One rule for every call shape: a timeout of 0 means none, a negative one is refused
 * ({@link #timeoutNanos}).
 */
public final class CallTimer {
    static final long TICK_MILLIS = 10;
    private static final ConcurrentLinkedQueue<Requester> WATCHED = new ConcurrentLinkedQueue<>();
    /**
     * Runs the expiries, a virtual thread each: user code that blocks in a continuation
     * holds up no other timeout, and a burst of timeouts costs no platform thread each.
     */
    private static final ExecutorService EXPIRY = Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name("rpcrdma-call-expiry-", 0).factory());
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

    /** A deadline for a call that no requester holds yet ({@code expire} runs off the timer thread). */
    public static ScheduledFuture<?> schedule(Runnable expire, long nanos) {
        return PARKED.schedule(() -> EXPIRY.execute(expire), nanos, TimeUnit.NANOSECONDS);
    }

    /** Runs {@code r} (which completes calls: user code runs) off the timer thread. */
    public static void execute(Runnable r) {
        EXPIRY.execute(r);
    }

    /** Fails {@code c} with its timeout off the timer thread (its continuations are user code). */
    static void expire(CallRequest c, int generation, String where) {
        EXPIRY.execute(() -> c.expire(where, generation));
    }

    /**
     * A call's timeout in nanoseconds, 0 for none: the one rule of every call shape
     * ({@code 0} means no timeout, as for {@link RpcRdmaOptions#callTimeoutMillis}).
     *
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public static long timeoutNanos(long timeout, TimeUnit unit) {
        if (unit == null) {
            throw new NullPointerException("unit");
        }
        if (timeout < 0) {
            throw new IllegalArgumentException("timeout " + timeout + " " + unit
                    + " is negative (0 means no timeout)");
        }
        return unit.toNanos(timeout);
    }

    /** How long a blocking caller waits for a call with {@code timeoutNanos} (0: none, ~73 years). */
    public static long waitNanos(long timeoutNanos) {
        return timeoutNanos == 0 ? Long.MAX_VALUE / 4 : timeoutNanos;
    }
}
