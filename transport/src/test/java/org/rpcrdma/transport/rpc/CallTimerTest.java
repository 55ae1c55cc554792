package org.rpcrdma.transport.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.transport.CallOptions;
import org.rpcrdma.transport.CallTimeoutException;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.IncomingCall;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CallTimerTest {
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    /**
     * The tick is 1/16 of the finest interval watched, between 10 and 250 ms: a timeout is at
     * most two ticks late, 1/8 of it (20 ms under 160 ms), and calls that time out after
     * seconds wake the timer a few times a second, not 100.
     */
    @Test
    void theTickIsASixteenthOfTheIntervalWithinItsBounds() {
        assertEquals(10 * MS, CallTimer.tickFor(1 * MS), "a 1 ms timeout: the finest tick");
        assertEquals(10 * MS, CallTimer.tickFor(160 * MS), "160 ms: 10 ms");
        assertEquals(100 * MS, CallTimer.tickFor(1600 * MS), "1.6 s: 100 ms");
        assertEquals(125 * MS, CallTimer.tickFor(TimeUnit.MILLISECONDS.toNanos(CallSweep.STALL_MILLIS)), "the stall");
        assertEquals(250 * MS, CallTimer.tickFor(TimeUnit.SECONDS.toNanos(60)), "the 60 s default: the coarsest");
        assertEquals(250 * MS, CallTimer.tickFor(Long.MAX_VALUE), "nothing watched");
    }

    /**
     * A call that times out after a minute lets the tick go coarse; a call with a 50 ms
     * timeout made beside it gets the fine tick from its submit on (not from the next coarse
     * sweep, up to 250 ms later, which would make it that late), and times out on time,
     * never early.
     */
    @Test
    void aShortTimeoutBesideALongOneGetsTheFineTickAtOnce() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>(); // the server never answers
        RpcRdmaOptions o = RpcRdmaOptions.builder().inlineThreshold(1024).credits(4).backwardCredits(0).build();
        try (InMemoryPair p = InMemoryPair.open(o, held::add)) {
            CompletableFuture<ReceivedMessage> longOne = p.client().call(call(1), CallOptions.timeout(60, TimeUnit.SECONDS));
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (CallTimer.tickNanos() != 250 * MS && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            assertEquals(250 * MS, CallTimer.tickNanos(), "with only the 60 s call watched the tick went coarse");
            long t0 = System.nanoTime();
            CompletableFuture<ReceivedMessage> shortOne = p.client().call(call(2), CallOptions.timeout(50, TimeUnit.MILLISECONDS));
            assertEquals(10 * MS, CallTimer.tickNanos(), "the 50 ms call's submit took the fine tick");
            Throwable t = failureOf(shortOne);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertInstanceOf(CallTimeoutException.class, t, "the 50 ms call timed out (" + ms + " ms)");
            assertTrue(ms >= 50, "not early: " + ms + " ms");
            assertFalse(longOne.isDone(), "the 60 s call still waits");
        }
    }

    /** A NULL call of program 1 with XID {@code xid}. */
    private static MemorySegment call(int xid) {
        MemorySegment m = MemorySegment.ofArray(new byte[40]);
        int[] w = {xid, OncRpc.CALL, OncRpc.RPC_VERSION, 1, 1, 0, 0, 0, 0, 0};
        for (int i = 0; i < w.length; i++) {
            Xdr.putInt(m, i * 4L, w[i]);
        }
        return m;
    }

    private static Throwable failureOf(CompletableFuture<ReceivedMessage> f) throws Exception {
        try {
            f.get(10, TimeUnit.SECONDS).release();
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }
}
