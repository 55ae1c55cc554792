package org.rpcrdma.transport.rpc;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.rpcrdma.transport.chunk.CallExposure;
import org.rpcrdma.transport.link.LinkFailure;

/**
 * This side's calls waiting to be sent, in order, and the pump that sends them (≈ the
 * backlog of a Linux RPC transport, {@code xprt_add_backlog}): a call goes only while a
 * credit is free (RFC 8166 §3.3.1) and a receive can be posted for its reply (rnr_retry 0:
 * a reply with no posted receive would kill the connection; a user holding received
 * messages makes calls wait instead). A sent call moves to the XID table, where its reply
 * is matched.
 *
 * <p>Guarded by its {@link Requester}'s lock: every method but {@link #blockedOnReceive} is
 * called with it held. Nothing here completes a call or runs user code: the calls it drops
 * are handed back ({@link #takeUnsendable}) to be failed after the lock.
 */
final class CallBacklog {
    private final ArrayDeque<CallRequest> waiting = new ArrayDeque<>();
    private final CreditAccount credits;
    private final XidTable<CallRequest> table;
    private final ReceiveDemand receives;
    private final SendQueue sends;
    private final LinkFailure failure;
    private final StatsCounters stats;
    /**
     * The head waiting call could not be sent for want of a posted receive: only then can a
     * released buffer let a call go, so {@link Requester#pump} takes the lock only then (a
     * release per message on each side otherwise took it for nothing). Written under the
     * lock, read without it.
     */
    private volatile boolean headBlockedOnReceive;
    /** Calls the pump dropped since the last take (rare: allocated only then). */
    private ArrayList<CallRequest> unsendable;

    CallBacklog(CreditAccount credits, XidTable<CallRequest> table, ReceiveDemand receives, SendQueue sends,
            LinkFailure failure, StatsCounters stats) {
        this.credits = credits;
        this.table = table;
        this.receives = receives;
        this.sends = sends;
        this.failure = failure;
        this.stats = stats;
    }

    boolean isEmpty() {
        return waiting.isEmpty();
    }

    int size() {
        return waiting.size();
    }

    /** The waiting calls, for the deadline sweep. */
    Iterable<CallRequest> calls() {
        return waiting;
    }

    boolean contains(int xid) {
        for (CallRequest w : waiting) {
            if (w.xid == xid) {
                return true;
            }
        }
        return false;
    }

    void add(CallRequest c) {
        waiting.addLast(c);
    }

    void remove(CallRequest c) {
        waiting.remove(c);
    }

    /** Empties the backlog (the connection is lost) and returns what waited. */
    List<CallRequest> takeAll() {
        List<CallRequest> all = new ArrayList<>(waiting);
        waiting.clear();
        return all;
    }

    /** Read without the lock: whether a released receive buffer may let the head go. */
    boolean blockedOnReceive() {
        return headBlockedOnReceive;
    }

    /** The backlog emptied while its head waited for a receive (abandoned, or the connection closed). */
    void unblock() {
        headBlockedOnReceive = false;
    }

    /**
     * Sends waiting calls in order while a credit is free and a receive can be posted for
     * each reply. A call whose memory the caller closed meanwhile fails alone
     * ({@link #takeUnsendable}). Nothing here throws: a failure forces the connection's
     * loss, which runs once no lock is held, so a reply matched before the pump still
     * completes its call.
     */
    void pump() {
        try {
            pumpWhileAllowed();
        } catch (RuntimeException e) {
            failure.force(e); // a call in the table was maybe not sent: the loss takes it
        }
    }

    private void pumpWhileAllowed() {
        while (!waiting.isEmpty() && credits.available()) {
            CallRequest c = waiting.peekFirst();
            if (!c.sendable()) {
                waiting.pollFirst();
                c.place.markDone();
                if (unsendable == null) {
                    unsendable = new ArrayList<>();
                }
                unsendable.add(c);
                continue;
            }
            boolean posted;
            try {
                posted = receives.ensureForOneMore(credits.outstanding());
            } catch (RuntimeException e) {
                publishRequired();
                failure.force(e); // the link is gone
                return;
            }
            if (!posted) {
                publishRequired(); // not sent: no receive for it is needed after all
                if (!headBlockedOnReceive) {
                    // ORDER: the flag before a second look, so that a buffer released after
                    // the first look either is seen now or finds the flag and pumps.
                    headBlockedOnReceive = true;
                    stats.receiveBufferWaits.increment();
                    continue;
                }
                return;
            }
            if (headBlockedOnReceive) {
                headBlockedOnReceive = false;
            }
            waiting.pollFirst();
            credits.tryAcquire();
            publishRequired();
            table.put(c.xid, c);
            c.place.markSent();
            // The rdma_credit of a call is our request (RFC 8166 §3.3.1): our maximum.
            CallExposure x = c.exposure();
            if (x == null) {
                sends.sendMessage(c.xid, credits.max(), c.message());
            } else {
                // chunks: the header names them; a long call has no inline message
                boolean longCall = x.longCall();
                if (longCall) {
                    stats.longCallsSent.increment();
                }
                sends.sendWithHeader(x.header(), x.inline(), x.gathered(), 0);
            }
            stats.callsSent.increment();
        }
    }

    /** The calls the pump dropped, to fail once the lock is released; null if none. */
    CallRequest[] takeUnsendable() {
        if (unsendable == null) {
            return null;
        }
        CallRequest[] r = unsendable.toArray(new CallRequest[0]);
        unsendable = null;
        return r;
    }

    /** Republishes the receives needed for the calls sent (see {@link ReceiveDemand}). */
    void publishRequired() {
        receives.publish(credits.outstanding());
    }
}
