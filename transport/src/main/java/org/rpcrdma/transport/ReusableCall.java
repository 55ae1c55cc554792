package org.rpcrdma.transport;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * A call slot used again from call to call, for the two call shapes whose reply is valid
 * only while user code reads it ({@link Connection#callAndRead} and
 * {@link Connection#call(MemorySegment, ReplyCallback)}): no future, no
 * {@link ReceivedMessage}, no lambda per call (issue 11: nothing allocated on the inline
 * path). The user never holds the slot, so a stale reference cannot act on a later call;
 * the transport drops its own references before it completes the call (the requester
 * removed it from its XID table first). A slot that was abandoned (timeout, interrupt) or
 * handed to another connection may still be referenced by the transport: it is never
 * reused, the garbage collector takes it.
 *
 * <p>It is an {@link OutgoingCall} so the requester, the chunk code and connection loss
 * treat it like any call; its {@code CompletableFuture} half is never completed and never
 * shown to anyone. Its outcome is its own: PENDING until exactly one of reply, failure or
 * abandonment wins a compare-and-set.
 */
final class ReusableCall extends OutgoingCall {
    private static final System.Logger LOG = System.getLogger(ReusableCall.class.getName());
    private static final int PENDING = 0;
    private static final int REPLIED = 1;
    private static final int FAILED = 2;
    private static final int ABANDONED = 3;
    private static final VarHandle OUTCOME;

    static {
        try {
            OUTCOME = MethodHandles.lookup().findVarHandle(ReusableCall.class, "outcome", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile int outcome = ABANDONED;
    private final Pool home;
    /** The blocking caller's poll condition, made once per slot (a method reference per call would allocate). */
    private final BooleanSupplier done = this::isDone;
    private ReplyCallback callback;
    private volatile Thread waiter;
    /** False once the transport may hold this slot after its outcome (abandoned, handed over). */
    private volatile boolean reusable = true;
    // The reply a blocking caller reads: inline in a receive buffer, or a reassembled message.
    private Connection replyConn;
    private int replySlot;
    private MemorySegment replyView;
    private ReceivedMessage replyMsg;
    private Throwable failure;

    private ReusableCall(Pool home) {
        super(0, MemorySegment.NULL, false);
        this.home = home;
    }

    /** Makes this slot the call {@code xid} carrying {@code rpcCall}; {@code cb} null for a blocking caller. */
    private void start(int xid, MemorySegment rpcCall, ReplyCallback cb) {
        reuse(xid, rpcCall);
        callback = cb;
        replyConn = null;
        replyView = null;
        replyMsg = null;
        failure = null;
        if (waiter != null) {
            waiter = null; // only a caller that parked set it (no volatile store per call otherwise)
        }
        // ORDER: last; a release store, not a volatile one (a full fence per call): the slot
        // is this thread's until submit, whose requester lock publishes it to the completion thread
        OUTCOME.setRelease(this, PENDING);
    }

    @Override
    public boolean isDone() {
        return outcome != PENDING;
    }

    @Override
    boolean deliverInline(Connection conn, int slot, MemorySegment view) {
        deliveredBy = Thread.currentThread();
        replyConn = conn;
        replySlot = slot;
        replyView = view;
        long size = eventReplyBytes(view);
        if (!OUTCOME.compareAndSet(this, PENDING, REPLIED)) {
            return false; // abandoned: the caller releases the buffer
        }
        finish(true, "reply", size);
        ReplyCallback cb = callback;
        if (cb == null) {
            wake();
            return true; // the blocking caller reads it, then releases the buffer
        }
        try {
            cb.onReply(view);
        } catch (Throwable e) {
            LOG.log(Level.WARNING, "reply callback threw for call 0x" + Integer.toHexString(xid), e);
        }
        conn.releaseReceive(slot); // read: the buffer goes back now; true below means delivered, not late
        recycle();
        return true;
    }

    @Override
    boolean deliver(ReceivedMessage reply) {
        releaseExposure(); // ORDER: no rkey of this call outlives it (RFC 8166 §4.4)
        deliveredBy = Thread.currentThread();
        replyMsg = reply;
        long size = eventReplyBytes(reply);
        if (!OUTCOME.compareAndSet(this, PENDING, REPLIED)) {
            return false;
        }
        finish(true, "reply", size);
        ReplyCallback cb = callback;
        if (cb == null) {
            wake();
            return true;
        }
        try {
            cb.onReply(reply.bytes());
        } catch (Throwable e) {
            LOG.log(Level.WARNING, "reply callback threw for call 0x" + Integer.toHexString(xid), e);
        } finally {
            reply.release();
        }
        recycle();
        return true;
    }

    @Override
    boolean fail(Throwable t) {
        releaseExposure(); // ORDER: no rkey of this call outlives it (RFC 8166 §4.4)
        failure = t;
        if (!OUTCOME.compareAndSet(this, PENDING, FAILED)) {
            return false;
        }
        finish(true, t.getClass().getSimpleName());
        ReplyCallback cb = callback;
        if (cb == null) {
            wake();
            return true;
        }
        failed(cb, t);
        recycle();
        return true;
    }

    @Override
    void expire(String where) {
        abandon(new CallTimeoutException(where, xid, timeoutMillis()));
    }

    @Override
    void detach() {
        reusable = false; // the next connection's structures will hold it
        super.detach();
    }

    /** The call ends without its reply (a timeout, the caller's interrupt); a late reply is released. */
    private boolean abandon(Throwable cause) {
        reusable = false; // ORDER: before the outcome, the requester still holds it if it was sent
        if (!OUTCOME.compareAndSet(this, PENDING, ABANDONED)) {
            return false;
        }
        failure = cause;
        abandonedBy(cause instanceof CallTimeoutException ? "timeout" : cause.getClass().getSimpleName());
        ReplyCallback cb = callback;
        if (cb != null) {
            failed(cb, cause);
        }
        return true;
    }

    private void failed(ReplyCallback cb, Throwable t) {
        try {
            cb.onFailure(t);
        } catch (Throwable e) {
            LOG.log(Level.WARNING, "failure callback threw for call 0x" + Integer.toHexString(xid), e);
        }
    }

    private void wake() {
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    private void recycle() {
        if (reusable) {
            home.put(this);
        }
    }

    /**
     * The blocking caller's half: takes its reply off the completion queue itself when it
     * can (as callAndWait does), else parks until the thread that took it wakes it; then
     * reads it on this thread and releases its buffer.
     */
    <T> T await(org.rpcrdma.transport.core.Link link, ReplyReader<T> reader, long timeoutNanos, long timeoutMillis,
            String where, StatsCounters stats) throws InterruptedException, TimeoutException {
        // The clock is read only for a call not answered yet (an in-memory pair answers
        // inside submit; under TCG a clock read costs ~1 µs), and the timeout counts from here.
        long deadline = isDone() ? 0 : System.nanoTime() + CallTimer.waitNanos(timeoutNanos);
        try {
            while (true) {
                if (!isDone()) {
                    link.pollOnCaller(done, deadline); // false: another thread takes the reply and wakes us
                }
                if (!isDone()) {
                    waiter = Thread.currentThread();
                    while (!isDone() && !Thread.currentThread().isInterrupted()) {
                        long left = deadline - System.nanoTime();
                        if (left <= 0) {
                            break;
                        }
                        LockSupport.parkNanos(this, left);
                    }
                    waiter = null;
                }
                if (Thread.interrupted()) {
                    if (abandon(new InterruptedException("interrupted"))) {
                        throw new InterruptedException(where + ": call 0x" + Integer.toHexString(xid)
                                + " interrupted (abandoned)");
                    }
                    Thread.currentThread().interrupt(); // it ended meanwhile: keep the flag, take the outcome
                } else if (!isDone()) {
                    if (abandon(new CallTimeoutException(where, xid, timeoutMillis))) {
                        throw new TimeoutException(where + ": call 0x" + Integer.toHexString(xid)
                                + " got no reply within " + timeoutMillis + " ms (abandoned)");
                    }
                }
                if (isDone()) {
                    break;
                }
            }
            if (outcome == FAILED) {
                Throwable t = failure;
                recycle();
                if (t instanceof RuntimeException r) {
                    throw r;
                }
                throw new RpcRdmaException("call failed", t);
            }
            (deliveredBy == Thread.currentThread() ? stats.repliesTakenByCaller : stats.repliesHandedOff).increment();
            return read(reader);
        } finally {
            if (waiter != null) {
                waiter = null;
            }
        }
    }

    /** Reads the reply on the caller's thread, then releases its buffer and the slot. */
    private <T> T read(ReplyReader<T> reader) {
        ReceivedMessage m = replyMsg;
        try {
            return reader.read(m != null ? m.bytes() : replyView);
        } finally {
            if (m != null) {
                m.release();
            } else {
                replyConn.releaseReceive(replySlot);
            }
            replyConn = null;
            replyView = null;
            replyMsg = null;
            recycle();
        }
    }

    /**
     * The slots of one connection (a few: one per concurrent blocking caller or callback
     * call outstanding). Bounded so a burst does not pin memory; beyond it slots are
     * dropped to the garbage collector. The first thread to take a slot keeps one here
     * without the lock when it gives it back itself: a blocking caller that takes its own
     * reply off the queue takes and returns its slot on its own thread, call after call
     * (issue 11 §1: two lock acquisitions fewer per call). Slots another thread gives back
     * (a poller completing callback calls) go to the shared list, where the owner finds them.
     */
    static final class Pool {
        private static final int MAX = 256;
        private static final long NO_OWNER = -1;
        private final ArrayDeque<ReusableCall> free = new ArrayDeque<>();
        /** Id of the thread that may use {@link #kept}; NO_OWNER until the first take. */
        private volatile long owner = NO_OWNER;
        /** The owner's free slot, or null: read and written by the owner only. */
        private ReusableCall kept;

        /** A slot ready for call {@code xid}. */
        ReusableCall take(int xid, MemorySegment rpcCall, ReplyCallback cb) {
            ReusableCall c = null;
            long me = Thread.currentThread().threadId();
            if (owner == me || owner == NO_OWNER && claim(me)) {
                c = kept;
                kept = null;
            }
            if (c == null) {
                synchronized (this) {
                    c = free.pollFirst();
                }
            }
            if (c == null) {
                c = new ReusableCall(this);
            }
            c.start(xid, rpcCall, cb);
            return c;
        }

        private void put(ReusableCall c) {
            if (owner == Thread.currentThread().threadId()) {
                if (kept == null) {
                    kept = c;
                    return;
                }
            }
            synchronized (this) {
                if (free.size() < MAX) {
                    free.addFirst(c);
                }
            }
        }

        private synchronized boolean claim(long me) {
            if (owner == NO_OWNER) {
                owner = me;
            }
            return owner == me;
        }

        /** Free slots (the owner's kept one read racily from another thread: for tests, when calls are quiet). */
        synchronized int free() {
            return free.size() + (kept != null ? 1 : 0);
        }
    }
}
