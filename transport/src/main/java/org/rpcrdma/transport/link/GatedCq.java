package org.rpcrdma.transport.link;

import org.rpcrdma.transport.rpc.StatsCounters;
import org.rpcrdma.transport.verbs.CompletionChannel;

/**
 * The poll and the event-mode wait of one or more CQs under one {@link LinkGate} and one
 * completion channel, as their {@link CompletionDriver} calls them: a link's own CQ
 * ({@link CompletionPoller}) or the CQs of one completion-group thread ({@link GroupPoller}).
 * Each poll holds the gate's read side (busy-poll: the poll role's holder keeps it across empty
 * polls, {@link #pollHolding}), so nothing native is freed meanwhile; a subclass
 * says how its CQs are polled and armed.
 */
abstract sealed class GatedCq implements CompletionDriver.Cq permits CompletionPoller, GroupPoller {
    final LinkGate gate;
    /** Null in busy-poll mode. */
    final CompletionChannel channel;
    /** The longest sleep on the channel, whatever the driver asks. */
    private final long maxAwaitMillis;
    /**
     * The gate's read stamp {@link #pollHolding} keeps across empty polls, 0 when not kept.
     * The poll role's holder's alone (the role's lock orders its hand-overs).
     */
    private long held;
    /** Where channel wake-ups are counted (null: nowhere). */
    private volatile StatsCounters counters;

    GatedCq(LinkGate gate, CompletionChannel channel, long maxAwaitMillis) {
        this.gate = gate;
        this.channel = channel;
        this.maxAwaitMillis = maxAwaitMillis;
    }

    /** Counts channel wake-ups in {@code c}. */
    final void countIn(StatsCounters c) {
        this.counters = c;
    }

    /** Polls and copies the completions out (caller holds the gate's read side and the poll role); 0: none. */
    abstract int pollAndCopy();

    /** Arms every CQ for its next completion (caller holds the gate's read side). */
    abstract void arm();

    /** One poll under the gate, no arming. */
    @Override
    public final int pollOnly() {
        long stamp = gate.enterUnlessStopping();
        if (stamp == 0) {
            return 0;
        }
        try {
            return pollAndCopy();
        } finally {
            gate.exit(stamp);
        }
    }

    @Override
    public final int pollHolding() {
        long stamp = held;
        if (stamp == 0) {
            stamp = gate.enterUnlessStopping();
            if (stamp == 0) {
                return 0;
            }
            held = stamp;
        } else if (gate.stopping()) {
            letGo(); // destroy waits on the write side for this read side
            return 0;
        }
        int n;
        try {
            n = pollAndCopy();
        } catch (RuntimeException | Error e) {
            letGo();
            throw e;
        }
        if (n > 0) {
            letGo(); // the completions are dispatched next: user code, never under the gate
        }
        return n;
    }

    @Override
    public final void letGo() {
        long stamp = held;
        if (stamp != 0) {
            held = 0;
            gate.exit(stamp);
        }
    }

    /**
     * Event mode, whoever holds the poll role: polls; if empty, arms, polls again (a
     * completion between the empty poll and the arm raises no event) and waits on the
     * channel up to {@code awaitMillis} (at most the subclass's cap). All under the gate's read side, so the CQs and the
     * channel are freed only after this returns.
     *
     * @return completions copied out (0: none, or destroy has begun)
     */
    @Override
    public final int pollOrWait(long awaitMillis) {
        long stamp = gate.enterUnlessStopping();
        if (stamp == 0) {
            return 0;
        }
        try {
            int n = pollAndCopy();
            if (n == 0) {
                arm();
                n = pollAndCopy();
                if (n == 0 && channel.await(Math.min(awaitMillis, maxAwaitMillis)) != null) {
                    StatsCounters c = counters;
                    if (c != null) {
                        c.channelWakeups.increment();
                    }
                }
            }
            return n;
        } finally {
            gate.exit(stamp);
        }
    }

    @Override
    public final boolean stopping() {
        return gate.stopping();
    }
}
