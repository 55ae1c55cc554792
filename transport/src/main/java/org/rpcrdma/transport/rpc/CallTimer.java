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
 * swept on a tick while it has calls with a deadline (and forgotten when it has none), as
 * Linux checks its RPC timers on a tick rather than arming one per request. The tick is
 * 1/16 of the finest interval any requester needs resolved (its shortest timeout, the
 * stall, the silence), between {@value #MIN_TICK_MILLIS} and {@value #MAX_TICK_MILLIS} ms:
 * a process whose calls time out after seconds is not woken 100 times a second (each
 * wake-up takes a CPU from the threads polling for replies), and a short timeout still
 * gets a fine tick at once. A call parked with no connection (a client reconnecting, a backchannel waiting
 * for its client) gets a scheduled task instead: that path is rare. Either way the timer
 * only fails the call (the same path as a caller's {@code orTimeout} or {@code cancel}),
 * and never on its own threads: a timed-out call's continuations and failure callback run
 * on a thread of {@link #EXPIRY}, so one that blocks (or waits for another timed call)
 * delays no other call's timeout. A call's deadline is stamped by the first tick that sees
 * it (no clock read per call on the caller's thread), so a timeout is never early and at
 * most two ticks late: 1/8 of it, or 20 ms for timeouts under 160 ms.
 *
 * <p>One rule for every call shape: a timeout of 0 means none, a negative one is refused
 * ({@link #timeoutNanos}).
 */
public final class CallTimer {
    static final long MIN_TICK_MILLIS = 10;
    static final long MAX_TICK_MILLIS = 250;
    private static final long MIN_TICK = TimeUnit.MILLISECONDS.toNanos(MIN_TICK_MILLIS);
    private static final long MAX_TICK = TimeUnit.MILLISECONDS.toNanos(MAX_TICK_MILLIS);
    /**
     * The sweeper's tick (ns): lowered by {@link #resolve} when a call needs a finer one,
     * set from what the requesters report after each sweep.
     */
    private static volatile long tick = MAX_TICK;
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

    /**
     * Sweeps {@code r} from the next tick on, until it reports no timed calls;
     * {@code intervalNanos} is what it needs resolved (see {@link #resolve}).
     */
    static void watch(Requester r, long intervalNanos) {
        WATCHED.add(r);
        tick = Math.min(tick, tickFor(intervalNanos));
        LockSupport.unpark(SWEEPER);
    }

    /**
     * A watched requester took a call with a timeout of {@code intervalNanos}: if that needs
     * a finer tick than the current one, the sweeper takes it now (its next sweep is at once,
     * and stamps the call's deadline). Otherwise a volatile read.
     */
    static void resolve(long intervalNanos) {
        long t = tickFor(intervalNanos);
        if (t < tick) {
            tick = t;
            LockSupport.unpark(SWEEPER);
        }
    }

    /** The tick that resolves {@code intervalNanos}: 1/16 of it, within the bounds. */
    static long tickFor(long intervalNanos) {
        return Math.clamp(intervalNanos / 16, MIN_TICK, MAX_TICK);
    }

    /** The sweeper's current tick in ns (tests). */
    static long tickNanos() {
        return tick;
    }

    private static void sweep() {
        while (true) {
            if (WATCHED.isEmpty()) {
                LockSupport.park(); // until watch() (a spurious return just loops)
                continue;
            }
            // A resolve() or watch() during the last sweep left a permit: this returns at once,
            // and the sweep below sees its call (they run under the requester's lock).
            LockSupport.parkNanos(tick);
            long finest = Long.MAX_VALUE;
            for (Iterator<Requester> it = WATCHED.iterator(); it.hasNext(); ) {
                Requester r = it.next();
                try {
                    long interval = r.expire();
                    if (interval == 0) {
                        it.remove();
                    } else {
                        finest = Math.min(finest, interval);
                    }
                } catch (RuntimeException e) {
                    it.remove(); // never let one connection stop the timer of all others
                    System.getLogger(CallTimer.class.getName()).log(System.Logger.Level.WARNING,
                            "call timer: sweeping " + r.connectionName() + " failed", e);
                }
            }
            tick = tickFor(finest);
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
