package org.rpcrdma.transport;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.transport.core.CreditAccount;
import org.rpcrdma.transport.core.Direction;
import org.rpcrdma.transport.core.Events;
import org.rpcrdma.transport.core.XidTable;

/**
 * This side's calls on one connection (the requester role, RFC 8166 §3.3; ≈ Linux
 * {@code rpcrdma_req} management and the matching half of {@code rpcrdma_reply_handler}):
 * the credit account and XID table of our direction, the calls waiting for a credit or
 * for a receive to be posted for their reply, and abandoned calls.
 *
 * <p>One lock (this) guards all of it. Lock order: Requester → SendQueue → ReceiveQueue →
 * the link. No call is completed and no user code runs while it is held: what must be
 * completed is collected and completed after the lock ({@code afterLock}), where a link
 * failure forced under the lock is also settled ({@link LinkFailure}). The timeout sweep
 * and the stall check are here because they read the same locked state as the credits
 * and the XID table.
 */
final class Requester {
    /** What a loss leaves behind: calls that were sent, and calls that never were. */
    record Taken(List<CallRequest> sent, List<CallRequest> unsent) {}

    private final String name;
    private final Direction direction;
    private final CreditAccount credits;
    private final XidTable<CallRequest> table;
    private final ReceiveDemand receives;
    private final SendQueue sends;
    private final LinkFailure failure;
    private final StatsCounters stats;
    /**
     * How long the peer may stay silent while abandoned calls hold every credit before the
     * connection is declared dead ({@link #stalledFor}).
     */
    static final long STALL_MILLIS = 2000;

    /** Run (without locks, off the timer thread) when the connection {@link #stalledFor}: it is reset. */
    private final Runnable wedged;
    private final ArrayDeque<CallRequest> waiting = new ArrayDeque<>();
    private int abandonedInFlight;
    /** System.nanoTime() since which {@link #stalledFor} holds, 0 while it does not. */
    private long stalledSince;
    /**
     * The head waiting call could not be sent for want of a posted receive: only then can a
     * released buffer let a call go, so {@link #pump} takes the lock only then (a release
     * per message on each side otherwise took it for nothing). Written under the lock, read
     * without it.
     */
    private volatile boolean headBlockedOnReceive;
    private boolean closed;
    /**
     * Whether {@link CallTimer} sweeps this requester (it has, or had at the last tick, timed
     * or abandoned calls).
     */
    private boolean watched;
    /** Reused by {@link #expire} under the lock: the calls whose deadline passed. */
    private final ArrayList<CallRequest> expired = new ArrayList<>();

    Requester(String name, Direction direction, int maxCredits, ReceiveDemand receives,
            SendQueue sends, LinkFailure failure, StatsCounters stats, Runnable wedged) {
        this.failure = failure;
        this.name = name;
        this.direction = direction;
        this.credits = new CreditAccount(direction, maxCredits);
        this.table = new XidTable<>(direction, maxCredits, direction == Direction.FORWARD
                ? stats.unmatchedForwardReplies::add : stats.unmatchedBackwardReplies::add);
        this.receives = receives;
        this.sends = sends;
        this.stats = stats;
        this.wedged = wedged;
    }

    String connectionName() {
        return name;
    }

    Direction direction() {
        return direction;
    }

    /**
     * Queues a call and sends what the window allows.
     *
     * @return false if this requester is closed (the connection was lost): the caller hands
     *         the call on or fails it
     * @throws RpcRdmaException naming a duplicate XID (nothing queued)
     */
    boolean submit(CallRequest c) {
        CallRequest[] unsent;
        synchronized (this) {
            if (closed) {
                return false;
            }
            if (c.isDone()) {
                return true; // abandoned before it could be sent here: nothing to do
            }
            if (table.contains(c.xid) || !waiting.isEmpty() && isWaiting(c.xid)) {
                throw new RpcRdmaException(name + ": XID 0x" + Integer.toHexString(c.xid) + " is already outstanding"
                        + " in the " + direction + " direction; call not sent");
            }
            c.queuedIn(this);
            if (!waiting.isEmpty() || !credits.available()) {
                stats.creditWaits.increment();
                Events.CreditWait w = new Events.CreditWait();
                if (w.shouldCommit()) {
                    w.connection = name;
                    w.direction = direction.name();
                    w.window = credits.window();
                    w.commit();
                }
            }
            waiting.addLast(c);
            if (c.deadline.timed() && !watched) {
                watched = true;
                CallTimer.watch(this);
            }
            pumpLocked();
            if (c.waitingToBeSent()) {
                c.keepForAnotherThread(); // another thread sends it
            }
            unsent = takeUnsendable();
        }
        afterLock(unsent);
        return true;
    }

    /**
     * One tick of {@link CallTimer}: fails the calls whose deadline passed (they are then
     * abandoned like a cancelled call), and stamps the deadline of calls it sees for the
     * first time. Returns whether any call here still has a deadline.
     */
    boolean expire() {
        CallRequest[] due;
        int[] generations = null;
        boolean timed = false;
        boolean dead;
        synchronized (this) {
            if (closed) {
                watched = false;
                return false;
            }
            // ORDER: read under the lock, so after every call queued here was issued: a
            // deadline stamped from it (issue + timeout at the earliest) is never early
            long now = System.nanoTime();
            expired.clear();
            for (CallRequest c : waiting) {
                timed |= due(c, now);
            }
            sweepNow = now;
            sweepTimed = false;
            table.forEach(this::sweepSent);
            timed |= sweepTimed;
            dead = stalledFor(now);
            // abandoned calls out: keep looking, the stall may start or end
            watched = timed || !expired.isEmpty() || abandonedInFlight > 0 && !dead;
            due = expired.isEmpty() ? null : expired.toArray(new CallRequest[0]);
            if (due != null) {
                generations = new int[due.length];
                for (int i = 0; i < due.length; i++) {
                    generations[i] = due[i].generation(); // under the lock: the use that is due, not a later one
                }
            }
        }
        if (due != null) {
            for (int i = 0; i < due.length; i++) {
                stats.callTimeouts.increment();
                CallTimer.expire(due[i], generations[i], name); // abandons it: back here without our lock held
            }
        }
        if (dead) {
            stats.abandonedWindowResets.increment();
            CallTimer.execute(wedged); // fails calls: user code, not on the timer's thread
        }
        return watched;
    }

    /**
     * Whether the peer stopped answering: every call it holds was abandoned, no credit is
     * free (nothing more can be sent) and no reply came for {@link #STALL_MILLIS}. Each
     * alone is normal: a credit reduction (RFC 8166 §3.3) shrinks the window under calls
     * already sent, and a late reply to an abandoned call gives its credit back. Caller
     * holds the lock: stamps the start of a stall, forgets it when the stall ended.
     */
    private boolean stalledFor(long now) {
        if (abandonedInFlight == 0 || abandonedInFlight < table.size() || credits.available()) {
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

    private long sweepNow;
    private boolean sweepTimed;

    /** Caller holds the lock (a sent call's deadline; an abandoned call has none left to keep). */
    private void sweepSent(CallRequest c) {
        if (!c.abandonedInFlight()) {
            sweepTimed |= due(c, sweepNow);
        }
    }

    /** Caller holds the lock: collects {@code c} if its deadline passed; whether it still has one. */
    private boolean due(CallRequest c, long now) {
        if (c.expiryDue(now)) {
            expired.add(c);
            return false;
        }
        return c.deadline.timed() && !c.isDone() && !c.deadline.expiring();
    }

    private boolean isWaiting(int xid) {
        for (CallRequest w : waiting) {
            if (w.xid == xid) {
                return true;
            }
        }
        return false;
    }

    /** A receive buffer came back: sends waiting calls it lets go, if the head waited for one. */
    void pump() {
        if (!headBlockedOnReceive) {
            return;
        }
        CallRequest[] unsent = null;
        synchronized (this) {
            if (waiting.isEmpty()) {
                headBlockedOnReceive = false; // that head went (abandoned, or the connection closed)
            } else if (!closed) {
                pumpLocked();
                unsent = takeUnsendable();
            }
        }
        afterLock(unsent);
    }

    /**
     * Sends waiting calls in order while a credit is free and a receive can be posted for
     * each reply (rnr_retry 0: a reply with no posted receive would kill the connection;
     * a user holding received messages makes calls wait instead). A call whose memory the
     * caller closed meanwhile fails alone ({@link #takeUnsendable}). Caller holds the lock;
     * nothing here throws: a failure forces the connection's loss, which runs once no lock
     * is held, so a reply matched before the pump still completes its call.
     */
    private void pumpLocked() {
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
                c.markDone();
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
            c.markSent();
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

    /** Calls the pump dropped since the last take (rare: allocated only then); guarded by the lock. */
    private ArrayList<CallRequest> unsendable;

    /** Caller holds the lock: the calls the pump dropped, to fail once the lock is released; null if none. */
    private CallRequest[] takeUnsendable() {
        if (unsendable == null) {
            return null;
        }
        CallRequest[] r = unsendable.toArray(new CallRequest[0]);
        unsendable = null;
        return r;
    }

    /**
     * After the lock: fails calls whose memory was closed before they could be sent, and
     * runs the connection's loss if a post failed under the lock (user code runs in both).
     */
    private void afterLock(CallRequest[] calls) {
        failure.settle();
        if (calls == null) {
            return;
        }
        for (CallRequest c : calls) {
            c.fail(new IllegalStateException(name + ": call 0x" + Integer.toHexString(c.xid)
                    + " not sent: its memory was closed before it could be sent (it must stay valid until then)"));
        }
    }

    /**
     * A reply (or RDMA_ERROR) for {@code xid} arrived. Removes the matching call, applies
     * the grant it carries (only a matched reply moves the window, as in Linux) and
     * returns its credit.
     *
     * @return the call, or null if nothing matched (counted, dropped: RFC 8167 §2.4.1)
     */
    CallRequest matched(int xid, int grant) {
        CallRequest c;
        CallRequest[] unsent;
        synchronized (this) {
            c = table.match(xid);
            if (c == null) {
                return null;
            }
            // A Reply's rdma_credit is a grant for our direction (RFC 8166 §3.3.3).
            credits.grant(grant);
            stalledSince = 0; // the peer answers
            release(c);
            pumpLocked();
            unsent = takeUnsendable();
        }
        afterLock(unsent);
        return c;
    }

    /** Whether a call of ours with this XID is sent and unanswered. */
    synchronized boolean isOutstanding(int xid) {
        return table.contains(xid);
    }

    /** A malformed reply for {@code xid}: the call is removed without using the header's grant. */
    CallRequest malformed(int xid) {
        CallRequest c;
        CallRequest[] unsent = null;
        synchronized (this) {
            c = table.remove(xid);
            if (c != null) {
                release(c);
                pumpLocked();
                unsent = takeUnsendable();
            }
        }
        afterLock(unsent);
        return c;
    }

    private void release(CallRequest c) {
        credits.release();
        publishRequired();
        if (c.abandonedInFlight()) {
            abandonedInFlight--;
        }
        c.markDone();
    }

    /**
     * The caller gave up on {@code c} (cancel, timeout, its own completion). A sent call
     * keeps its credit until its late reply; if the peer then stops answering with every
     * credit held so, the timer resets the connection ({@link #stalledFor}).
     *
     * @return whether {@code c} was sent here and its reply may still come (it stays in the
     *         XID table until then, or until the connection is lost)
     */
    boolean abandon(CallRequest c) {
        CallRequest[] unsent = null;
        boolean replyMayCome;
        synchronized (this) {
            if (c.owner() != this || closed) {
                return false;
            }
            if (c.waitingToBeSent()) {
                waiting.remove(c);
                c.markDone();
                stats.abandonedCalls.increment();
                pumpLocked();
                unsent = takeUnsendable();
            } else if (c.markAbandonedInFlight()) {
                abandonedInFlight++;
                stats.abandonedCalls.increment();
                if (!watched) {
                    // the timer watches for a stall (never wedge silently)
                    watched = true;
                    CallTimer.watch(this);
                }
            }
            replyMayCome = c.sent();
        }
        afterLock(unsent);
        return replyMayCome;
    }

    /** The connection is lost: takes every call, once, and refuses new ones. */
    Taken takeAll() {
        synchronized (this) {
            closed = true;
            List<CallRequest> sent = table.removeAll();
            List<CallRequest> unsent = new ArrayList<>(waiting);
            waiting.clear();
            credits.reset();
            receives.publish(0);
            abandonedInFlight = 0;
            stalledSince = 0;
            for (CallRequest c : sent) {
                c.markDone();
            }
            for (CallRequest c : unsent) {
                c.markDone();
            }
            return new Taken(sent, unsent);
        }
    }

    /** Caller holds the lock: republishes the receives needed (see {@link ReceiveDemand}). */
    private void publishRequired() {
        receives.publish(credits.outstanding());
    }

    /** Calls somebody still waits for: sent and not abandoned, or waiting to be sent. */
    synchronized int active() {
        return table.size() - abandonedInFlight + waiting.size();
    }

    synchronized int outstanding() {
        return table.size();
    }

    synchronized int abandonedInFlight() {
        return abandonedInFlight;
    }

    synchronized int waiting() {
        return waiting.size();
    }

    synchronized int window() {
        return credits.window();
    }

    synchronized int highWater() {
        return credits.highWater();
    }

    synchronized int creditsInUse() {
        return credits.outstanding();
    }
}
