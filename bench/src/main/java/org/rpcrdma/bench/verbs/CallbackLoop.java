package org.rpcrdma.bench.verbs;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.rpcrdma.transport.CallOptions;
import org.rpcrdma.transport.ReplyCallback;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.xdr.Xdr;

/**
 * The callback shape of the goal rounds ({@link Shape#CALLBACK}): each reply's callback
 * times its call and issues the next one, on the thread that took the completion, as an
 * asynchronous caller does (nobody waits between two calls); calls for {@code warmup} ns,
 * then times them for {@code measure} ns. The bench's thread only starts the loop and
 * waits for its end.
 */
final class CallbackLoop implements ReplyCallback {
    private final RpcRdmaClient client;
    private final MemorySegment call;
    private final CallOptions options;
    private final int expect;
    private final long warmup;
    private final long measure;
    private final Histogram histogram = new Histogram(3);
    private final CountDownLatch end = new CountDownLatch(1);
    private int xid;
    private long started;
    private long warmUntil;
    private long measureUntil;
    private volatile Throwable failure;

    CallbackLoop(RpcRdmaClient client, MemorySegment call, CallOptions options, int expect, long warmup, long measure,
            int firstXid) {
        this.client = client;
        this.call = call;
        this.options = options;
        this.expect = expect;
        this.warmup = warmup;
        this.measure = measure;
        this.xid = firstXid;
    }

    /** Runs the loop; its histogram, or what ended it. */
    Histogram run() throws Exception {
        long now = System.nanoTime();
        warmUntil = now + warmup;
        measureUntil = Long.MAX_VALUE; // set when the warm-up ends
        next(now);
        // a call times out after its own 10 s; the loop as a whole gets its time and a margin
        if (!end.await(TimeUnit.NANOSECONDS.toSeconds(warmup + measure) + 30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the callback loop did not end");
        }
        Throwable t = failure;
        if (t != null) {
            throw t instanceof Exception e ? e : new IllegalStateException(t);
        }
        return histogram;
    }

    /** The xid the next call would have: the bench's calls go on from there. */
    int xid() {
        return xid;
    }

    private void next(long now) {
        Xdr.putInt(call, 0, ++xid);
        started = now;
        client.call(call, options, this);
    }

    @Override
    public void onReply(MemorySegment reply) {
        long t = System.nanoTime();
        if (reply.byteSize() != expect) {
            onFailure(new IllegalStateException("reply not of the " + expect + " bytes expected"));
            return;
        }
        if (measureUntil != Long.MAX_VALUE) {
            histogram.recordValue(t - started);
            if (t >= measureUntil) {
                end.countDown();
                return;
            }
        } else if (t >= warmUntil) {
            measureUntil = t + measure;
        }
        try {
            next(System.nanoTime());
        } catch (RuntimeException e) {
            onFailure(e);
        }
    }

    @Override
    public void onFailure(Throwable cause) {
        failure = cause;
        end.countDown();
    }
}
