package org.rpcrdma.transport.link;

import java.util.Arrays;
import org.rpcrdma.transport.rpc.StatsCounters;
import org.rpcrdma.transport.verbs.CompletionChannel;

/**
 * The CQs that one thread of a {@link CompletionGroup} takes completions off, as its
 * {@link CompletionDriver} sees them: one or more {@link CompletionPoller}s (the group adds
 * CQs as connections come, the threads stay), all on the thread's one completion channel
 * (event mode) and under the thread's one {@link LinkGate}. A poll tries each CQ in turn,
 * starting after the one that last had completions, so a busy CQ does not starve the
 * others; event mode arms every CQ before it sleeps on the channel, which any of them wakes.
 *
 * <p>Threading: the group's thread polls and dispatches (it holds the driver's poll role);
 * {@link #add} runs on the accepting thread.
 */
final class GroupPoller extends GatedCq {
    /** Longest sleep on the channel: a destroyed QP's number frees only at an empty poll after it. */
    private static final long RECHECK_MILLIS = 100;
    /** Tells the group this thread polls no more (before its connections are failed). */
    private final Runnable onFailure;
    private volatile boolean failed;
    /** Copy on write: a CQ is added a few times in a server's life. */
    private volatile CompletionPoller[] pollers = new CompletionPoller[0];
    /** Where the next poll starts (poll role's holder only). */
    private int next;
    /** The poller whose completions the last poll copied out (poll role's holder only). */
    private CompletionPoller last;

    GroupPoller(LinkGate gate, CompletionChannel channel, StatsCounters counters, Runnable onFailure) {
        super(gate, channel, RECHECK_MILLIS);
        countIn(counters);
        this.onFailure = onFailure;
    }

    /** Whether the thread's poll failed: nothing on these CQs is polled any more. */
    boolean failed() {
        return failed;
    }

    /**
     * A CQ more, already armed in event mode (the thread may be asleep on the channel with
     * the CQs it knew of armed: the new one's first completion must wake it too).
     */
    synchronized void add(CompletionPoller p) {
        CompletionPoller[] a = Arrays.copyOf(pollers, pollers.length + 1);
        a[a.length - 1] = p;
        pollers = a;
    }

    CompletionPoller[] pollers() {
        return pollers;
    }

    /** No connection, live or retired, on any of these CQs: the thread sleeps until the group assigns one. */
    @Override
    public boolean idle() {
        for (CompletionPoller p : pollers) {
            if (p.links() > 0 || p.retiredLinks() > 0) {
                return false;
            }
        }
        return true;
    }

    /** Every CQ: any of them wakes the channel. */
    @Override
    void arm() {
        for (CompletionPoller p : pollers) {
            p.arm();
        }
    }

    /** The first CQ from {@link #next} on with completions: copied out, 0 if every CQ was empty. */
    @Override
    int pollAndCopy() {
        CompletionPoller[] ps = pollers;
        int len = ps.length;
        for (int k = 0; k < len; k++) {
            int i = next + k < len ? next + k : next + k - len;
            int n = ps[i].pollAndCopy();
            if (n > 0) {
                last = ps[i];
                next = i + 1 < len ? i + 1 : 0;
                return n;
            }
        }
        return 0;
    }

    @Override
    public void dispatch(int n) {
        last.dispatch(n);
    }

    @Override
    public int outstandingCalls() {
        return 0; // a group's thread never lingers for a caller: none leads on a shared CQ
    }

    /**
     * The thread's poll failed and it ends: the group places no new connection here, then
     * every connection on these CQs is lost (no one would take their completions).
     */
    @Override
    public void failed(RuntimeException e) {
        failed = true;
        onFailure.run();
        for (CompletionPoller p : pollers) {
            p.failed(e);
        }
    }
}
