package org.rpcrdma.transport.rpc;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.link.LinkFailure;

/**
 * This side's calls on one connection (the requester role, RFC 8166 §3.3; ≈ Linux
 * {@code rpcrdma_req} management and the matching half of {@code rpcrdma_reply_handler}):
 * the credit account and XID table of our direction, the matching of replies to calls,
 * and abandoned calls. Calls waiting for a credit or for a receive to be posted for their
 * reply are its {@link CallBacklog}.
 *
 * <p>One lock (this) guards all of it. Lock order: Requester → SendQueue → ReceiveQueue →
 * the link. No call is completed and no user code runs while it is held: what must be
 * completed is collected and completed after the lock ({@code afterLock}), where a link
 * failure forced under the lock is also settled ({@link LinkFailure}). Each tick of
 * {@link CallTimer} sweeps it under that lock ({@link CallSweep}).
 */
public final class Requester {
    /** What a loss leaves behind: calls that were sent, and calls that never were. */
    record Taken(List<CallRequest> sent, List<CallRequest> unsent) {}

    private final String name;
    private final Direction direction;
    private final CreditAccount credits;
    private final XidTable<CallRequest> table;
    private final ReceiveDemand receives;
    private final LinkFailure failure;
    private final StatsCounters stats;
    /** Run (without locks, off the timer thread) with the reason when the peer stalled ({@link CallSweep}): it is reset. */
    private final java.util.function.Consumer<String> wedged;
    /** Calls not sent yet, guarded by this requester's lock. */
    private final CallBacklog backlog;
    private int abandonedInFlight;
    /** Deadlines, the stall and the silence, guarded by this requester's lock. */
    private final CallSweep sweep;
    private boolean closed;
    /**
     * Whether {@link CallTimer} sweeps this requester (it has, or had at the last tick, timed
     * or abandoned calls).
     */
    private boolean watched;

    public Requester(String name, Direction direction, int maxCredits, ReceiveDemand receives,
            SendQueue sends, LinkFailure failure, StatsCounters stats, long silenceMillis,
            java.util.function.Consumer<String> wedged) {
        this.sweep = new CallSweep(silenceMillis);
        this.failure = failure;
        this.name = name;
        this.direction = direction;
        this.credits = new CreditAccount(direction, maxCredits);
        this.table = new XidTable<>(direction, maxCredits, direction == Direction.FORWARD
                ? stats.unmatchedForwardReplies::add : stats.unmatchedBackwardReplies::add);
        this.receives = receives;
        this.stats = stats;
        this.wedged = wedged;
        this.backlog = new CallBacklog(credits, table, receives, sends, failure, stats);
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
            if (table.contains(c.xid) || !backlog.isEmpty() && backlog.contains(c.xid)) {
                throw new RpcRdmaException(name + ": XID 0x" + Integer.toHexString(c.xid) + " is already outstanding"
                        + " in the " + direction + " direction; call not sent");
            }
            c.place.queuedIn(this);
            if (!backlog.isEmpty() || !credits.available()) {
                stats.creditWaits.increment();
                Events.CreditWait w = new Events.CreditWait();
                if (w.shouldCommit()) {
                    w.connection = name;
                    w.direction = direction.name();
                    w.window = credits.window();
                    w.commit();
                }
            }
            backlog.add(c);
            if (c.deadline.timed()) {
                if (!watched) {
                    watched = true;
                    CallTimer.watch(this, c.deadline.timeoutNanos());
                } else {
                    CallTimer.resolve(c.deadline.timeoutNanos()); // a volatile read, unless it needs a finer tick
                }
            }
            backlog.pump();
            if (c.place.waitingToBeSent()) {
                c.keepForAnotherThread(); // another thread sends it
            }
            unsent = backlog.takeUnsendable();
        }
        afterLock(unsent);
        return true;
    }

    /**
     * One tick of {@link CallTimer}: fails the calls whose deadline passed (they are then
     * abandoned like a cancelled call), and stamps the deadline of calls it sees for the
     * first time. Returns the finest interval the timer must still resolve here, in ns (the
     * shortest timeout, the stall, the silence), or 0 when nothing here needs the timer.
     */
    long expire() {
        CallRequest[] due;
        long interval;
        int[] generations = null;
        boolean dead;
        boolean silent;
        synchronized (this) {
            if (closed) {
                watched = false;
                return 0;
            }
            // ORDER: read under the lock, so after every call queued here was issued: a
            // deadline stamped from it (issue + timeout at the earliest) is never early
            long now = System.nanoTime();
            boolean timed = sweep.collect(backlog.calls(), table, now);
            dead = sweep.stalledFor(now, abandonedInFlight, table.size(), credits.available());
            silent = !dead && sweep.silentFor(now, table.size() - abandonedInFlight);
            // abandoned calls out: keep looking, the stall may start or end
            watched = timed || sweep.anyDue() || abandonedInFlight > 0 && !dead;
            interval = watched ? interval(timed) : 0;
            due = sweep.due();
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
            CallTimer.execute(() -> wedged.accept("every credit is held by an abandoned call and no reply came for "
                    + CallSweep.STALL_MILLIS + " ms: the peer is not answering")); // fails calls: user code, not on the timer's thread
        } else if (silent) {
            CallTimer.execute(() -> wedged.accept("no reply to any of our calls for " + sweep.silenceMillis()
                    + " ms: the connection is declared dead (calls with retry go again on the next one)"));
        }
        return interval;
    }

    /**
     * What the timer must resolve here while watching (ns): the shortest timeout of the calls
     * still timed, the stall while abandoned calls are out, the silence. Under the lock.
     */
    private long interval(boolean timed) {
        long i = Long.MAX_VALUE;
        if (timed) {
            i = sweep.shortestTimeout();
        }
        if (abandonedInFlight > 0 || sweep.anyDue()) {
            i = Math.min(i, TimeUnit.MILLISECONDS.toNanos(CallSweep.STALL_MILLIS));
        }
        if (sweep.silenceMillis() > 0) {
            i = Math.min(i, TimeUnit.MILLISECONDS.toNanos(sweep.silenceMillis()));
        }
        return i;
    }

    /** A receive buffer came back: sends waiting calls it lets go, if the head waited for one. */
    void pump() {
        if (!backlog.blockedOnReceive()) {
            return;
        }
        CallRequest[] unsent = null;
        synchronized (this) {
            if (backlog.isEmpty()) {
                backlog.unblock(); // that head went (abandoned, or the connection closed)
            } else if (!closed) {
                backlog.pump();
                unsent = backlog.takeUnsendable();
            }
        }
        afterLock(unsent);
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
            sweep.peerAnswered();
            release(c);
            backlog.pump();
            unsent = backlog.takeUnsendable();
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
                backlog.pump();
                unsent = backlog.takeUnsendable();
            }
        }
        afterLock(unsent);
        return c;
    }

    private void release(CallRequest c) {
        credits.release();
        backlog.publishRequired();
        if (c.place.abandonedInFlight()) {
            abandonedInFlight--;
        }
        c.place.markDone();
    }

    /**
     * The caller gave up on {@code c} (cancel, timeout, its own completion). A sent call
     * keeps its credit until its late reply; if the peer then stops answering with every
     * credit held so, the timer resets the connection ({@link CallSweep#stalledFor}).
     *
     * @return whether {@code c} was sent here and its reply may still come (it stays in the
     *         XID table until then, or until the connection is lost)
     */
    boolean abandon(CallRequest c) {
        CallRequest[] unsent = null;
        boolean replyMayCome;
        synchronized (this) {
            if (c.place.owner() != this || closed) {
                return false;
            }
            if (c.place.waitingToBeSent()) {
                backlog.remove(c);
                c.place.markDone();
                stats.abandonedCalls.increment();
                backlog.pump();
                unsent = backlog.takeUnsendable();
            } else if (c.place.markAbandonedInFlight()) {
                abandonedInFlight++;
                stats.abandonedCalls.increment();
                if (!watched) {
                    // the timer watches for a stall (never wedge silently)
                    watched = true;
                    CallTimer.watch(this, TimeUnit.MILLISECONDS.toNanos(CallSweep.STALL_MILLIS));
                }
            }
            replyMayCome = c.place.sent();
        }
        afterLock(unsent);
        return replyMayCome;
    }

    /** The connection is lost: takes every call, once, and refuses new ones. */
    Taken takeAll() {
        synchronized (this) {
            closed = true;
            List<CallRequest> sent = table.removeAll();
            List<CallRequest> unsent = backlog.takeAll();
            credits.reset();
            receives.publish(0);
            abandonedInFlight = 0;
            sweep.peerAnswered();
            for (CallRequest c : sent) {
                c.place.markDone();
            }
            for (CallRequest c : unsent) {
                c.place.markDone();
            }
            return new Taken(sent, unsent);
        }
    }

    /** Calls somebody still waits for: sent and not abandoned, or waiting to be sent. */
    synchronized int active() {
        return table.size() - abandonedInFlight + backlog.size();
    }

    public synchronized int outstanding() {
        return table.size();
    }

    public synchronized int abandonedInFlight() {
        return abandonedInFlight;
    }

    public synchronized int waiting() {
        return backlog.size();
    }

    public synchronized int window() {
        return credits.window();
    }

    public synchronized int highWater() {
        return credits.highWater();
    }

    synchronized int creditsInUse() {
        return credits.outstanding();
    }
}
