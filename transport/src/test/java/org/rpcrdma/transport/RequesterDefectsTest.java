package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;
import static org.rpcrdma.transport.CoreDefectsTest.acceptedReply;
import static org.rpcrdma.transport.CoreDefectsTest.await;
import static org.rpcrdma.transport.CoreDefectsTest.echoOrHold;
import static org.rpcrdma.transport.CoreDefectsTest.failureOf;
import static org.rpcrdma.transport.CoreDefectsTest.outcome;
import static org.rpcrdma.transport.CoreDefectsTest.rdmaMsg;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.transport.CoreDefectsTest.FakePeer;
import org.rpcrdma.transport.rpc.CallSweep;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * The requester's side of a call, under a careless caller or a peer that uses what the
 * RFCs allow: call memory the transport cannot read later, credit reductions, abandoned
 * calls, continuations that block, timeouts of 0 and below, replies that echo a write list.
 * Every wait is bounded, so a hang fails in seconds.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RequesterDefectsTest {
    /** Inline 1 KiB, 4 credits each way, no backchannel. */
    private static final RpcRdmaOptions FOUR_CREDITS = RpcRdmaOptions.builder().inlineThreshold(1024)
            .credits(4).backwardCredits(0).build();

    /** Answers the oldest held call once one is held (on a thread of its own). */
    private static void answerWhenHeld(ConcurrentLinkedQueue<IncomingCall> held, long afterMillis) {
        Thread.ofPlatform().daemon().start(() -> {
            if (await(() -> !held.isEmpty(), 10_000)) {
                try {
                    Thread.sleep(afterMillis);
                } catch (InterruptedException e) {
                    return;
                }
                echo().handle(held.poll());
            }
        });
    }

    // ---------------------------------------------------------------- call memory

    /**
     * A call from a confined arena that waits for a credit is sent later by the thread that
     * delivered the freeing reply: the call and the one whose reply freed the credit both
     * complete, and the connection stays up.
     */
    @Test
    void aConfinedCallThatWaitsForACreditIsSentAndAnswered() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(FOUR_CREDITS, call -> { })) {
            ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
            AtomicInteger hold = new AtomicInteger(1);
            p.server().engine().handler(echoOrHold(hold, held));
            // a new connection's window is 1: the second call waits for the first one's reply
            CompletableFuture<ReceivedMessage> first = p.client().call(callMsg(1, 1, new byte[4]));
            assertTrue(await(() -> held.size() == 1, 5000), "the first call reached the server");
            CompletableFuture<ReceivedMessage> second;
            try (Arena confined = Arena.ofConfined()) {
                MemorySegment m = confined.allocate(44);
                m.copyFrom(callMsg(2, 1, new byte[] {7, 7, 7, 7}));
                second = p.client().call(m);
                assertEquals(1, p.client().waitingCalls(), "the confined call waits for a credit");
            } // closed: the transport kept what it needs
            hold.set(0);
            echo().handle(held.poll());
            assertEquals("value", outcome(first, 5000), "the call whose reply freed the credit");
            ReceivedMessage r = second.get(5, TimeUnit.SECONDS);
            assertArrayEquals(new byte[] {7, 7, 7, 7}, results(r), "the confined call, sent by the reply's thread");
            assertTrue(p.settle());
            assertTrue(p.client().isOpen(), "connection still open");
            assertEquals(0, p.client().outstandingCalls(), "XID table empty");
            assertEquals(0, p.client().heldReceives(), "no receive buffer held");
        }
    }

    /**
     * A call whose shared arena the caller closed before it could be sent fails alone, with
     * an error that says so; the connection and the call whose reply let it go are unharmed.
     */
    @Test
    void aCallWhoseArenaWasClosedBeforeItsSendFailsAloneAndTheConnectionSurvives() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(FOUR_CREDITS, call -> { })) {
            ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
            AtomicInteger hold = new AtomicInteger(1);
            p.server().engine().handler(echoOrHold(hold, held));
            CompletableFuture<ReceivedMessage> first = p.client().call(callMsg(1, 1, new byte[4]));
            assertTrue(await(() -> held.size() == 1, 5000), "the first call reached the server");
            Arena shared = Arena.ofShared();
            MemorySegment m = shared.allocate(44);
            m.copyFrom(callMsg(2, 1, new byte[4]));
            CompletableFuture<ReceivedMessage> second = p.client().call(m);
            shared.close(); // against the contract: the call is not sent yet
            hold.set(0);
            echo().handle(held.poll());
            assertEquals("value", outcome(first, 5000), "the call whose reply freed the credit");
            Throwable t = failureOf(second, 5000);
            assertInstanceOf(IllegalStateException.class, t, "the closed call's own error: " + t);
            assertTrue(t.getMessage().contains("0x2"), t.getMessage());
            assertTrue(p.settle());
            assertTrue(p.client().isOpen(), "connection still open");
            assertEquals("value", outcome(p.client().call(callMsg(3, 1, new byte[4])), 5000), "a later call");
            assertEquals(0, p.client().outstandingCalls(), "XID table empty");
            assertEquals(0, p.client().heldReceives(), "no receive buffer held");
        }
    }

    // ---------------------------------------------------------------- credits and abandoned calls

    /**
     * Window 8, four calls out; a reply grants 1 (RFC 8166 §3.3 allows it); one call is
     * cancelled. The other two calls are still answered: the connection is not reset.
     */
    @Test
    void aCreditReductionAndOneCancelledCallKeepTheConnection() throws Exception {
        FakePeer peer = new FakePeer(8, 0);
        Connection c = peer.conn;
        CompletableFuture<ReceivedMessage> warm = c.call(callMsg(1, 1, new byte[4]));
        peer.deliver(rdmaMsg(1, 8, acceptedReply(1, OncRpc.SUCCESS, 0)));
        assertEquals("value", outcome(warm, 1000));
        assertEquals(8, c.ownCallWindow());
        List<CompletableFuture<ReceivedMessage>> fs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            fs.add(c.call(callMsg(10 + i, 1, new byte[4])));
        }
        assertEquals(4, c.outstandingCalls(), "four calls sent");
        peer.deliver(rdmaMsg(10, 1, acceptedReply(10, OncRpc.SUCCESS, 0))); // the grant drops to 1
        assertEquals("value", outcome(fs.get(0), 1000));
        assertEquals(1, c.ownCallWindow());
        fs.get(1).cancel(false);
        peer.deliver(rdmaMsg(12, 1, acceptedReply(12, OncRpc.SUCCESS, 0)));
        peer.deliver(rdmaMsg(13, 1, acceptedReply(13, OncRpc.SUCCESS, 0)));
        assertEquals("value", outcome(fs.get(2), 1000), "call 12 after the cancel");
        assertEquals("value", outcome(fs.get(3), 1000), "call 13 after the cancel");
        assertTrue(c.isOpen(), "connection kept");
        peer.deliver(rdmaMsg(11, 1, acceptedReply(11, OncRpc.SUCCESS, 0))); // the cancelled call's late reply
        assertEquals(0, c.stats().abandonedWindowResets(), "no reset");
        assertEquals(1, c.stats().lateReplies(), "the late reply was dropped");
        assertEquals(0, c.outstandingCalls(), "XID table empty");
        assertEquals(0, c.abandonedCalls(), "no abandoned call left");
        assertEquals(0, c.heldReceives(), "no receive buffer held");
    }

    /**
     * A new connection's window is 1: calls that are cancelled or time out while the server
     * holds them, each answered late, do not reset the connection, and a normal call after
     * 60 of them is answered.
     */
    @Test
    void abandonedCallsOnAWindowOfOneAnsweredLateKeepTheConnection() throws Exception {
        FakePeer peer = new FakePeer(8, 0);
        Connection c = peer.conn;
        for (int i = 0; i < 60; i++) {
            int xid = 100 + i;
            CompletableFuture<ReceivedMessage> f = c.call(callMsg(xid, 1, new byte[4]));
            assertEquals(1, c.outstandingCalls(), "round " + i + ": the call was sent");
            if (i % 2 == 0) {
                f.cancel(false);
            } else {
                f.orTimeout(5, TimeUnit.MILLISECONDS);
                assertTrue(await(f::isDone, 5000));
            }
            peer.deliver(rdmaMsg(xid, 1, acceptedReply(xid, OncRpc.SUCCESS, 0))); // the late answer
            assertTrue(c.isOpen(), "round " + i + ": connection kept (resets: "
                    + c.stats().abandonedWindowResets() + ")");
        }
        CompletableFuture<ReceivedMessage> normal = c.call(callMsg(999, 1, new byte[4]));
        peer.deliver(rdmaMsg(999, 1, acceptedReply(999, OncRpc.SUCCESS, 0)));
        assertEquals("value", outcome(normal, 1000), "a normal call after 60 abandoned ones");
        assertEquals(0, c.stats().abandonedWindowResets(), "no reset");
        assertEquals(60, c.stats().lateReplies());
        assertEquals(0, c.outstandingCalls(), "XID table empty");
        assertEquals(0, c.abandonedCalls());
        assertEquals(0, c.heldReceives(), "no receive buffer held");
    }

    /**
     * A call still within its timeout that never gets a reply, with no reply to anything
     * else either (a Send the device never delivered, its QP in RTS: Soft-RoCE's requester
     * can stall so), declares the connection dead after the silence period, as xprtrdma
     * does on an RPC timeout: the call fails with the connection lost (a client sends calls
     * made with retry again, same XID, on its next connection), not at its own later timeout.
     * The period is the option's ({@code silenceTimeoutMillis}), short here.
     */
    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void callsLeftWithoutAnyReplyForTheSilencePeriodLoseTheConnection() throws Exception {
        long silence = 1500;
        FakePeer peer = new FakePeer(8, 0, silence);
        Connection c = peer.conn;
        long t0 = System.nanoTime();
        CompletableFuture<ReceivedMessage> f = c.call(callMsg(1, 1, new byte[4]),
                CallOptions.timeout(150, TimeUnit.SECONDS).withRetry(true));
        assertEquals(1, c.outstandingCalls(), "the call was sent");
        Throwable t = failureOf(f, silence + 30_000);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertInstanceOf(ConnectionLostException.class, t, "the call fails with the connection, after " + ms + " ms: " + t);
        assertTrue(t.getMessage().contains("no reply to any of our calls for " + silence + " ms"), t.getMessage());
        assertTrue(ms >= silence, "declared dead after " + ms + " ms, not before the silence period");
        assertTrue(!c.isOpen(), "the connection is lost");
        assertEquals(0, c.outstandingCalls(), "XID table empty");
        assertEquals(0, c.heldReceives(), "no receive buffer held");
    }

    /**
     * The reset is still there for a peer that stopped answering: every call out abandoned,
     * no credit free, no reply for the stall period. The call waiting behind them fails
     * saying so, not before the period passed.
     */
    @Test
    void aSilentPeerHoldingEveryCreditForAbandonedCallsIsResetAfterTheStallPeriod() throws Exception {
        FakePeer peer = new FakePeer(8, 0);
        Connection c = peer.conn;
        CompletableFuture<ReceivedMessage> abandoned = c.call(callMsg(1, 1, new byte[4]));
        CompletableFuture<ReceivedMessage> behind = c.call(callMsg(2, 1, new byte[4]));
        assertEquals(1, c.waitingCalls(), "window 1: the second call waits");
        long t0 = System.nanoTime();
        abandoned.cancel(false);
        assertTrue(c.isOpen(), "not reset at the cancel");
        Throwable t = failureOf(behind, 10_000);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertInstanceOf(ConnectionLostException.class, t, "the waiting call fails with the reset: " + t);
        assertTrue(t.getMessage().contains("no reply came for " + CallSweep.STALL_MILLIS + " ms"), t.getMessage());
        assertTrue(ms >= CallSweep.STALL_MILLIS, "reset after " + ms + " ms, not before the stall period");
        assertTrue(!c.isOpen());
        assertEquals(1, c.stats().abandonedWindowResets());
        assertEquals(0, c.outstandingCalls(), "XID table emptied by the reset");
    }

    // ---------------------------------------------------------------- timeouts

    /**
     * A continuation that blocks on one connection's timed-out call does not delay the
     * timeout of an unrelated call on another connection.
     */
    @Test
    void aBlockingContinuationDoesNotDelayOtherConnectionsTimeouts() throws Exception {
        try (InMemoryPair a = InMemoryPair.open(FOUR_CREDITS, call -> { });
                InMemoryPair b = InMemoryPair.open(FOUR_CREDITS, call -> { })) {
            ConcurrentLinkedQueue<IncomingCall> heldA = new ConcurrentLinkedQueue<>();
            ConcurrentLinkedQueue<IncomingCall> heldB = new ConcurrentLinkedQueue<>();
            a.server().engine().handler(heldA::add);
            b.server().engine().handler(heldB::add);
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch blocking = new CountDownLatch(1);
            a.client().call(callMsg(1, 1, new byte[4]),
                    CallOptions.timeout(50, TimeUnit.MILLISECONDS)).whenComplete((r, t) -> {
                blocking.countDown();
                try {
                    release.await(20, TimeUnit.SECONDS); // a user's continuation that blocks
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            try {
                assertTrue(blocking.await(5, TimeUnit.SECONDS), "the first call timed out");
                long t0 = System.nanoTime();
                CompletableFuture<ReceivedMessage> other = b.client().call(callMsg(2, 1, new byte[4]),
                        CallOptions.timeout(200, TimeUnit.MILLISECONDS));
                Throwable t = failureOf(other, 3000);
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                assertInstanceOf(CallTimeoutException.class, t, "the 200 ms call timed out within 3 s (took "
                        + ms + " ms, outcome " + (t == null ? outcome(other, 0) : t) + ")");
            } finally {
                release.countDown();
            }
        }
    }

    /** A continuation that waits for another timed call (join) gets that call's timeout. */
    @Test
    void aContinuationThatJoinsATimedCallSeesItTimeOut() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(FOUR_CREDITS, call -> { })) {
            ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
            p.server().engine().handler(held::add);
            AtomicReference<Throwable> joined = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            p.client().call(callMsg(1, 1, new byte[4]),
                    CallOptions.timeout(50, TimeUnit.MILLISECONDS)).whenComplete((r, t) -> {
                try {
                    p.client().call(callMsg(2, 1, new byte[4]), CallOptions.timeout(100, TimeUnit.MILLISECONDS)).join();
                } catch (RuntimeException e) {
                    joined.set(e.getCause());
                }
                done.countDown();
            });
            assertTrue(done.await(5, TimeUnit.SECONDS), "the continuation's own call timed out within 5 s");
            assertInstanceOf(CallTimeoutException.class, joined.get());
        }
    }

    /** Timeout 0 means no timeout for every call shape: a reply 300 ms later is taken. */
    @Test
    void aTimeoutOfZeroMeansNoneForEveryCallShape() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(FOUR_CREDITS, call -> { })) {
            ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
            p.server().engine().handler(held::add);
            answerWhenHeld(held, 300);
            ReceivedMessage m = p.client().callAndWait(callMsg(1, 1, new byte[] {1, 2, 3, 4}),
                    CallOptions.timeout(0, TimeUnit.SECONDS));
            assertArrayEquals(new byte[] {1, 2, 3, 4}, results(m), "callAndWait with timeout 0");
            answerWhenHeld(held, 300);
            byte[] read = p.client().callAndRead(callMsg(2, 1, new byte[] {5, 6, 7, 8}),
                    CallOptions.timeout(0, TimeUnit.SECONDS),
                    r -> r.asSlice(24).toArray(ValueLayout.JAVA_BYTE));
            assertArrayEquals(new byte[] {5, 6, 7, 8}, read, "callAndRead with timeout 0");
            answerWhenHeld(held, 300);
            assertEquals("value", outcome(p.client().call(callMsg(3, 1, new byte[4]),
                    CallOptions.timeout(0, TimeUnit.SECONDS)), 5000),
                    "call with timeout 0");
            assertEquals(0, p.client().stats().callTimeouts());
            assertTrue(p.settle());
            assertEquals(0, p.client().outstandingCalls());
            assertEquals(0, p.client().heldReceives());
        }
    }

    /** A negative timeout is refused by every call shape, naming the value; nothing is sent. */
    @Test
    void aNegativeTimeoutIsRefusedByEveryCallShape() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(FOUR_CREDITS, call -> { })) {
            p.server().engine().handler(echo());
            MemorySegment call = callMsg(1, 1, new byte[4]);
            List<Throwable> refused = new ArrayList<>();
            refused.add(assertThrows(IllegalArgumentException.class,
                    () -> p.client().call(call, CallOptions.timeout(-5, TimeUnit.SECONDS))));
            refused.add(assertThrows(IllegalArgumentException.class,
                    () -> p.client().callAndWait(call, CallOptions.timeout(-5, TimeUnit.SECONDS))));
            refused.add(assertThrows(IllegalArgumentException.class,
                    () -> p.client().callAndWait(call, CallOptions.DEFAULT.withTimeout(-5, TimeUnit.SECONDS))));
            refused.add(assertThrows(IllegalArgumentException.class,
                    () -> p.client().callAndRead(call, CallOptions.timeout(-5, TimeUnit.SECONDS), r -> 0)));
            for (Throwable t : refused) {
                assertTrue(t.getMessage().contains("-5"), "names the value: " + t.getMessage());
            }
            assertEquals(0, p.client().stats().callsSent(), "nothing sent");
            assertEquals(0, p.client().outstandingCalls());
        }
    }

    // ---------------------------------------------------------------- reply-size prediction

    /**
     * RFC 8166 §4.1: the inline threshold covers the whole header. A reply that echoes a
     * write list has a longer header (52 bytes with one one-segment chunk, not 28): a call
     * allowing a reply that fits only with the short header offers a Reply chunk, and the
     * reply arrives through it.
     */
    @Test
    void aReplyThatMustEchoAWriteListGetsAReplyChunkWhenItsHeaderCrowdsItOut() {
        int replyBytes = 980; // 28 + 980 <= 1024 < 52 + 980
        byte[] payload = ChunkTest.pattern(100, 3);
        CallHandler h = call -> {
            MemorySegment r = MemorySegment.ofArray(new byte[replyBytes]);
            r.copyFrom(acceptedReply(call.xid(), OncRpc.SUCCESS, 0));
            Xdr.putInt(r, 24, payload.length);
            call.reply(r, MemorySegment.ofArray(payload));
        };
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.builder().inlineThreshold(1024).build(), h)) {
            MemorySegment receptacle = MemorySegment.ofArray(new byte[4096]);
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0x21, 1, new byte[4]),
                    CallOptions.DEFAULT.withMaxReplyBytes(replyBytes).withReceptacle(receptacle));
            assertTrue(p.settle());
            assertTrue(f.isDone() && !f.isCompletedExceptionally(), () -> "the reply arrives (got "
                    + f.handle((r, t) -> t).join() + ")");
            ReceivedMessage m = f.join();
            assertEquals(replyBytes, m.bytes().byteSize());
            assertEquals(payload.length, m.placedBytes());
            m.release();
            assertArrayEquals(payload, receptacle.asSlice(0, payload.length).toArray(ValueLayout.JAVA_BYTE));
            assertEquals(1, p.client().stats().repliesThroughReplyChunk(), "through the Reply chunk");
            assertEquals(0, p.server().stats().errChunkSent());
            assertEquals(0, p.exposedCount(), "every rkey withdrawn");
            assertEquals(0, p.client().outstandingCalls());
        }
    }

    // ---------------------------------------------------------------- settings of a new connection

    /**
     * A call parked across a reconnect meets the new connection's thresholds (RFC 8797 §3:
     * they may differ on every connection): sent inline under 4 KiB before, it goes as a long
     * call with a Reply chunk to a server that now takes 1 KiB. The hand-over is the one a
     * reconnecting client does (the lost connection's orphans resubmitted on the new one).
     */
    @Test
    void aCallParkedAcrossAReconnectGoesAsALongCallWhenTheNewThresholdIsSmaller() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        try (InMemoryPair before = InMemoryPair.open(RpcRdmaOptions.builder().inlineThreshold(4096).build(), held::add);
                InMemoryPair after = InMemoryPair.open(RpcRdmaOptions.builder().inlineThreshold(1024).build(), echo())) {
            before.client().engine().orphanSink(orphans -> orphans.forEach(after.client().engine()::submit));
            CompletableFuture<ReceivedMessage> first = before.client().call(callMsg(1, 1, new byte[4]));
            byte[] args = ChunkTest.pattern(2000, 9);
            // window 1 on a new connection: this call waits, fitting inline both ways at 4 KiB
            CompletableFuture<ReceivedMessage> parked = before.client().call(callMsg(2, 1, args),
                    CallOptions.DEFAULT.withMaxReplyBytes(4000));
            assertEquals(1, before.client().waitingCalls());
            assertEquals(0, before.client().stats().longCallsSent());

            before.client().engine().onLinkLost(new RpcRdmaException("test: the server restarted"));

            assertInstanceOf(ConnectionLostException.class, failureOf(first, 5000), "sent without retry: lost");
            ReceivedMessage m = parked.get(5, TimeUnit.SECONDS);
            assertArrayEquals(args, results(m), "the parked call answered on the new connection");
            assertEquals(1, after.client().stats().longCallsSent(), "sent as a long call (RDMA_NOMSG)");
            assertEquals(1, after.server().stats().replyChunksUsed(), "answered through a Reply chunk");
            assertEquals(1, after.client().stats().repliesThroughReplyChunk());
            assertEquals(0, after.exposedCount(), "every rkey withdrawn");
            assertEquals(0, after.client().outstandingCalls());
            assertEquals(0, after.client().heldReceives());
        }
    }
}
