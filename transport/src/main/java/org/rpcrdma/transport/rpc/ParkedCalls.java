package org.rpcrdma.transport.rpc;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.transport.Backchannel;
import org.rpcrdma.transport.ConnectionLostException;
import org.rpcrdma.transport.endpoint.ClientReconnector;

/**
 * Calls with no open connection to go to: made while a client reconnects, or handed over
 * by a lost connection, until the next connection takes them (the same XID, so the peer's
 * duplicate request cache recognises a retransmission, RFC 8167 §5.4) or they fail. The
 * one place that parks calls, for {@link ClientReconnector} and {@link Backchannel}.
 *
 * <p>A parked call's bytes are a private copy and its own deadline keeps running
 * ({@link CallRequest#detach}); with a wait limit it also fails once it has waited that
 * long. Both deadlines are {@link CallTimer}'s. Its own lock: it is taken under its
 * owner's, and no call is completed while it is held.
 */
public final class ParkedCalls {
    private final String owner;
    /** How long a call may wait here (0: until its own deadline, or the owner closes). */
    private final long waitLimitMillis;
    /** What the owner waits for, for a call that waited too long ("the client did not reconnect"). */
    private final String waitingFor;
    private final List<CallRequest> calls = new ArrayList<>();

    public ParkedCalls(String owner, long waitLimitMillis, String waitingFor) {
        this.owner = owner;
        this.waitLimitMillis = waitLimitMillis;
        this.waitingFor = waitingFor;
    }

    /**
     * Parks {@code c}, a call just issued that no connection can take now: its deadline
     * starts running here ({@code timeoutNanos}, 0: none).
     */
    public void issue(CallRequest c, long timeoutNanos) {
        c.detach();
        c.deadline(owner, timeoutNanos, true);
        park(List.of(c));
    }

    /**
     * Parks calls a lost connection handed over: their deadlines run on from where they
     * stood, each now on a task of its own (no requester sweeps them here).
     */
    public void park(List<CallRequest> orphans) {
        synchronized (this) {
            calls.addAll(orphans);
        }
        for (CallRequest c : orphans) {
            if (c.deadline.timed()) {
                int gen = c.generation();
                c.deadline.scheduleRemaining(() -> c.expire(owner, gen));
            }
        }
        if (waitLimitMillis > 0) {
            for (CallRequest c : orphans) {
                CallTimer.schedule(() -> waitedTooLong(c), TimeUnit.MILLISECONDS.toNanos(waitLimitMillis));
            }
        }
    }

    /** Takes every parked call (for the connection that now takes them, or to fail them). */
    public synchronized List<CallRequest> takeAll() {
        List<CallRequest> all = List.copyOf(calls);
        calls.clear();
        return all;
    }

    /** Fails {@code taken} (parked calls taken under the owner's lock) with {@code e}, no lock held. */
    public static void fail(List<CallRequest> taken, ConnectionLostException e) {
        for (CallRequest c : taken) {
            c.fail(e);
        }
    }

    /** Calls still waiting (those that ended at their own deadline meanwhile are dropped). */
    public synchronized int size() {
        calls.removeIf(CallRequest::isDone);
        return calls.size();
    }

    public synchronized boolean isEmpty() {
        return calls.isEmpty();
    }

    private void waitedTooLong(CallRequest c) {
        boolean removed;
        synchronized (this) {
            removed = calls.removeIf(w -> w == c);
        }
        if (removed) {
            c.fail(new ConnectionLostException(owner + ": call 0x" + Integer.toHexString(c.xid) + " not sent: "
                    + waitingFor + " within " + waitLimitMillis + " ms", null));
        }
    }
}
