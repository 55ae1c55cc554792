package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * {@link ReusableCallBehaviour} over the in-memory pair, and what only it can show: the
 * whole round trip runs on the calling thread (so the thread's allocation counter sees all
 * of it); and replies handed to a parked caller when the client's completion context is busy.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ReusableCallTest extends ReusableCallBehaviour {
    @Override
    LinkFixture link() {
        return LinkFixture.IN_MEMORY;
    }

    /**
     * Replies delivered by the link's own completion thread are handed to the parked caller:
     * the hand-off path. The client's completion context is busy (its thread runs a backward
     * call's handler that waits a little), so the caller cannot take its reply itself; the
     * completion thread delivers it once the handler returns.
     */
    @Test
    void aReplyDeliveredByTheCompletionThreadIsHandedToTheParkedCaller() throws Exception {
        RpcRdmaOptions o = RpcRdmaOptions.builder().inlineThreshold(1024).credits(4).backwardCredits(1).build();
        ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
        try (InMemoryPair p = InMemoryPair.open(o, echo())) {
            BlockingQueue<CountDownLatch> entered = new LinkedBlockingQueue<>();
            p.client().enableBackchannel(call -> {
                CountDownLatch release = new CountDownLatch(1);
                entered.add(release);
                try {
                    release.await(5, TimeUnit.SECONDS); // holds the client's completion context
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                echo().handle(call);
            }).get(5, TimeUnit.SECONDS);
            for (int i = 0; i < 5; i++) {
                CompletableFuture<ReceivedMessage> backward = p.server().call(callMsg(100 + i, 1, new byte[4]));
                CountDownLatch release = entered.poll(5, TimeUnit.SECONDS);
                assertTrue(release != null, "the backward call's handler runs");
                later.schedule(release::countDown, 50, TimeUnit.MILLISECONDS);
                byte[] got = p.client().callAndRead(callMsg(10 + i, 1, ARGS),
                        CallOptions.timeout(5, TimeUnit.SECONDS), ReusableCallBehaviour::resultBytes);
                assertArrayEquals(ARGS, got);
                assertEquals(1, p.client().engine().freeCallSlots(), "one slot, back in the pool after each call");
                backward.get(5, TimeUnit.SECONDS).release();
            }
            assertTrue(p.settle());
            assertEquals(0, p.client().heldReceives(), "every reply's receive buffer went back after its reader");
            assertEquals(5, p.client().stats().repliesHandedOff(), "the completion thread took the replies");
        } finally {
            later.shutdownNow();
        }
    }

    // ---------------------------------------------------------------- allocation

    /**
     * The shapes allocate nothing per call on the inline path. Measured with
     * the thread's allocation counter over 20,000 calls after a warm-up, on the in-memory
     * pair (the whole round trip runs on this thread: a blocking caller polls the wire, and
     * the callback's is settled); the bench's {@code -prof gc} shows the
     * same. The bound, 1 byte per call, leaves room for the JIT's own bookkeeping only: one
     * object per call (16 bytes at least) fails it.
     */
    @Test
    void callAndReadCallbacksAndImmediateHandlersAllocateNothingPerCall() throws Exception {
        MemorySegment reply = MemorySegment.ofArray(new byte[24]);
        CallHandler h = CallHandler.immediate(c -> {
            Xdr.putInt(reply, 0, c.xid());
            Xdr.putInt(reply, 4, OncRpc.REPLY);
            c.reply(reply);
        });
        try (InMemoryPair pair = InMemoryPair.open(RpcRdmaOptions.defaults(), h)) {
            MemorySegment call = callMsg(0, 1, ARGS);
            long[] sum = new long[1];
            ReplyCallback cb = new ReplyCallback() {
                @Override
                public void onReply(MemorySegment r) {
                    sum[0] += r.byteSize();
                }

                @Override
                public void onFailure(Throwable cause) {
                    throw new AssertionError(cause);
                }
            };
            ReplyReader<Object> reader = r -> null;
            CallOptions fiveSeconds = CallOptions.timeout(5, TimeUnit.SECONDS); // made once, as a caller would
            int xid = 0;
            long before = 0;
            int measured = 20_000;
            for (int round = 0; round < 2; round++) { // round 0 warms up
                before = ThreadAllocation.bytes();
                for (int i = 0; i < measured; i++) {
                    Xdr.putInt(call, 0, ++xid);
                    pair.client().callAndRead(call, fiveSeconds, reader);
                    Xdr.putInt(call, 0, ++xid);
                    pair.client().call(call, cb);
                    pair.settle(); // its round trip run here too: the callback needs no waiter
                }
            }
            long perCall = (ThreadAllocation.bytes() - before) / (2L * measured);
            assertEquals(2L * measured * 24, sum[0], "every callback call was answered");
            assertTrue(perCall < 1, "allocated " + perCall + " bytes per call");
        }
    }
}
