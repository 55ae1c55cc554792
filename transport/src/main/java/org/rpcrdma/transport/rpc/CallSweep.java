package org.rpcrdma.transport.rpc;

import java.util.ArrayList;
import java.util.concurrent.TimeUnit;

/**
 * What one tick of {@link CallTimer} looks for in one {@link Requester}: calls whose
 * deadline passed, and a peer that stopped answering while abandoned calls hold every
 * credit. A call's deadline is stamped by the first sweep that sees it (no clock read per
 * call on the caller's thread). A credit reduction (RFC 8166 §3.3) shrinks the window
 * under calls already sent and a late reply to an abandoned call gives its credit back, so
 * only all three together for {@link #STALL_MILLIS} count as a stall.
 *
 * <p>Guarded by its requester's lock: every method is called with it held, and the calls
 * found due are failed by the requester after it released the lock.
 */
public final class CallSweep {
    /**
     * How long the peer may stay silent while abandoned calls hold every credit before the
     * connection is declared dead ({@link #stalledFor}).
     */
    public static final long STALL_MILLIS = 2000;

    /**
     * How long calls of ours may stay sent with no reply at all coming back before the
     * connection is declared dead ({@link #silentFor}), so that the calls sent with retry
     * go again, same XIDs, on the next connection: Linux's xprtrdma disconnects on an RPC
     * timeout for the same reason (its NFS default is 60 s). A reliable connection can
     * still lose a Send: Soft-RoCE's requester can stop with a WR posted, the QP in RTS and
     * no retransmission timer armed (it re-arms only while unacknowledged PSNs are out).
     * 0: never (RpcRdmaOptions.Builder#silenceTimeoutMillis).
     */
    private final long silenceMillis;

    /** The calls whose deadline passed, collected by the current sweep. */
    private final ArrayList<CallRequest> expired = new ArrayList<>();
    /** System.nanoTime() since which {@link #stalledFor} holds, 0 while it does not. */
    private long stalledSince;
    /** System.nanoTime() since which {@link #silentFor} holds, 0 while it does not. */
    private long silentSince;
    private long sweepNow;
    private boolean sweepTimed;
    /** The shortest timeout of the calls the current sweep left timed (Long.MAX_VALUE: none). */
    private long shortestTimeout;

    CallSweep(long silenceMillis) {
        this.silenceMillis = silenceMillis;
    }

    long silenceMillis() {
        return silenceMillis;
    }

    /**
     * Collects the waiting and sent calls whose deadline passed at {@code now} (an
     * abandoned call has none left to keep). Returns whether any call still has a deadline.
     */
    boolean collect(Iterable<CallRequest> waiting, XidTable<CallRequest> sent, long now) {
        boolean timed = false;
        expired.clear();
        shortestTimeout = Long.MAX_VALUE;
        for (CallRequest c : waiting) {
            timed |= due(c, now);
        }
        sweepNow = now;
        sweepTimed = false;
        sent.forEach(this::sweepSent);
        return timed | sweepTimed;
    }

    /** The shortest timeout of the calls still timed after this sweep, in ns (Long.MAX_VALUE: none). */
    long shortestTimeout() {
        return shortestTimeout;
    }

    /** Whether this sweep found calls whose deadline passed. */
    boolean anyDue() {
        return !expired.isEmpty();
    }

    /** The calls this sweep found due, or null if none. */
    CallRequest[] due() {
        return expired.isEmpty() ? null : expired.toArray(new CallRequest[0]);
    }

    private void sweepSent(CallRequest c) {
        if (!c.place.abandonedInFlight()) {
            sweepTimed |= due(c, sweepNow);
        }
    }

    /** Collects {@code c} if its deadline passed; whether it still has one. */
    private boolean due(CallRequest c, long now) {
        if (c.expiryDue(now)) {
            expired.add(c);
            return false;
        }
        if (c.deadline.timed() && !c.isDone() && !c.deadline.expiring()) {
            shortestTimeout = Math.min(shortestTimeout, c.deadline.timeoutNanos());
            return true;
        }
        return false;
    }

    /**
     * Whether the peer stopped answering: every call it holds ({@code sent}) was abandoned,
     * no credit is free (nothing more can be sent) and no reply came for
     * {@link #STALL_MILLIS}. Stamps the start of a stall, forgets it when the stall ended.
     */
    boolean stalledFor(long now, int abandonedInFlight, int sent, boolean creditFree) {
        if (abandonedInFlight == 0 || abandonedInFlight < sent || creditFree) {
            stalledSince = 0;
            return false;
        }
        if (stalledSince == 0) {
            stalledSince = now == 0 ? 1 : now;
            return false;
        }
        if (now - stalledSince < TimeUnit.MILLISECONDS.toNanos(STALL_MILLIS)) {
            return false;
        }
        stalledSince = 0; // reported once: the reset takes every call
        return true;
    }

    /**
     * Whether calls of ours ({@code awaiting}: sent, not abandoned) got no reply at all for
     * {@link #silenceMillis}. Stamps the start of a silence, forgets it when none is
     * awaited; reported once.
     */
    boolean silentFor(long now, int awaiting) {
        if (awaiting == 0 || silenceMillis == 0) {
            silentSince = 0;
            return false;
        }
        if (silentSince == 0) {
            silentSince = now == 0 ? 1 : now;
            return false;
        }
        if (now - silentSince < TimeUnit.MILLISECONDS.toNanos(silenceMillis)) {
            return false;
        }
        silentSince = 0;
        return true;
    }

    /** The peer answered (or the connection is gone): no stall or silence is under way. */
    void peerAnswered() {
        stalledSince = 0;
        silentSince = 0;
    }
}
