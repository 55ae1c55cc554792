package org.rpcrdma.transport.link;

import java.lang.System.Logger.Level;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * Who takes completions off one CQ, and when: the poller thread (a link's own, or a
 * {@link CompletionGroup}'s for a shared CQ), or, on a link's own CQ, a caller blocked in
 * {@code callAndWait} for its reply. One thread at a time holds the poll role
 * ({@code pollLock}) and dispatches, so the connection ({@link CompletionSink}) sees one completion thread.
 *
 * <p>Invariants (a busy-poll caller, and a completion group's busy thread, keep both the
 * role and the CQ's gate across their empty polls, so they take no lock: the role's
 * {@code ReentrantLock} and the gate's {@code StampedLock} per empty poll were 15 % of a
 * spinning caller's samples under C1):
 * <ul>
 *   <li>Only the role's holder polls and dispatches, so each completion copied out is
 *       dispatched once, by one thread, in CQ order.
 *   <li>Dispatch (user code) never runs under the gate: a caller lets the gate go
 *       ({@link Cq#pollHolding}) before it dispatches.
 *   <li>Destroy ({@link Cq#stopping}, then the gate's write side) waits at most one poll for
 *       a caller: it looks at {@code stopping} before every poll and then lets the gate go
 *       ({@link Cq#letGo}) and the role.
 *   <li>A caller that stops polling (its reply, its deadline, destroy) lets both go; the
 *       poller thread of a link's own CQ, which takes the role for one poll at a time, takes
 *       it back after {@link #LINGER_NANOS}, or at once if an async call is outstanding. A
 *       group's thread, whose role no caller takes, lets both go only to park (idle) or stop.
 * </ul>
 *
 * <p>Modes (how to choose: {@link RpcRdmaOptions#busyPoll()}):
 * <ul>
 *   <li><b>busy-poll</b>: the poller spins on the CQ; a blocking caller spins for its own
 *       reply and the poller parks while it does (a third thread waking now and then on two
 *       vCPUs preempted the two spinners: p99 of 6-16 ms in the guest, bench/profiles).
 *   <li><b>events</b>: the poller arms the CQ and sleeps on the completion channel; a
 *       blocking caller takes the role and sleeps on the channel itself, so the device
 *       wakes the thread that wants the reply: one wake-up per side per call, as perftest's
 *       {@code -e} (the poller-to-caller hand-off was 16% of a round trip in the guest
 *       profile, bench/profiles/guest-20261123.md).
 *   <li><b>adaptive</b> (events with {@code pollSpinMicros}): after a completion, poll
 *       without arming for that long before sleeping.
 * </ul>
 */
final class CompletionDriver {
    private static final System.Logger LOG = System.getLogger(CompletionDriver.class.getName());
    /** Longest event-mode wait on the channel: only a backstop, destroy wakes the waiter (stopWaiting). */
    static final long AWAIT_MILLIS = 60_000;
    /**
     * How long the poller keeps off the CQ after the last blocking caller left
     * with nothing else outstanding. A caller's next call within this time leads again; a
     * message nobody waits for (a backward call, an async call made meanwhile) waits at most
     * this long for the poller.
     */
    static final long LINGER_NANOS = 1_000_000;
    /**
     * How long the poller parks at a time while blocking callers drive the CQ.
     * Long, so it does not wake between their calls (at 1 ms it woke 0.6 times per call in
     * the guest, on the CPUs the callers and the device need); a message no one waits for
     * after the last blocking call is dispatched within this plus {@link #LINGER_NANOS}.
     */
    static final long CALLER_PARK_NANOS = 10_000_000;
    /** How many empty polls a completion group's busy thread makes between looks at {@link Cq#idle}. */
    static final int IDLE_LOOK_EVERY = 64;
    /** Poller threads that did not end within the wait of their link's destroy or group's close, in this JVM. */
    private static final LongAdder FREED_PAST = new LongAdder();

    /** What the driver needs from the link: each poll under the link's gate, 0 once it is stopping. */
    interface Cq {
        /** One poll, no arming; completions copied out. */
        int pollOnly();

        /**
         * Busy-poll, the poll role's holder: one poll, no arming, keeping the gate entered
         * while it finds nothing (no lock per empty poll); let go before returning
         * completions (dispatch runs user code) and once stopping. 0: none, or stopping.
         */
        int pollHolding();

        /** The poll role's holder lets the gate go if {@link #pollHolding} kept it (before it lets the role go). */
        void letGo();

        /** Poll; if empty, arm, poll again and wait on the channel up to {@code awaitMillis}. */
        int pollOrWait(long awaitMillis);

        /** Feeds the copied completions to the connection (user code: no lock of the link held). */
        void dispatch(int n);

        boolean stopping();

        /** Our calls awaiting replies (an async caller's reply needs the poller). */
        int outstandingCalls();

        /** The poller failed: the connection is lost. */
        void failed(RuntimeException e);

        /**
         * Whether no completion can arrive: no connection (nor the leftovers of a destroyed
         * one) is on these CQs. The poller then sleeps until {@link #wake}, in every mode, so
         * a group's thread without connections takes no CPU and no wake-up from the threads
         * that have work. Whoever makes it false (a connection assigned) wakes the poller.
         */
        default boolean idle() {
            return false;
        }
    }

    private final Cq cq;
    private final boolean busyPoll;
    /**
     * Whether a blocking caller may take the poll role (a link's own CQ); never on a
     * completion group's CQ, whose busy thread therefore keeps the role and the gate across
     * its empty polls ({@link #busyHolding}).
     */
    private final boolean callersLead;
    private final ReentrantLock pollLock = new ReentrantLock();
    /**
     * Threads inside callAndWait, counted from before their Send is posted (a Send under
     * Soft-RoCE takes long enough for the poller to grab the channel meanwhile). While there
     * are any, the poller keeps off the CQ: they dispatch every completion they poll.
     */
    private final AtomicInteger blockingCallers = new AtomicInteger();
    /** When the last blocking caller left (System.nanoTime); see {@link #LINGER_NANOS}. */
    private volatile long callerLeftAt = Long.MIN_VALUE / 2;
    /**
     * Whether a blocking caller left less than {@link #LINGER_NANOS} ago, as far as the
     * poller knows: while not, it reads no clock per loop (a server's busy poller never has a
     * caller, and under TCG System.nanoTime() costs ~1 µs, as much as a poll).
     */
    private volatile boolean lingering;
    /** Event mode: how long the poller keeps polling after a completion before it sleeps (0: never). */
    private volatile long spinNanos;
    /** When the poller last dispatched a completion (poller thread only). */
    private long lastCompletion;
    private volatile Thread poller;

    /** The driver of a link's own CQ, whose blocking callers may lead. */
    CompletionDriver(Cq cq, boolean busyPoll) {
        this(cq, busyPoll, true);
    }

    /** @param callersLead false on a completion group's CQs: no caller ever polls them */
    CompletionDriver(Cq cq, boolean busyPoll, boolean callersLead) {
        this.cq = cq;
        this.busyPoll = busyPoll;
        this.callersLead = callersLead;
    }

    /** Event mode: the poller (and a leading caller) spins this long after a completion before sleeping. */
    void adaptiveSpin(long nanos) {
        this.spinNanos = nanos;
    }

    /**
     * Wakes the poller if it sleeps for want of work ({@link Cq#idle}) or for a caller: call
     * it after making {@link Cq#idle} false (the poller looks again), or {@link Cq#stopping} true.
     */
    void wake() {
        LockSupport.unpark(poller);
    }

    /** Starts the poller thread and returns it. */
    Thread start(String threadName) {
        Thread t = Thread.ofPlatform().daemon().name(threadName).start(this::run);
        poller = t;
        return t;
    }

    /**
     * After {@link Cq#stopping} turned true: wakes the poller and waits up to {@code millis}
     * for it to end (unless called on it, from a handler). One still running then is counted
     * ({@link #freedPast}) and warned about with where it is (what keeps a poller, a handler
     * or a lock, is the finding); the caller frees past it: it holds no gate there, and finds
     * {@code stopping} when it comes back.
     */
    void awaitStopped(long millis) {
        Thread t = poller;
        if (t == null || t == Thread.currentThread()) {
            return;
        }
        wake();
        try {
            t.join(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (t.isAlive()) {
            FREED_PAST.increment();
            StackTraceElement[] at = t.getStackTrace();
            LOG.log(Level.WARNING, "completion poller {0} did not stop within " + millis + " ms (in a call handler?);"
                    + " freeing its queues without it; it is at {1}", t.getName(),
                    Arrays.toString(Arrays.copyOf(at, Math.min(at.length, 8))));
        }
    }

    /** Poller threads that {@link #awaitStopped} gave up on, in this JVM. */
    static long freedPast() {
        return FREED_PAST.sum();
    }

    private void run() {
        // Set before the first look at idle(): a wake() after a connection was assigned
        // either finds this thread (and unparks it) or came before that look (which sees it).
        poller = Thread.currentThread();
        try {
            while (!cq.stopping()) {
                if (cq.idle()) {
                    LockSupport.park(this); // until wake(); a spurious return looks again
                    continue;
                }
                if (keepOffForCaller()) {
                    continue;
                }
                if (busyPoll) {
                    if (!callersLead) {
                        busyHolding();
                    } else if (!tryPollOnce()) {
                        Thread.onSpinWait();
                    }
                    continue;
                }
                if (!pollLock.tryLock()) {
                    LockSupport.parkNanos(LINGER_NANOS); // a caller leads
                    continue;
                }
                try {
                    // Adaptive: for spinNanos after the last completion, poll without arming
                    // (the next message of a conversation is usually that close, and a wake-up
                    // from the channel costs more than the spin); then arm and sleep.
                    boolean spin = spinNanos > 0 && System.nanoTime() - lastCompletion < spinNanos;
                    int n = spin ? cq.pollOnly() : cq.pollOrWait(AWAIT_MILLIS);
                    if (n > 0) {
                        cq.dispatch(n); // gate released: handlers may post or block
                        lastCompletion = System.nanoTime();
                    } else if (spin) {
                        Thread.onSpinWait();
                    }
                } finally {
                    pollLock.unlock();
                }
            }
        } catch (Throwable e) {
            // Not only RuntimeException: a poller that ended on an Error would leave the
            // connection open with nobody taking its completions (every call timing out).
            // Handlers' throws never get here (the responder answers them SYSTEM_ERR).
            if (!cq.stopping()) {
                LOG.log(Level.ERROR, "completion poller failed; connection lost", e);
                cq.failed(e instanceof RuntimeException r ? r : new RpcRdmaException("completion poller failed: " + e, e));
            }
        }
    }

    /**
     * Poller thread: parks (true) while blocking callers drive the CQ, or for
     * what is left of {@link #LINGER_NANOS} after the last one left if none of our calls is
     * outstanding (an async call's reply needs the poller at once).
     */
    private boolean keepOffForCaller() {
        long park;
        if (blockingCallers.get() > 0) {
            park = CALLER_PARK_NANOS;
        } else {
            if (!lingering) {
                return false;
            }
            park = LINGER_NANOS - (System.nanoTime() - callerLeftAt);
            if (park <= 0) {
                lingering = false; // a caller leaving meanwhile sets it again; losing that race only skips a linger
                return false;
            }
            if (cq.outstandingCalls() > 0) {
                return false;
            }
        }
        LockSupport.parkNanos(park);
        return true;
    }

    void blockingCallStarts() {
        blockingCallers.incrementAndGet();
    }

    void blockingCallEnds() {
        callerLeftAt = System.nanoTime();
        lingering = true;
        if (blockingCallers.decrementAndGet() == 0 && cq.outstandingCalls() > 0) {
            wake(); // replies that async callers wait for: no lingering
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
            int n = spin ? cq.pollOnly() : cq.pollOrWait(Math.min(AWAIT_MILLIS, left / 1_000_000L));
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

    /**
     * Busy-poll on a completion group's thread, whose role no caller ever takes: keeps the
     * role and the gate across empty polls as a spinning caller does (a lock and a gate per
     * empty poll were a fifth of a busy server thread's own samples under C1, and the turn's
     * length is how late it sees a call), lets the gate go before each dispatch, and leaves
     * once stopping or, looked at every {@value #IDLE_LOOK_EVERY} empty polls, idle (so that
     * {@link #run} parks it without a gate held).
     */
    private void busyHolding() {
        pollLock.lock(); // uncontended: this thread alone takes a group's role
        try {
            for (int empty = 1; !cq.stopping();) {
                int n = cq.pollHolding();
                if (n > 0) {
                    cq.dispatch(n); // gate let go: handlers run without it
                } else if (empty++ % IDLE_LOOK_EVERY == 0 && cq.idle()) {
                    return;
                } else {
                    Thread.onSpinWait();
                }
            }
        } finally {
            cq.letGo();
            pollLock.unlock();
        }
    }

    /** Busy-poll mode, the poller thread: polls and dispatches once unless a caller holds the role; true if it handled any. */
    private boolean tryPollOnce() {
        if (!pollLock.tryLock()) {
            return false;
        }
        try {
            int n = cq.pollOnly();
            if (n > 0) {
                cq.dispatch(n); // gate released; pollLock kept: the sink sees one completion thread
                return true;
            }
            return false;
        } finally {
            pollLock.unlock();
        }
    }
}
