package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.rpcrdma.transport.CallTimeoutException;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.link.Link;

/**
 * The future a caller holds for a future-shaped call: not the {@link CallRequest} itself,
 * which the transport uses again once the call ended. Completing it is abandonment:
 * cancelling it, letting {@code orTimeout} expire or completing it yourself tells the
 * transport (a call still waiting is dropped, a sent one keeps its credit until its late
 * reply, which is then released). The transport completes it only through the
 * {@link Completion} methods, which bypass the overrides. It names the use of the request
 * it belongs to (its generation), so acting on it after the call ended touches no later call.
 */
public final class CallFuture extends CompletableFuture<ReceivedMessage> implements Completion, BooleanSupplier {
    private final CallRequest request;
    private final int generation;
    /**
     * The link of the connection the call was sent on, whose completions a thread waiting
     * in {@link #get()}, {@link #get(long, TimeUnit)} or {@link #join()} polls itself (as
     * callAndWait does) instead of parking until the poller thread wakes it; null for a
     * call issued with no connection.
     */
    private Link link;
    /** The connection's counters: whether a waiting thread took its own reply (as callAndWait counts it). */
    private StatsCounters stats;
    /**
     * The thread that delivered the reply (callAndWait counts whether it was the caller's
     * own): written before the future's completion and read after it was seen.
     */
    Thread deliveredBy;

    /** The thread that delivered the reply, once the future completed with it. */
    public Thread deliveredBy() {
        return deliveredBy;
    }

    private CallFuture(CallRequest request, int generation) {
        this.request = request;
        this.generation = generation;
    }

    /** Starts {@code r} (made a call already) as a future call; its future. */
    static CallFuture startOn(CallRequest r) {
        CallFuture f = new CallFuture(r, r.generation() + 1);
        r.start(f);
        return f;
    }

    /** Sent on {@code l}: a thread that waits for this future polls {@code l} for the reply itself. */
    CallFuture pollOn(Link l, StatsCounters s) {
        link = l;
        stats = s;
        return this;
    }

    /** Whether the call ended (the poll condition of a waiting thread: this object, no lambda per wait). */
    @Override
    public boolean getAsBoolean() {
        return isDone();
    }

    /**
     * A thread about to wait for the reply takes it off the completion queue itself until
     * {@code deadline} (completions for others, and the peer's calls, may then be
     * dispatched on it, as in callAndWait): under busy-poll the poller thread's hand-off
     * (an unpark, a scheduler wake-up) was most of a future call's extra time.
     */
    private void pollUntil(long deadline) {
        Link l = link;
        if (l == null || isDone()) {
            return;
        }
        l.blockingCallStarts();
        try {
            l.pollOnCaller(this, deadline);
        } finally {
            l.blockingCallEnds();
        }
        if (isDone() && !isCompletedExceptionally()) {
            (deliveredBy == Thread.currentThread() ? stats.repliesTakenByCaller : stats.repliesHandedOff).increment();
        }
    }

    /** A deadline no wait reaches (2^62 ns, 146 years), with no overflow in deadline - now. */
    private static long noDeadline() {
        return System.nanoTime() + (1L << 62);
    }

    @Override
    public ReceivedMessage get() throws InterruptedException, ExecutionException {
        pollUntil(noDeadline());
        return super.get();
    }

    @Override
    public ReceivedMessage get(long timeout, TimeUnit unit)
            throws InterruptedException, ExecutionException, TimeoutException {
        pollUntil(System.nanoTime() + Math.min(unit.toNanos(timeout), 1L << 62));
        return super.get(timeout, unit);
    }

    @Override
    public ReceivedMessage join() {
        pollUntil(noDeadline());
        return super.join();
    }

    /**
     * callAndWait's wait: the caller polls {@code link} for its own reply until
     * {@code deadline} (then {@link CallTimeoutException}, the call abandoned), counting
     * whether the reply was its own or handed off by the poller thread.
     */
    public static ReceivedMessage await(CompletableFuture<ReceivedMessage> f, Link link, int xid, long deadline,
            long timeoutNanos, String name, StatsCounters stats) throws InterruptedException {
        try {
            if (!f.isDone()) {
                link.pollOnCaller(f::isDone, deadline); // false: the poller thread completes f
            }
            long left = Math.max(0, deadline - System.nanoTime());
            // a CallFuture's own get would poll (and count) again: the wait above did both
            ReceivedMessage reply = f instanceof CallFuture c ? c.getPolled(left) : f.get(left, TimeUnit.NANOSECONDS);
            boolean own = !(f instanceof CallFuture c) || c.deliveredBy == Thread.currentThread();
            (own ? stats.repliesTakenByCaller : stats.repliesHandedOff).increment();
            return reply;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new RpcRdmaException("call failed", e.getCause());
        } catch (TimeoutException e) {
            CallTimeoutException t = new CallTimeoutException(name, xid, TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
            if (!f.completeExceptionally(t)) {
                return FutureShapes.await(f); // it ended meanwhile: take its outcome
            }
            throw t;
        } catch (InterruptedException e) {
            f.cancel(false);
            throw e;
        }
    }

    /** The outcome within {@code nanos}, without polling the link (the caller's wait polled it). */
    private ReceivedMessage getPolled(long nanos) throws InterruptedException, ExecutionException, TimeoutException {
        return super.get(nanos, TimeUnit.NANOSECONDS);
    }

    /** The request while it is this call (tests read what it exposed). */
    public CallRequest request() {
        return request;
    }

    // ---- the transport's side ----

    @Override
    public boolean inline(CallRequest r, ConnectionEngine conn, int slot, MemorySegment view) {
        return message(r, ApiBridge.access().message(view, conn, slot, -1));
    }

    @Override
    public boolean message(CallRequest r, ReceivedMessage reply) {
        deliveredBy = Thread.currentThread();
        boolean done = super.complete(reply);
        if (done && r.exposure() == null) {
            r.recycle(); // a chunked call's request stays with its future (what it offered can be read)
        }
        return done;
    }

    @Override
    public void failed(CallRequest r, Throwable t) {
        super.completeExceptionally(t);
        if (r.exposure() == null) {
            r.recycle();
        }
    }

    @Override
    public void abandoned(CallRequest r, Throwable cause) {
        super.completeExceptionally(cause);
    }

    // ---- completed by someone other than the transport: the call is abandoned ----

    @Override
    public boolean complete(ReceivedMessage value) {
        boolean done = super.complete(value);
        if (done) {
            request.abandonedByCaller(generation, "completed by caller");
        }
        return done;
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        boolean done = super.completeExceptionally(ex);
        if (done) {
            request.abandonedByCaller(generation, ex instanceof CallTimeoutException ? "timeout"
                    : ex.getClass().getSimpleName());
        }
        return done;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean done = super.cancel(mayInterruptIfRunning);
        if (done) {
            request.abandonedByCaller(generation, "cancelled");
        }
        return done;
    }

    @Override
    public String toString() {
        return "call " + super.toString();
    }
}
