package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ScheduledFuture;
import java.util.function.BooleanSupplier;
import org.rpcrdma.transport.CallTimeoutException;
import org.rpcrdma.transport.DdpArgument;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.ReplyCallback;
import org.rpcrdma.transport.chunk.CallExposure;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * One call of ours from issue to its end (≈ Linux {@code rpcrdma_req}): XID, message, what
 * the chunk marshaller prepared for its Send ({@link #exposure}, null for an inline call),
 * deadline, retry flag and its place in the requester that has it now ({@link CallPlace}).
 * It moves between connections when a lost connection hands it over (same XID, RFC 8167
 * §5.4).
 *
 * <p>It ends exactly once ({@link CallOutcome}): won by the reply, a failure, or its abandonment (its timeout, the caller's interrupt, or the
 * caller completing or cancelling its future). How the end reaches the caller is its
 * {@link Completion}: a future, a callback, or a blocking caller that reads the reply in
 * place. A sent call that is abandoned keeps its XID slot and credit until its reply
 * arrives (the responder consumed a receive for it, RFC 8166 §3.3.1); that late reply is
 * then released at once.
 *
 * <p>Requests are pooled per connection ({@link CallRequestPool}): the transport drops its
 * references before it ends a call (the requester removed it from its XID table first), so
 * an ended request is used again unless it was abandoned or handed over (then the
 * transport may still hold it, and the garbage collector takes it). Each use has a new
 * generation, so a stale future or timer cannot end a later call.
 */
public final class CallRequest {
    private static final VarHandle MESSAGE;
    /** A thread that owns no memory: a segment it may not access is confined to another thread. */
    public static final Thread NOT_THE_OWNER = new Thread(() -> { }, "rpcrdma-never-started");

    static {
        try {
            MESSAGE = MethodHandles.lookup().findVarHandle(CallRequest.class, "message", MemorySegment.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The pool it goes back to, or null (a call issued with no connection, never reused). */
    private final CallRequestPool home;
    private final CallOutcome outcome = new CallOutcome();
    /** A blocking caller's poll condition, made once per request (a method reference per call would allocate). */
    final BooleanSupplier done = this::isDone;
    /** False once the transport may hold this request after its outcome (abandoned, handed over). */
    private volatile boolean reusable = true;
    private Completion completion;
    /** What the shape needs besides the completion: the callback, or null. */
    ReplyCallback callback;

    public int xid;
    private boolean retry;
    /** The RPC call bytes; a heap copy once the call may outlive its caller's segment. */
    private volatile MemorySegment message;
    /** Where the requester that has it now keeps it. */
    final CallPlace place = new CallPlace();
    final CallDeadline deadline = new CallDeadline();
    private int maxReplyBytes;
    private DdpArgument ddp;
    private MemorySegment receptacle;
    private volatile CallExposure exposure;
    final CallEvent event = new CallEvent();

    // The reply a blocking caller reads in place (ReadInPlace): inline in a receive buffer,
    // or a reassembled message; the failure it rethrows; the thread it wakes.
    ConnectionEngine replyConn;
    int replySlot;
    MemorySegment replyView;
    ReceivedMessage replyMsg;
    Throwable failure;
    volatile Thread waiter;
    /** The thread that delivered the reply: whether a blocking caller took its own (a statistic). */
    Thread deliveredBy;

    CallRequest(CallRequestPool home) {
        this.home = home;
    }

    /**
     * A future call for {@code rpcCall} outside any pool (a call issued with no connection,
     * or to be handed around): already failed if the bytes are not an ONC RPC CALL.
     */
    public static CallRequest issue(MemorySegment rpcCall, boolean retry) {
        CallRequest r = new CallRequest(null);
        if (rpcCall.byteSize() < 8 || Xdr.getInt(rpcCall, 4) != OncRpc.CALL) {
            r.start(rpcCall.byteSize() >= 4 ? Xdr.getInt(rpcCall, 0) : 0, rpcCall, false, null);
            CallFuture.startOn(r);
            r.fail(new IllegalArgumentException("not an ONC RPC CALL message"));
            return r;
        }
        r.start(Xdr.getInt(rpcCall, 0), rpcCall, retry, null);
        CallFuture.startOn(r);
        return r;
    }

    /**
     * Makes this request the call {@code newXid} carrying {@code rpcCall}; its completion
     * is set next ({@link #start(Completion)}). Release stores and skipped writes, not
     * volatile stores (a full fence each): the request is this thread's until it is
     * submitted, and the requester's lock publishes it then.
     */
    void start(int newXid, MemorySegment rpcCall, boolean retry, ReplyCallback cb) {
        xid = newXid;
        this.retry = retry;
        MESSAGE.setRelease(this, retry && rpcCall.isNative() ? Marshal.heapCopy(rpcCall) : rpcCall);
        place.reset();
        deadline.reset();
        maxReplyBytes = 0;
        ddp = null;
        receptacle = null;
        if (exposure != null) {
            exposure = null;
        }
        callback = cb;
        replyConn = null;
        replyView = null;
        replyMsg = null;
        failure = null;
        deliveredBy = null;
        if (waiter != null) {
            waiter = null; // only a caller that parked set it
        }
        event.begin(newXid, rpcCall);
    }

    /** Its completion, then PENDING in a new generation: last, a release store (see above). */
    void start(Completion c) {
        completion = c;
        outcome.next();
    }

    /** This use's generation: what a future or a timer of this call presents to end it. */
    int generation() {
        return outcome.generation();
    }

    /** The future of a future-shaped call. */
    public CallFuture future() {
        return (CallFuture) completion;
    }

    public boolean isDone() {
        return outcome.isDone();
    }

    /** Whether it ended as {@code o} ({@link CallOutcome#REPLIED}, FAILED, ABANDONED). */
    boolean endedAs(int o) {
        return outcome.endedAs(o);
    }

    /**
     * Ends this use as {@code to} (a reply or a failure), its event and timer with it; false
     * if it had ended. What the end touches is read before it: from then on a blocking
     * caller may take the outcome, recycle this request and start its next call on it.
     */
    private boolean end(int to, String how, long replyBytes) {
        Events.Call ev = event.current();
        ScheduledFuture<?> timer = deadline.task();
        if (!outcome.end(to)) {
            return false;
        }
        CallEvent.end(ev, this, how, replyBytes);
        CallDeadline.cancel(timer);
        return true;
    }

    boolean retry() {
        return retry;
    }

    public MemorySegment message() {
        return message;
    }

    public DdpArgument ddp() {
        return ddp;
    }

    public MemorySegment receptacle() {
        return receptacle;
    }

    public void ddp(DdpArgument d, MemorySegment r) {
        this.ddp = d;
        this.receptacle = r;
    }

    public int maxReplyBytes() {
        return maxReplyBytes;
    }

    public void maxReplyBytes(int n) {
        this.maxReplyBytes = n;
    }

    public CallExposure exposure() {
        return exposure;
    }

    /** The call's exposure on the connection that sends it now (the previous one, if any, released). */
    public void exposure(CallExposure x) {
        CallExposure old = exposure;
        exposure = x;
        if (old != null) {
            old.release();
        }
        if (x != null && isDone()) {
            x.release(); // completed meanwhile: nothing may stay exposed
        }
    }

    void releaseExposure() {
        CallExposure x = exposure;
        if (x != null) {
            x.release();
        }
    }

    /** Whether the timer collects it now: its deadline passed, and it is not ended or collected already. */
    boolean expiryDue(long now) {
        return deadline.timed() && !isDone() && !deadline.expiring() && deadline.passed(now);
    }

    /**
     * The call waits to be sent, by whichever thread frees a credit or a receive: bytes
     * confined to the caller's thread could not be read there, so they are copied now (on
     * the caller's thread, under the requester's lock; only a call that waits pays for it).
     */
    void keepForAnotherThread() {
        MemorySegment m = message;
        if (m.isNative() && !m.isAccessibleBy(NOT_THE_OWNER)) {
            MemorySegment copy = Marshal.heapCopy(m);
            message = copy;
            CallExposure x = exposure;
            if (x != null) {
                x.moved(m, copy);
            }
        }
    }

    /** Whether the memory this call's Send reads is still there (the caller may have closed its arena). */
    boolean sendable() {
        CallExposure x = exposure;
        return x == null ? message.scope().isAlive() : x.sendable();
    }

    /** Leaves its connection: the bytes must now survive until a later connection sends them. */
    void detach() {
        reusable = false; // the next connection's structures will hold it
        releaseExposure(); // its rkeys belonged to that connection
        deadline.at(System.nanoTime()); // its deadline keeps running while it waits for a connection
        place.leave();
        MemorySegment m = message;
        if (m.isNative()) {
            message = Marshal.heapCopy(m);
        }
    }

    /**
     * Sets the call's timeout ({@code timeoutNanos}, 0: none), once, at issue; a call
     * {@code parked} with no connection gets a task of its own ({@link CallDeadline}).
     */
    void deadline(String where, long timeoutNanos, boolean parked) {
        if (timeoutNanos <= 0) {
            return;
        }
        deadline.timeout(timeoutNanos);
        if (parked) {
            int gen = generation();
            deadline.schedule(() -> expire(where, gen));
        }
    }

    /** The deadline of use {@code gen} passed: it is abandoned with {@link CallTimeoutException}. */
    void expire(String where, int gen) {
        if (generation() == gen) {
            abandon(new CallTimeoutException(where, xid, deadline.timeoutMillis()));
        }
    }

    // ---- the end: reply, failure, abandonment ----

    /**
     * The reply, inline in receive buffer {@code slot} of {@code conn} at {@code view}.
     * Returns true if the reply was delivered (the buffer taken: released by whoever reads
     * it, or already by a callback that read it), false if the caller had abandoned the
     * call (a late reply: the caller releases it).
     */
    boolean deliverInline(ConnectionEngine conn, int slot, MemorySegment view) {
        // ORDER: before the outcome, which a blocking caller reads them after
        deliveredBy = Thread.currentThread();
        replyConn = conn;
        replySlot = slot;
        replyView = view;
        long size = event.replyBytes(view);
        Completion c = completion; // ORDER: before the end (see end(int, String, long))
        return end(CallOutcome.REPLIED, "reply", size) && c.inline(this, conn, slot, view);
    }

    /** The transport completes the call with its reassembled reply; false if the caller had abandoned it. */
    boolean deliver(ReceivedMessage reply) {
        releaseExposure(); // ORDER: no rkey of this call outlives it (RFC 8166 §4.4)
        deliveredBy = Thread.currentThread();
        replyMsg = reply;
        long size = event.replyBytes(reply);
        Completion c = completion; // ORDER: before the end (see end(int, String, long))
        return end(CallOutcome.REPLIED, "reply", size) && c.message(this, reply);
    }

    /** The transport fails the call; false if it had ended already. */
    public boolean fail(Throwable t) {
        releaseExposure(); // ORDER: no rkey of this call outlives it (RFC 8166 §4.4)
        failure = t;
        Completion c = completion; // ORDER: before the end (see end(int, String, long))
        if (!end(CallOutcome.FAILED, t.getClass().getSimpleName(), 0)) {
            return false;
        }
        c.failed(this, t);
        return true;
    }

    /** The call ends without its reply (its timeout, the caller's interrupt); a late reply is released. */
    boolean abandon(Throwable cause) {
        reusable = false; // ORDER: before the outcome, the requester still holds it if it was sent
        if (!outcome.end(CallOutcome.ABANDONED)) {
            return false;
        }
        failure = cause;
        abandoned(cause instanceof CallTimeoutException ? "timeout" : cause.getClass().getSimpleName());
        completion.abandoned(this, cause);
        return true;
    }

    /** The caller ended use {@code gen} itself (completed or cancelled its future). */
    void abandonedByCaller(int gen, String how) {
        if (generation() != gen) {
            return; // that call ended and this request is another call now
        }
        reusable = false;
        if (outcome.end(gen, CallOutcome.ABANDONED)) {
            abandoned(how);
        }
    }

    /** Given up: late RDMA fails, the requester keeps or drops it. */
    private void abandoned(String how) {
        CallExposure x = exposure;
        if (x != null) {
            x.callerGone(); // ORDER: before the requester lets go: a reply from now copies nothing into our memory
        }
        event.end(this, how, 0);
        deadline.stop();
        Requester r = place.owner();
        boolean replyMayCome = r != null && r.abandon(this);
        if (x != null) {
            x.abandon(replyMayCome); // withdrawn now (a late RDMA Read or Write fails), or held for the reply
        }
    }

    /** Back to its pool, if the transport holds it no more. */
    void recycle() {
        if (reusable && home != null) {
            // a pooled request keeps no user memory alive (an automatic arena's segment, a reply)
            message = MemorySegment.NULL;
            ddp = null;
            receptacle = null;
            exposure = null;
            callback = null;
            replyConn = null;
            replyView = null;
            replyMsg = null;
            failure = null;
            home.put(this);
        }
    }

    @Override
    public String toString() {
        return "call 0x" + Integer.toHexString(xid) + " " + outcome.state();
    }
}
