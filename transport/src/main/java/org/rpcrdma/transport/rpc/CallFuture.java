package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
public final class CallFuture extends CompletableFuture<ReceivedMessage> implements Completion {
    private final CallRequest request;
    private final int generation;
    /**
     * The thread that delivered the reply (callAndWait counts whether it was the caller's
     * own): written before the future's completion and read after it was seen.
     */
    Thread deliveredBy;

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
            ReceivedMessage reply = f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
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
