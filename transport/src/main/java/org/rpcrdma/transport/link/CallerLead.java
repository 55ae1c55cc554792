package org.rpcrdma.transport.link;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The blocking callers' side of one CQ's {@link CompletionDriver}: a caller in
 * {@code callAndWait} on a link's own CQ takes the driver's poll role and polls for its own
 * reply (spinning in busy-poll, leading on the channel in event mode), and the poller thread
 * keeps off the CQ while such callers are there and for {@link #LINGER_NANOS} after the last
 * one left. It holds the callers' count and the linger; the role ({@code pollLock}) and the
 * CQ are the driver's, shared with it, so the driver's invariants hold for both (one thread
 * at a time polls and dispatches).
 */
final class CallerLead {
    /**
     * How long the poller keeps off the CQ once it saw that a blocking call ended since it
     * last looked, with nothing else outstanding: a caller's next call within this time
     * leads again. A message nobody waits for (a backward call, an async call made meanwhile)
     * waits at most this long, after the poller's park under way, for the poller.
     */
    static final long LINGER_NANOS = 1_000_000;
    /**
     * How long the poller parks at a time while blocking callers drive the CQ.
     * Long, so it does not wake between their calls (at 1 ms it woke 0.6 times per call in
     * the guest, on the CPUs the callers and the device need); a message no one waits for
     * after the last blocking call is dispatched within this plus {@link #LINGER_NANOS}.
     */
    static final long CALLER_PARK_NANOS = 10_000_000;
    /**
     * The same on a link where nothing arrives that nobody waits for (a client serving no
     * backward calls: every message is a reply, and a reply to a call no caller waits for
     * wakes the poller when the last blocking caller leaves). Each wake-up of the poller
     * takes a CPU from the callers and the device: in the guest, at 100 a second a future
     * call's p99 was 1.2-1.7x the other shapes', at 10 a second 1.07-1.17x.
     */
    static final long REPLIES_ONLY_PARK_NANOS = 100_000_000;

    private final CompletionDriver.Cq cq;
    private final boolean busyPoll;
    /** The driver's poll role: whoever holds it polls and dispatches. */
    private final ReentrantLock pollLock;
    /** Wakes the driver's poller thread. */
    private final Runnable wakePoller;
    /**
     * The blocking callers: how many are inside callAndWait now (the low 32 bits), counted
     * from before their Send is posted (a Send under Soft-RoCE takes long enough for the
     * poller to grab the channel meanwhile), and how many of their calls ended so far (the
     * high 32 bits). While there are any, the poller keeps off the CQ: they dispatch every
     * completion they poll. The count of ended calls tells the poller that a caller came and
     * went while it parked (then it lingers) with one atomic add per call and no clock read:
     * under TCG System.nanoTime() costs 1.5-2.4 µs, more than a poll.
     */
    private final AtomicLong callers = new AtomicLong();
    /** One ended call in {@link #callers}, the caller's count going down by one with it. */
    private static final long ENDED = (1L << 32) - 1;
    /** The ended calls the poller saw when it last looked (the poller thread's own). */
    private long endedSeen;
    /** {@link #CALLER_PARK_NANOS}, or {@link #REPLIES_ONLY_PARK_NANOS} where only replies arrive. */
    private volatile long callerPark = CALLER_PARK_NANOS;
    /** Event mode: how long a leading caller keeps polling after a completion before it sleeps (0: never). */
    private volatile long spinNanos;

    CallerLead(CompletionDriver.Cq cq, boolean busyPoll, ReentrantLock pollLock, Runnable wakePoller) {
        this.cq = cq;
        this.busyPoll = busyPoll;
        this.pollLock = pollLock;
        this.wakePoller = wakePoller;
    }

    /** Event mode: a leading caller spins this long after a completion before sleeping (the driver's setting). */
    void adaptiveSpin(long nanos) {
        this.spinNanos = nanos;
    }

    /** See {@link Link#unsolicitedMessages}. */
    void unsolicitedMessages(boolean expected) {
        callerPark = expected ? CALLER_PARK_NANOS : REPLIES_ONLY_PARK_NANOS;
        if (expected) {
            wakePoller.run(); // one parked for the long period parks again for the short one
        }
    }

    /**
     * Poller thread: parks (true) while blocking callers drive the CQ, or for
     * {@link #LINGER_NANOS} if one of their calls ended since it last looked and none of our
     * calls is outstanding (an async call's reply needs the poller at once).
     */
    boolean keepPollerOff() {
        long c = callers.get();
        long park;
        if ((int) c > 0) {
            park = callerPark;
        } else {
            long ended = c >>> 32;
            if (ended == endedSeen) {
                return false; // no blocking call ended since the last look: no linger
            }
            endedSeen = ended;
            if (cq.outstandingCalls() > 0) {
                return false;
            }
            park = LINGER_NANOS;
        }
        LockSupport.parkNanos(park);
        return true;
    }

    void blockingCallStarts() {
        callers.incrementAndGet();
    }

    void blockingCallEnds() {
        if ((int) callers.addAndGet(ENDED) == 0 && cq.outstandingCalls() > 0) {
            wakePoller.run(); // replies that async callers wait for: no lingering
        }
    }

    boolean pollOnCaller(BooleanSupplier done, long deadlineNanos) {
        if (pollLock.isHeldByCurrentThread()) {
            return false; // called from a handler that is itself dispatching
        }
        if (!busyPoll) {
            return leadOnCaller(done, deadlineNanos);
        }
        // The clock is read once every 64 spins: under TCG the guest's clocksource (hpet)
        // makes System.nanoTime() cost ~1 µs, 23 % of a spinning caller's time; not at the first
        // spin either (a reply is never there yet: the caller just posted its Send).
        // The role, once taken, is kept until the caller leaves: its empty polls take no lock.
        boolean holding = false;
        try {
            for (int spins = 1; !done.getAsBoolean() && !cq.stopping(); spins++) {
                if ((spins & 63) == 0 && System.nanoTime() - deadlineNanos >= 0) {
                    break;
                }
                if (!holding && !(holding = pollLock.tryLock())) {
                    Thread.onSpinWait(); // another caller holds the role: it dispatches our reply too
                    continue;
                }
                int n = cq.pollHolding();
                if (n > 0) {
                    cq.dispatch(n); // gate let go; the role kept: the sink sees one completion thread
                } else {
                    Thread.onSpinWait();
                }
            }
        } finally {
            if (holding) {
                cq.letGo();
                pollLock.unlock();
            }
        }
        return true;
    }

    /**
     * Event mode, a caller in callAndWait (between {@link #blockingCallStarts} and
     * {@link #blockingCallEnds}): takes the poll role and waits on the channel itself until
     * its reply was dispatched, so the thread the device wakes is the one that wanted the
     * reply (perftest's {@code -e} shape). Completions for others are dispatched on the way.
     * When the role is held (the poller was already waiting on the channel, or another
     * caller leads) it queues for the role; a leader that dispatched something while
     * others queue passes the role on, so a caller whose reply it dispatched returns at
     * once (one hand-off, as with a poller) and the next one leads.
     */
    private boolean leadOnCaller(BooleanSupplier done, long deadlineNanos) {
        try {
            while (!done.getAsBoolean() && !cq.stopping()) {
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0 || !pollLock.tryLock(left, TimeUnit.NANOSECONDS)) {
                    break;
                }
                try {
                    leadOnce(done, deadlineNanos);
                } finally {
                    pollLock.unlock();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the caller's future.get sees it and abandons the call
        }
        return true;
    }

    /** Holding the role: polls, waits and dispatches until done, the deadline, or others queue after a dispatch. */
    private void leadOnce(BooleanSupplier done, long deadlineNanos) {
        long spinUntil = System.nanoTime() + spinNanos;
        while (!done.getAsBoolean() && !cq.stopping()) {
            long now = System.nanoTime();
            long left = deadlineNanos - now;
            if (left <= 0) {
                return;
            }
            boolean spin = now - spinUntil < 0;
            int n = spin ? cq.pollOnly() : cq.pollOrWait(Math.min(CompletionDriver.AWAIT_MILLIS, left / 1_000_000L));
            if (n > 0) {
                cq.dispatch(n); // gate released; the role kept: the sink sees one completion thread
                if (pollLock.hasQueuedThreads()) {
                    return; // let a queued caller whose reply this was go; requeue behind it
                }
            } else if (spin) {
                Thread.onSpinWait();
            }
        }
    }
}
