package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import org.rpcrdma.transport.core.Events;
import org.rpcrdma.transport.wire.Xdr;

/**
 * One call of ours from issue to reply (≈ Linux {@code rpcrdma_req}), and the future its
 * caller holds. It moves between connections when a lost connection hands it over (same
 * XID, same future, RFC 8167 §5.4).
 *
 * <p>Abandonment is first-class: a caller that cancels the future, lets {@code orTimeout}
 * expire or completes it itself abandons the call, and so does the call's own timeout.
 * The transport hears of it through the overridden completion methods: a call still
 * waiting is dropped; a call already sent keeps its XID slot and credit until its reply
 * arrives (the responder consumed a receive for it, RFC 8166 §3.3.1), and that late reply
 * is then released at once. The transport completes the future only through
 * {@link #deliver} and {@link #fail}, which bypass the overrides.
 */
sealed class OutgoingCall extends CompletableFuture<ReceivedMessage> permits ReusableCall {
    private static final VarHandle MESSAGE;
    private static final VarHandle OWNER;
    /** A thread that owns no memory: a segment it may not access is confined to another thread. */
    static final Thread NOT_THE_OWNER = new Thread(() -> { }, "rpcrdma-never-started");

    static {
        try {
            var l = MethodHandles.lookup();
            MESSAGE = l.findVarHandle(OutgoingCall.class, "message", MemorySegment.class);
            OWNER = l.findVarHandle(OutgoingCall.class, "owner", Requester.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * The thread that delivered the reply: callAndWait counts whether it was the caller's own
     * (no hand-off). Written before the completion's compare-and-set and read after it was
     * seen, which orders it: not volatile (a fence per call for a statistic).
     */
    Thread deliveredBy;

    static final int NEW = 0;
    static final int WAITING = 1;
    static final int SENT = 2;
    static final int DONE = 3;

    /** Set at issue, before the call is submitted (a {@link ReusableCall} gets a new one per use). */
    int xid;
    final boolean retry;
    /** The RPC call bytes; a heap copy once the call may outlive its caller's segment. */
    private volatile MemorySegment message;
    /** The requester that has this call now (null while it is between connections). */
    volatile Requester owner;
    /** Guarded by the owner's lock. */
    int state = NEW;
    /** Sent, then abandoned by the caller; guarded by the owner's lock. */
    boolean abandoned;
    /** Its deadline passed and its failure is on its way (CallTimer); guarded by the owner's lock. */
    boolean expiring;
    /**
     * System.nanoTime() after which the call times out; 0: not stamped yet, or never (then
     * {@link #timeoutNanos} is 0). Stamped lazily ({@link #deadline(long)}): a call answered
     * before the timer first sees it never reads the clock.
     */
    private long deadline;
    /**
     * The call's timeout, 0: none. Set once, before it is submitted. (Its milliseconds are
     * derived, not kept: a field more would be 8 bytes more per future-shaped call.)
     */
    private long timeoutNanos;
    private volatile ScheduledFuture<?> timer;
    /** The largest reply the caller allows (0: what fits inline); set once, before the call is submitted. */
    private int maxReplyBytes;
    /** The DDP-eligible argument, or null; set once, before the call is submitted. */
    private DdpArgument ddp;
    /** Where a DDP result goes, or null; set once, before the call is submitted. */
    private java.lang.foreign.MemorySegment receptacle;
    /** Memory this call exposes on its current connection, or null (an inline call). */
    private volatile CallExposure exposure;
    private Events.Call event;

    OutgoingCall(int xid, MemorySegment message, boolean retry) {
        this.xid = xid;
        this.message = retry && message.isNative() ? heapCopy(message) : message;
        this.retry = retry;
        this.event = newEvent(xid, message);
    }

    /**
     * A JFR call event if one is being recorded: nothing allocated or read per call
     * otherwise. Program, version and procedure are read now, from the call header (RFC
     * 5531 §9: xid, msg_type, rpcvers, prog, vers, proc), while the caller's bytes are
     * certainly readable on this thread.
     */
    private static Events.Call newEvent(int xid, MemorySegment message) {
        if (!Events.CALL_PROBE.isEnabled()) {
            return null;
        }
        Events.Call e = new Events.Call();
        e.begin();
        e.xid = xid;
        e.callBytes = message.byteSize();
        if (message.byteSize() >= 24) {
            e.program = Xdr.getInt(message, 12);
            e.version = Xdr.getInt(message, 16);
            e.procedure = Xdr.getInt(message, 20);
        }
        return e;
    }

    /**
     * The size of {@code reply} for the call event (0 when none is recorded): its message
     * and what the responder placed in our write chunks. Read before the reply is handed
     * to the caller, who may release it at once.
     */
    final long eventReplyBytes(ReceivedMessage reply) {
        return event == null ? 0 : reply.bytes().byteSize() + Math.max(0, reply.placedBytes());
    }

    /** The size of an inline reply in a receive buffer for the call event (0 when none is recorded). */
    final long eventReplyBytes(MemorySegment view) {
        return event == null ? 0 : view.byteSize();
    }

    /**
     * Makes a finished {@link ReusableCall} a new call (its previous one left every
     * transport structure: it was answered or failed, never abandoned or handed over).
     */
    final void reuse(int newXid, MemorySegment newMessage) {
        xid = newXid;
        // Release stores and skipped writes, not volatile stores (a full fence each, six per
        // call): the slot is nobody else's until it is submitted, and the requester's lock
        // publishes it then (issue 11 §1).
        MESSAGE.setRelease(this, newMessage);
        OWNER.setRelease(this, (Requester) null);
        state = NEW;
        abandoned = false;
        expiring = false;
        deadline = 0;
        timeoutNanos = 0;
        if (timer != null) {
            timer = null;
        }
        maxReplyBytes = 0;
        ddp = null;
        receptacle = null;
        if (exposure != null) {
            exposure = null;
        }
        deliveredBy = null;
        event = newEvent(newXid, newMessage);
    }

    /**
     * The requester {@code r} takes the call (under its lock, which publishes it to the
     * completion thread; readers elsewhere read the field as a volatile): a release store.
     */
    final void ownedBy(Requester r) {
        OWNER.setRelease(this, r);
    }

    /** The one heap-copy idiom of the transport: bytes that must outlive the caller's segment. */
    static MemorySegment heapCopy(MemorySegment m) {
        return MemorySegment.ofArray(m.toArray(ValueLayout.JAVA_BYTE));
    }

    MemorySegment message() {
        return message;
    }

    DdpArgument ddp() {
        return ddp;
    }

    MemorySegment receptacle() {
        return receptacle;
    }

    void ddp(DdpArgument d, MemorySegment r) {
        this.ddp = d;
        this.receptacle = r;
    }

    int maxReplyBytes() {
        return maxReplyBytes;
    }

    void maxReplyBytes(int n) {
        this.maxReplyBytes = n;
    }

    CallExposure exposure() {
        return exposure;
    }

    /** The call's exposure on the connection that sends it now (the previous one, if any, released). */
    void exposure(CallExposure x) {
        CallExposure old = exposure;
        exposure = x;
        if (old != null) {
            old.release();
        }
        if (x != null && isDone()) {
            x.release(); // completed meanwhile: nothing may stay exposed
        }
    }

    final void releaseExposure() {
        CallExposure x = exposure;
        if (x != null) {
            x.release();
        }
    }

    /**
     * The reply, inline in receive buffer {@code slot} of {@code conn} at {@code view}: a
     * future gets it as a {@link ReceivedMessage}. Returns true if the reply was delivered
     * (the buffer taken: released by whoever reads it, or already by a callback that read
     * it), false if the caller had abandoned the call (a late reply: the caller releases it).
     */
    boolean deliverInline(Connection conn, int slot, MemorySegment view) {
        ReceivedMessage m = new ReceivedMessage(view, conn, slot, -1);
        return deliver(m);
    }

    /**
     * The call waits to be sent, by whichever thread frees a credit or a receive: bytes
     * confined to the caller's thread could not be read there, so they are copied now (on
     * the caller's thread, under the requester's lock; only a call that waits pays for it).
     */
    final void keepForAnotherThread() {
        MemorySegment m = message;
        if (m.isNative() && !m.isAccessibleBy(NOT_THE_OWNER)) {
            MemorySegment copy = heapCopy(m);
            message = copy;
            CallExposure x = exposure;
            if (x != null) {
                x.moved(m, copy);
            }
        }
    }

    /** Whether the memory this call's Send reads is still there (the caller may have closed its arena). */
    final boolean sendable() {
        CallExposure x = exposure;
        return x == null ? message.scope().isAlive() : x.sendable();
    }

    /** Leaves its connection: the bytes must now survive until a later connection sends them. */
    void detach() {
        releaseExposure(); // its rkeys belonged to that connection
        deadline(System.nanoTime()); // its deadline keeps running while it waits for a connection
        owner = null;
        MemorySegment m = message;
        if (m.isNative()) {
            message = heapCopy(m);
        }
    }

    /**
     * Sets the call's timeout (once, at issue; its deadline keeps running across
     * reconnects). A requester sweeps it on {@link CallTimer}'s tick; a call parked with no
     * connection gets a scheduled task ({@code parked}). The clock is not read here for a
     * call that goes to a requester: the timer stamps its deadline the first time it sees
     * it (a clock read per call was ~8% of a callback call's CPU on the host, issue 11 §1),
     * from a clock read after the call was queued, so it never times out early; it may
     * time out up to one tick later than it would have.
     */
    void deadline(String where, long timeoutNanos, boolean parked) {
        if (timeoutNanos <= 0) {
            return;
        }
        this.timeoutNanos = timeoutNanos;
        if (parked) {
            deadline(System.nanoTime());
            timer = CallTimer.schedule(() -> expire(where), timeoutNanos);
        }
    }

    /** Whether the call has a timeout. */
    boolean timed() {
        return timeoutNanos != 0;
    }

    /**
     * The call's deadline (0: it has no timeout), stamped {@code now} + its timeout if it was
     * not yet. {@code now} must be a clock read made after the call was issued; the caller
     * holds its requester's lock (or the call is between connections).
     */
    long deadline(long now) {
        if (deadline == 0 && timeoutNanos != 0) {
            long d = now + timeoutNanos;
            deadline = d == 0 ? 1 : d;
        }
        return deadline;
    }

    long timeoutMillis() {
        return timeoutNanos == 0 ? 0 : Math.max(1, timeoutNanos / 1_000_000);
    }

    /** The deadline passed: fails the call with {@link CallTimeoutException} (it is then abandoned). */
    void expire(String where) {
        completeExceptionally(new CallTimeoutException(where, xid, timeoutMillis()));
    }

    /** The transport completes the call with its reply; false if the caller had abandoned it. */
    boolean deliver(ReceivedMessage reply) {
        releaseExposure(); // ORDER: no rkey of this call outlives it (RFC 8166 §4.4)
        deliveredBy = Thread.currentThread();
        long size = eventReplyBytes(reply);
        boolean done = super.complete(reply);
        finish(done, "reply", size);
        return done;
    }

    /** The transport fails the call; false if it was already complete. */
    boolean fail(Throwable t) {
        releaseExposure(); // ORDER: no rkey of this call outlives it (RFC 8166 §4.4)
        boolean done = super.completeExceptionally(t);
        finish(done, t.getClass().getSimpleName());
        return done;
    }

    final void finish(boolean done, String outcome) {
        finish(done, outcome, 0);
    }

    /** The call is complete ({@code done}): its timer stops, its event is recorded if it took long enough. */
    final void finish(boolean done, String outcome, long replyBytes) {
        ScheduledFuture<?> t = timer;
        if (t != null) {
            t.cancel(false);
        }
        Events.Call e = event;
        if (done && e != null) {
            e.end();
            if (e.shouldCommit()) {
                Requester r = owner;
                e.connection = r == null ? "" : r.connectionName();
                e.direction = r == null ? "" : r.direction().name();
                e.outcome = outcome;
                e.replyBytes = replyBytes;
                e.commit();
            }
        }
    }

    // ---- completed by someone other than the transport: the call is abandoned ----

    @Override
    public boolean complete(ReceivedMessage value) {
        boolean done = super.complete(value);
        abandoned(done, "completed by caller");
        return done;
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        boolean done = super.completeExceptionally(ex);
        abandoned(done, ex instanceof CallTimeoutException ? "timeout" : ex.getClass().getSimpleName());
        return done;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean done = super.cancel(mayInterruptIfRunning);
        abandoned(done, "cancelled");
        return done;
    }

    private void abandoned(boolean done, String outcome) {
        if (done) {
            abandonedBy(outcome);
        }
    }

    /** The call was given up (its outcome is set): late RDMA fails, the requester keeps or drops it. */
    final void abandonedBy(String outcome) {
        CallExposure x = exposure;
        if (x != null) {
            x.callerGone(); // ORDER: before the requester lets go: a reply from now copies nothing into our memory
        }
        finish(true, outcome);
        Requester r = owner;
        boolean replyMayCome = r != null && r.abandon(this);
        if (x != null) {
            x.abandon(replyMayCome); // withdrawn now (a late RDMA Read or Write fails), or held for the reply
        }
    }

    @Override
    public String toString() {
        return "call 0x" + Integer.toHexString(xid) + " " + super.toString();
    }
}
