package org.rpcrdma.transport.link;

import java.util.function.BooleanSupplier;

/**
 * Who takes one {@link VerbsLink}'s completions off a CQ, from its start to its destroy: on
 * a CQ of the link's own, a {@link CompletionPoller} and the {@link CompletionDriver} that
 * runs its poller thread and lets blocking callers lead; on a {@link CompletionGroup}'s
 * shared CQ, the link's {@link CompletionGroup.Slot}, whose group thread takes them (no
 * caller leads there). It registers the QP's {@link LinkCompletions} with the CQ at start
 * and takes them back at destroy, at the steps of the link's teardown order.
 */
final class LinkPolling {
    /** How long destroy waits for the poller to stop before freeing past it (the gate keeps that safe). */
    static final long POLLER_JOIN_MILLIS = 2000;

    private final LinkGate gate;
    private final LinkHardware hw;
    private final LinkCompletions completions;
    private final boolean busyPoll;
    /** The poller of the link's own CQ (a group of one); null on a completion group's CQ. */
    private final CompletionPoller ownPoller;
    /**
     * Who polls the link's own CQ and when: the poller thread or a blocking caller (busy,
     * events, adaptive); null on a completion group's CQ, which its group's thread drives.
     */
    private final CompletionDriver driver;

    /** A poller of the link's own when {@code hw} has no place on a group's CQ. */
    LinkPolling(LinkGate gate, LinkHardware hw, LinkCompletions completions, SharedReceiveHardware shared,
            boolean busyPoll) {
        this.gate = gate;
        this.hw = hw;
        this.completions = completions;
        this.busyPoll = busyPoll;
        this.ownPoller = hw.slot == null ? new CompletionPoller(gate, hw.cq, hw.channel, shared) : null;
        this.driver = ownPoller == null ? null : new CompletionDriver(ownPoller, busyPoll);
    }

    /** Event mode: the poller spins this long after each completion before it arms the channel and sleeps. */
    void adaptiveSpin(long nanos) {
        if (driver != null) {
            driver.adaptiveSpin(nanos); // a group's threads have the group's
        }
    }

    /**
     * Starts taking the QP's completions for {@code c}: registered with the group's CQ, or
     * with the own poller, the CQ armed in event mode, and the poller thread started.
     */
    void start(CompletionSink c, String threadName) {
        int qpNum = hw.qp.qpNum();
        if (hw.slot != null) {
            hw.slot.register(qpNum, completions);
            return;
        }
        ownPoller.countIn(c.counters());
        ownPoller.register(qpNum, completions, true);
        if (!busyPoll) {
            gate.runUnlessFreed(() -> hw.cq.requestNotify(false));
        }
        driver.start(threadName);
    }

    /** See {@link VerbsLink#pollOnCaller}: a caller leads on the link's own CQ only. */
    boolean pollOnCaller(BooleanSupplier done, long deadlineNanos) {
        return driver != null && driver.pollOnCaller(done, deadlineNanos);
    }

    void unsolicitedMessages(boolean expected) {
        if (driver != null) {
            driver.unsolicitedMessages(expected);
        }
    }

    void blockingCallStarts() {
        if (driver != null) {
            driver.blockingCallStarts();
        }
    }

    void blockingCallEnds() {
        if (driver != null) {
            driver.blockingCallEnds();
        }
    }

    /**
     * Destroy, once the gate is stopping and the channel's waiters woken: the group's thread
     * dispatches nothing more for this QP, or the own poller is waited for up to
     * {@link #POLLER_JOIN_MILLIS} (then freed past).
     */
    void stop() {
        if (hw.slot != null) {
            hw.slot.unregister(hw.qp.qpNum(), completions);
        }
        if (driver != null) {
            driver.awaitStopped(POLLER_JOIN_MILLIS);
        }
    }

    /**
     * Under the gate's write side, after the QP was destroyed and before the CQ is
     * ({@link LinkHardware#close}): the group frees the QP's number and entries, or the own
     * poller gives the shared receives left in its CQ back to their pool.
     */
    void afterQp() {
        if (hw.slot != null) {
            hw.slot.destroyed(hw.qp.qpNum());
        } else {
            ownPoller.reclaimSharedReceives();
        }
    }

    /** Under the gate's write side, after the hardware: frees the own poller's native completion array. */
    void close() {
        if (ownPoller != null) {
            ownPoller.close();
        }
    }
}
