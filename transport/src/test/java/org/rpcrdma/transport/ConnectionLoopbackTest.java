package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaEncoder;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/** The whole protocol engine, both directions, over an in-memory link (no verbs needed). */
class ConnectionLoopbackTest {

    static MemorySegment callMsg(int xid, int prog, byte[] args) {
        MemorySegment m = MemorySegment.ofArray(new byte[40 + args.length]);
        int[] w = {xid, OncRpc.CALL, OncRpc.RPC_VERSION, prog, 1, 0, 0, 0, 0, 0};
        for (int i = 0; i < w.length; i++) {
            Xdr.putInt(m, i * 4L, w[i]);
        }
        MemorySegment.copy(MemorySegment.ofArray(args), 0, m, 40, args.length);
        return m;
    }

    /** Echo: accepted SUCCESS reply carrying the call's argument bytes. */
    static CallHandler echo() {
        return call -> {
            MemorySegment in = call.message().bytes();
            long argLen = in.byteSize() - 40;
            MemorySegment r = MemorySegment.ofArray(new byte[(int) (24 + argLen)]);
            int[] w = {call.xid(), OncRpc.REPLY, OncRpc.MSG_ACCEPTED, OncRpc.AUTH_NONE, 0, OncRpc.SUCCESS};
            for (int i = 0; i < w.length; i++) {
                Xdr.putInt(r, i * 4L, w[i]);
            }
            MemorySegment.copy(in, 40, r, 24, argLen);
            call.reply(r);
        };
    }

    static byte[] results(ReceivedMessage m) {
        try (m) {
            byte[] all = m.toByteArray();
            assertEquals(OncRpc.REPLY, Xdr.getInt(MemorySegment.ofArray(all), 4));
            return java.util.Arrays.copyOfRange(all, 24, all.length);
        }
    }

    /**
     * One side's options: 1 KiB inline, {@code credits} for forward calls, {@code
     * backwardCredits} granted for backward calls (0: no backchannel), receives posted in
     * batches of 4.
     */
    static RpcRdmaOptions opts(int credits, int backwardCredits) {
        return RpcRdmaOptions.builder().inlineThreshold(1024).credits(credits).backwardCredits(backwardCredits)
                .receiveBatch(4).build();
    }

    /** An in-memory pair with {@link #opts} on both sides, the server serving with {@code handler}. */
    static InMemoryPair pair(int credits, int backwardCredits, CallHandler handler) {
        return InMemoryPair.open(opts(credits, backwardCredits), handler);
    }

    @Test
    void forwardNullAndEcho() throws Exception {
        try (InMemoryPair p = pair(8, 0, echo())) {
            assertArrayEquals(new byte[0], results(p.client().call(callMsg(1, 100, new byte[0])).get(5, TimeUnit.SECONDS)));
            byte[] payload = "hello rdma".getBytes();
            assertArrayEquals(payload, results(p.client().callAndWait(callMsg(2, 100, payload),
                    CallOptions.timeout(5, TimeUnit.SECONDS))));
            assertEquals(8, p.client().ownCallWindow(), "server's grant applied to the forward account");
        }
    }

    @Test
    void backwardRefusedUntilEnabledThenWorks() throws Exception {
        try (InMemoryPair p = pair(8, 4, echo())) {
            assertThrows(BackchannelNotEnabledException.class, () -> p.server().call(callMsg(9, 200, new byte[0])));
            p.settle();
            assertEquals(0, p.client().stats().callsReceived(), "nothing was put on the wire");
            p.client().enableBackchannel(echo()).get(5, TimeUnit.SECONDS);
            byte[] payload = {1, 2, 3, 4};
            assertArrayEquals(payload, results(p.server().call(callMsg(9, 200, payload)).get(5, TimeUnit.SECONDS)));
            assertEquals(4, p.server().ownCallWindow(), "client's grant applied to the backward account");
        }
    }

    @Test
    void sameXidInFlightBothDirections() throws Exception {
        try (InMemoryPair p = pair(8, 4, echo())) {
            p.client().enableBackchannel(echo()).get(5, TimeUnit.SECONDS);
            p.server().call(callMsg(77, 1, new byte[] {9})).get(5, TimeUnit.SECONDS).release(); // window grows to 4
            // Replies are released as they arrive: a held message keeps its receive buffer.
            for (int i = 0; i < 200; i++) {
                int xid = 1000 + (i % 4); // the same XID is outstanding in both directions at once
                var f = p.client().call(callMsg(xid, 1, new byte[] {(byte) i, 'f', 0, 0}));
                var b = p.server().call(callMsg(xid, 1, new byte[] {(byte) i, 'b', 0, 0}));
                assertArrayEquals(new byte[] {(byte) i, 'f', 0, 0}, results(f.get(5, TimeUnit.SECONDS)));
                assertArrayEquals(new byte[] {(byte) i, 'b', 0, 0}, results(b.get(5, TimeUnit.SECONDS)));
            }
            assertEquals(0, p.client().stats().unmatchedForwardReplies());
            assertEquals(0, p.server().stats().unmatchedBackwardReplies());
        }
    }

    @Test
    void floodNeverExceedsGrantInEitherDirection() throws Exception {
        // Responders answer later, from another thread, so calls pile up.
        java.util.concurrent.ExecutorService later = java.util.concurrent.Executors.newFixedThreadPool(2);
        CallHandler slowEcho = c -> later.execute(() -> echo().handle(c));
        // the client asks for 32 credits, the server grants 5
        try (InMemoryPair p = InMemoryPair.open(opts(32, 3), opts(5, 3), slowEcho)) {
            p.client().enableBackchannel(slowEcho).get(5, TimeUnit.SECONDS);
            List<CompletableFuture<Void>> all = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                all.add(p.client().call(callMsg(i, 1, new byte[4])).thenAccept(ReceivedMessage::release));
                all.add(p.server().call(callMsg(i, 1, new byte[4])).thenAccept(ReceivedMessage::release));
            }
            for (var f : all) {
                f.get(10, TimeUnit.SECONDS);
            }
            later.shutdown();
            assertTrue(p.server().peerCallHighWater() <= 5, "forward: responder saw " + p.server().peerCallHighWater());
            assertTrue(p.client().peerCallHighWater() <= 3, "backward: responder saw " + p.client().peerCallHighWater());
            assertEquals(5, p.client().ownCallHighWater());
            assertTrue(p.client().stats().creditWaits() > 0);
            assertEquals(0, p.client().stats().creditViolations() + p.server().stats().creditViolations());
            assertTrue(p.client().postedReceives() >= 3 && p.server().postedReceives() >= 5);
            // no Send found the peer without a posted receive (that would end the connection, as RNR does)
            assertTrue(p.client().isOpen() && p.server().isOpen());
            assertEquals(0, p.client().stats().connectionsLost() + p.server().stats().connectionsLost());
        }
    }

    @Test
    void versionMismatchAnsweredWithErrVers() throws Exception {
        try (InMemoryPair p = pair(8, 2, echo())) {
            MemorySegment raw = MemorySegment.ofArray(new byte[28 + 40]);
            RpcRdmaEncoder.encodeInlineMsg(raw, 0, 5, 1);
            Xdr.putInt(raw, 4, 2); // rdma_vers 2
            MemorySegment.copy(callMsg(5, 1, new byte[0]), 0, raw, 28, 40);
            RawAccess.send(p.client(), raw); // returns once the answer it sets off has arrived
            assertEquals(1, p.server().stats().errVersSent(), p.server().stats() + " client open " + p.client().isOpen());
            assertEquals(1, p.client().stats().rdmaErrorsReceived());
            assertTrue(p.client().isOpen() && p.server().isOpen());
        }
    }

    @Test
    void rdmaErrorFailsTheCallWithNamedError() throws Exception {
        try (InMemoryPair p = pair(8, 0, c -> { })) { // never answers
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0x33, 1, new byte[0]));
            p.settle();
            MemorySegment err = MemorySegment.ofArray(new byte[20]);
            RpcRdmaEncoder.encodeErrChunk(err, 0, 0x33, 8);
            RawAccess.send(p.server(), err);
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
            RdmaErrorException r = assertInstanceOf(RdmaErrorException.class, e.getCause());
            assertEquals(RpcRdma.ERR_CHUNK, r.errorCode());
            assertTrue(r.getMessage().contains("ERR_CHUNK"));
        }
    }

    @Test
    void unmatchedReplyDroppedAndCounted() throws Exception {
        try (InMemoryPair p = pair(8, 2, echo())) { // backward credits keep receives posted
            MemorySegment raw = MemorySegment.ofArray(new byte[28 + 24]);
            RpcRdmaEncoder.encodeInlineMsg(raw, 0, 99, 8);
            int[] w = {99, OncRpc.REPLY, 0, 0, 0, 0};
            for (int i = 0; i < w.length; i++) {
                Xdr.putInt(raw, 28 + i * 4L, w[i]);
            }
            RawAccess.send(p.server(), raw);
            assertEquals(1, p.client().stats().unmatchedForwardReplies(), p.client().stats() + " client open " + p.client().isOpen());
            assertTrue(p.client().isOpen());
        }
    }

    @Test
    void creditViolatorIsDroppedOthersUnharmed() throws Exception {
        // the servers grant 2 credits; the bad one holds calls, so each one stays outstanding
        try (InMemoryPair bad = InMemoryPair.open(opts(8, 0), opts(2, 0), c -> { });
                InMemoryPair good = InMemoryPair.open(opts(8, 0), opts(2, 0), echo())) {
            for (int i = 0; i < 3; i++) { // a rogue client ignoring its 2 credits
                MemorySegment raw = MemorySegment.ofArray(new byte[28 + 40]);
                RpcRdmaEncoder.encodeInlineMsg(raw, 0, i, 8);
                MemorySegment.copy(callMsg(i, 1, new byte[0]), 0, raw, 28, 40);
                RawAccess.send(bad.client(), raw);
            }
            bad.settle();
            assertFalse(bad.server().isOpen());
            assertEquals(1, bad.server().stats().creditViolations());
            results(good.client().call(callMsg(1, 1, new byte[0])).get(5, TimeUnit.SECONDS));
        }
    }

    @Test
    void lossFailsPendingCallsWithConnectionLost() throws Exception {
        try (InMemoryPair p = pair(8, 0, c -> { })) {
            p.client().call(callMsg(1, 1, new byte[0]));
            p.settle();
            List<CompletableFuture<ReceivedMessage>> fs = new ArrayList<>();
            for (int i = 2; i < 10; i++) {
                fs.add(p.client().call(callMsg(i, 1, new byte[0])));
            }
            RawAccess.link(p.server()).disconnect(); // the server's QP goes to error
            for (var f : fs) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
                assertInstanceOf(ConnectionLostException.class, e.getCause());
                assertTrue(e.getCause().getMessage().contains("connection lost"));
            }
            assertEquals(0, p.client().postedReceives());
            assertFalse(p.client().isOpen());
            var after = p.client().call(callMsg(50, 1, new byte[0]));
            assertInstanceOf(ConnectionLostException.class,
                    assertThrows(ExecutionException.class, () -> after.get(1, TimeUnit.SECONDS)).getCause());
        }
    }

    @Test
    void heldRepliesHoldBackNewCallsInsteadOfDroppingTheConnection() throws Exception {
        try (InMemoryPair p = pair(4, 0, echo())) { // the client has 2 * 4 + 2 * 4 = 16 receive buffers
            List<ReceivedMessage> held = new ArrayList<>();
            CompletableFuture<ReceivedMessage> parked = null;
            for (int i = 0; i < 30 && parked == null; i++) {
                // credits are free here, so call() decides on this thread: sent, or held back
                CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(i, 1, new byte[4]));
                if (p.client().stats().receiveBufferWaits() > 0) {
                    parked = f;
                } else {
                    held.add(f.get(5, TimeUnit.SECONDS)); // never released
                }
            }
            assertEquals(16, held.size(), "every buffer held by a reply before a call waits");
            assertTrue(p.client().isOpen(), "no receive for the reply must hold the call back, not drop the connection");
            assertEquals(1, p.client().stats().receiveBufferWaits());
            assertFalse(parked.isDone());
            assertEquals(16, p.client().stats().callsSent(), "the waiting call was not sent");
            held.remove(0).release();
            assertArrayEquals(new byte[4], results(parked.get(5, TimeUnit.SECONDS)));
            held.forEach(ReceivedMessage::release);
            assertArrayEquals(new byte[4], results(p.client().call(callMsg(99, 1, new byte[4])).get(5, TimeUnit.SECONDS)));
        }
    }

    /** A call over both the inline threshold and the largest chunk (this link could send a smaller one by chunk). */
    @Test
    void oversizedCallFailsWithoutSending() {
        try (InMemoryPair p = InMemoryPair.open(opts(8, 0).toBuilder().maxChunkBytes(1024).build(), echo())) {
            var f = p.client().call(callMsg(1, 1, new byte[2000]));
            assertTrue(f.isCompletedExceptionally());
            assertEquals(0, p.client().stats().callsSent());
        }
    }

    @Test
    void receivedBytesAreAMemorySegmentUntilReleased() throws Exception {
        try (InMemoryPair p = pair(8, 0, echo())) {
            ReceivedMessage m = p.client().call(callMsg(3, 1, new byte[] {7, 7, 7, 7})).get(5, TimeUnit.SECONDS);
            assertTrue(m.bytes().isNative(), "reply is read in place from the registered receive buffer");
            assertEquals(7, m.bytes().get(ValueLayout.JAVA_BYTE, 24));
            m.release();
            assertThrows(IllegalStateException.class, m::bytes);
        }
    }

    @Test
    void perCallAndDefaultTimeoutsFailTheCallAndTheLateReplyIsReleased() throws Exception {
        List<IncomingCall> held = new java.util.concurrent.CopyOnWriteArrayList<>();
        CallHandler echoFirst = c -> {
            if (c.xid() == 0) {
                echo().handle(c);
            } else {
                held.add(c);
            }
        };
        try (InMemoryPair p = InMemoryPair.open(opts(8, 0).toBuilder().callTimeoutMillis(200).build(), echoFirst)) {
            // default timeout 200 ms
            // One answered call first: its grant opens the window to 8. (At the initial window of
            // 1, one abandoned call would hold every credit and reset the connection.)
            results(p.client().call(callMsg(0, 1, new byte[4])).get(5, TimeUnit.SECONDS));
            long t0 = System.nanoTime();
            var byDefault = p.client().call(callMsg(1, 1, new byte[4]));
            var own = p.client().call(callMsg(2, 1, new byte[4]), CallOptions.timeout(50, TimeUnit.MILLISECONDS));
            var none = p.client().call(callMsg(3, 1, new byte[4]), CallOptions.timeout(0, TimeUnit.MILLISECONDS));
            CallTimeoutException e = assertInstanceOf(CallTimeoutException.class,
                    assertThrows(ExecutionException.class, () -> own.get(5, TimeUnit.SECONDS)).getCause());
            assertEquals(2, e.xid());
            assertTrue(e.getMessage().contains("50 ms"), e.getMessage());
            assertInstanceOf(CallTimeoutException.class,
                    assertThrows(ExecutionException.class, () -> byDefault.get(5, TimeUnit.SECONDS)).getCause());
            assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(200), "the default is 200 ms");
            assertFalse(none.isDone(), "a call without a timeout waits");
            assertThrows(CallTimeoutException.class,
                    () -> p.client().callAndWait(callMsg(4, 1, new byte[4]),
                            CallOptions.timeout(50, TimeUnit.MILLISECONDS)));
            assertEquals(3, p.client().abandonedCalls(), "timed-out calls keep their credit until the reply");
            assertEquals(2, p.client().stats().callTimeouts(), "callAndWait's own wait is not the call's deadline");
            p.settle();
            for (IncomingCall c : held) {
                echo().handle(c); // the late replies
            }
            assertArrayEquals(new byte[4], results(none.get(5, TimeUnit.SECONDS)));
            p.settle();
            assertEquals(3, p.client().stats().lateReplies());
            assertEquals(0, p.client().abandonedCalls());
            assertEquals(0, p.client().outstandingCalls());
            assertEquals(0, p.client().heldReceives(), "late replies were released at once");
        }
    }
}
