package org.rpcrdma.transport.link;

import java.lang.System.Logger.Level;
import java.util.Arrays;
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
 * This class runs the poller thread; the callers' side (their lead, and the poller keeping
 * off the CQ meanwhile) is its {@link CallerLead}, which shares the role.
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
 *       it back after {@link CallerLead#LINGER_NANOS}, or at once if an async call is outstanding. A
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
    /** The blocking callers: their lead on this CQ, and the poller keeping off it meanwhile. */
    private final CallerLead lead;
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
        this.lead = new CallerLead(cq, busyPoll, pollLock, this::wake);
    }

    /** Event mode: the poller (and a leading caller) spins this long after a completion before sleeping. */
    void adaptiveSpin(long nanos) {
        this.spinNanos = nanos;
        lead.adaptiveSpin(nanos);
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
                if (lead.keepPollerOff()) {
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
                    LockSupport.parkNanos(CallerLead.LINGER_NANOS); // a caller leads
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

    /** A thread is about to make a blocking call on this CQ (before its Send is posted). */
    void blockingCallStarts() {
        lead.blockingCallStarts();
    }

    /** The thread of a {@link #blockingCallStarts} has its reply, or gave up. */
    void blockingCallEnds() {
        lead.blockingCallEnds();
    }

    /** See {@link Link#unsolicitedMessages}. */
    void unsolicitedMessages(boolean expected) {
        lead.unsolicitedMessages(expected);
    }

    /**
     * A blocking caller drives this CQ until {@code done} or {@code deadlineNanos}
     * ({@link CallerLead#pollOnCaller}); false at once when called from a handler dispatching.
     */
    boolean pollOnCaller(BooleanSupplier done, long deadlineNanos) {
        return lead.pollOnCaller(done, deadlineNanos);
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
