package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;

import java.lang.foreign.MemorySegment;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * Remote invalidation over {@link InMemoryPair} (RFC 8797 §7): a responder of ours answers
 * with Send with Invalidate of one of the call's rkeys when R was negotiated; the requester
 * then posts no invalidation of its own for it (never twice), and withdraws every other
 * rkey itself. With the option off nothing is sent that way.
 */
class RemoteInvalidationTest {
    /** Answers every call with an empty accepted reply (it fits inline). */
    static final CallHandler SMALL_REPLY = call -> {
        MemorySegment r = MemorySegment.ofArray(new byte[24]);
        Xdr.putInt(r, 0, call.xid());
        Xdr.putInt(r, 4, OncRpc.REPLY);
        call.reply(r);
    };

    @ParameterizedTest(name = "remote invalidation {0}")
    @ValueSource(booleans = {true, false})
    void oneRkeyOfACallIsInvalidatedByTheRespondersSendTheOthersByTheRequester(boolean on) {
        RpcRdmaOptions o = RpcRdmaOptions.builder().inlineThreshold(1024).remoteInvalidation(on).build();
        try (InMemoryPair p = InMemoryPair.open(o, SMALL_REPLY)) {
            assertEquals(on, p.client().remoteInvalidation());
            Supplier<RpcRdmaStats> cs = p.client()::stats;
            Supplier<RpcRdmaStats> ss = p.server()::stats;
            // a long call (one rkey: its Position-Zero Read chunk), a reply that fits inline
            p.client().call(callMsg(1, 1, new byte[3000]), CallOptions.DEFAULT).join().release();
            assertEquals(on ? 1 : 0, ss.get().sendsWithInvalidate());
            assertEquals(on ? 1 : 0, cs.get().remoteInvalidations());
            assertEquals(on ? 0 : 1, cs.get().localInvalidations());
            // a long call offering a write chunk: two rkeys, one withdrawn by the reply, one by us
            p.client().call(callMsg(2, 1, new byte[3000]),
                    CallOptions.DEFAULT.withReceptacle(MemorySegment.ofArray(new byte[64]))).join().release();
            assertEquals(on ? 2 : 0, ss.get().sendsWithInvalidate());
            assertEquals(on ? 2 : 0, cs.get().remoteInvalidations());
            assertEquals(on ? 1 : 3, cs.get().localInvalidations());
            // an inline call offering only a Reply chunk: one rkey again
            p.client().call(callMsg(3, 1, new byte[10]), CallOptions.DEFAULT.withMaxReplyBytes(8000)).join().release();
            assertEquals(on ? 3 : 0, ss.get().sendsWithInvalidate());
            assertEquals(on ? 1 : 4, cs.get().localInvalidations());
            assertEquals(0, p.exposedCount(), "no rkey outlives its call");
            assertEquals(0, cs.get().remoteInvalidationsUnnegotiated());
            assertTrue(p.client().isOpen());
        }
    }

    @ParameterizedTest(name = "remote invalidation {0}")
    @ValueSource(booleans = {true, false})
    void aReadChunkRkeyInvalidatedByTheReplyCannotBeReadAgain(boolean on) {
        RpcRdmaOptions o = RpcRdmaOptions.builder().inlineThreshold(1024).remoteInvalidation(on)
                .backwardCredits(8).build();
        try (InMemoryPair p = InMemoryPair.open(o, SMALL_REPLY)) {
            MemorySegment mem = MemorySegment.ofArray(new byte[4096]);
            MemorySegment call = callMsg(0x44, 1, new byte[2000]);
            MemorySegment.copy(call, 0, mem, 0, call.byteSize());
            int rkey = RawAccess.expose(p.client(), mem.asSlice(0, call.byteSize()), false);
            RpcRdmaHeader h = new RpcRdmaHeader(8, 1, 1, 1).clear().xid(0x44).credit(4).proc(RpcRdma.RDMA_NOMSG);
            h.readList().add(0, rkey, call.byteSize(), mem.address());
            RawAccess.send(p.client(), ChunkTest.raw(h, null));
            assertEquals(1, p.server().stats().repliesSent());
            assertEquals(on ? 1 : 0, p.server().stats().sendsWithInvalidate());
            assertEquals(on ? 0 : 1, p.exposedCount(), "the Send with Invalidate withdrew the rkey");
            // the same call again under the same rkey: with it invalidated, the Read is a remote access error
            RawAccess.send(p.client(), ChunkTest.raw(h, null));
            assertEquals(!on, p.server().isOpen());
            assertFalse(on && p.client().isOpen());
        }
    }

    /**
     * Six one-rkey calls out, the server holding them; the caller cancels one. With R the
     * server's reply to it will invalidate its rkey by Send with Invalidate, so our
     * withdrawal must not come first (an invalidation of an rkey already invalid fails both
     * QPs; the in-memory pair plays that as an RNIC does): the rkey is held, the connection
     * stays, the other five are answered, and the late reply withdraws the held rkey. With
     * R off it is withdrawn at once.
     */
    @ParameterizedTest(name = "remote invalidation {0}")
    @ValueSource(booleans = {true, false})
    void cancellingOneOfSixChunkedCallsKeepsTheConnectionAndItsOtherCalls(boolean on) {
        java.util.List<IncomingCall> held = new java.util.ArrayList<>();
        RpcRdmaOptions o = RpcRdmaOptions.builder().inlineThreshold(1024).remoteInvalidation(on)
                .reconnectAttempts(0).build();
        CallHandler holdFromTwenty = call -> {
            if (call.xid() >= 20 && call.xid() < 30) {
                held.add(call);
            } else {
                SMALL_REPLY.handle(call);
            }
        };
        try (InMemoryPair p = InMemoryPair.open(o, holdFromTwenty)) {
            // a first reply opens the credit window (RFC 8166 §3.3: a new connection's is 1)
            p.client().call(callMsg(1, 1, new byte[16]), CallOptions.DEFAULT).join().release();
            java.util.List<java.util.concurrent.CompletableFuture<ReceivedMessage>> calls = new java.util.ArrayList<>();
            for (int i = 0; i < 6; i++) {
                calls.add(p.client().call(callMsg(20 + i, 1, new byte[3000]), CallOptions.DEFAULT));
            }
            assertTrue(p.settle());
            assertEquals(6, held.size(), "the server pulled every call");
            assertTrue(calls.get(2).cancel(false));
            assertTrue(p.client().isOpen(), "cancelling one call keeps the connection");
            assertEquals(on ? 6 : 5, p.exposedCount(), "with R the cancelled call's rkey is held for its reply");
            for (IncomingCall call : held) {
                SMALL_REPLY.handle(call);
            }
            for (int i = 0; i < 6; i++) {
                if (i != 2) {
                    calls.get(i).join().release();
                }
            }
            assertTrue(p.client().isOpen() && p.server().isOpen());
            assertEquals(0, p.exposedCount(), "every rkey withdrawn, the held one by its late reply");
            Supplier<RpcRdmaStats> cs = p.client()::stats;
            assertEquals(1, cs.get().lateReplies());
            assertEquals(on ? 6 : 0, cs.get().remoteInvalidations());
            assertEquals(on ? 0 : 6, cs.get().localInvalidations());
            assertEquals(0, p.client().heldReceives(), "no receive buffer kept by the late reply");
            p.client().call(callMsg(30, 1, new byte[3000]), CallOptions.DEFAULT).join().release();
        }
    }

    /**
     * A long call offering a Reply chunk, both in chunk memory: one rkey covers both (the
     * call, then the room for its reply, in one buffer), so with R the server's reply
     * withdraws it by Send with Invalidate and the requester posts no LOCAL_INV at all; the
     * reply's bytes come back through that rkey's Reply chunk intact.
     */
    @ParameterizedTest(name = "remote invalidation {0}")
    @ValueSource(booleans = {true, false})
    void aLongCallAndItsReplyChunkShareOneRkeyThatTheReplyInvalidates(boolean on) {
        RpcRdmaOptions o = RpcRdmaOptions.builder().inlineThreshold(1024).remoteInvalidation(on).build();
        try (InMemoryPair p = InMemoryPair.open(o, ConnectionLoopbackTest.echo())) {
            byte[] args = new byte[3000];
            new java.util.Random(3).nextBytes(args);
            for (int i = 1; i <= 3; i++) {
                byte[] got = ConnectionLoopbackTest.results(p.client().call(callMsg(i, 1, args),
                        CallOptions.DEFAULT.withMaxReplyBytes(8000)).join());
                org.junit.jupiter.api.Assertions.assertArrayEquals(args, got, "call " + i);
            }
            assertTrue(p.settle());
            Supplier<RpcRdmaStats> cs = p.client()::stats;
            assertEquals(3, p.server().stats().rdmaReads());
            assertEquals(3, p.server().stats().rdmaWrites(), "each reply through its Reply chunk");
            assertEquals(on ? 3 : 0, p.server().stats().sendsWithInvalidate(), "one rkey per call");
            assertEquals(on ? 3 : 0, cs.get().remoteInvalidations());
            assertEquals(on ? 0 : 3, cs.get().localInvalidations(), "one rkey per call, withdrawn once");
            assertEquals(0, p.exposedCount(), "no rkey outlives its call");
            assertEquals(0, cs.get().remoteInvalidationsUnnegotiated());
            assertTrue(p.client().isOpen() && p.server().isOpen());
        }
    }

    /**
     * A cancelled long call whose Reply chunk shares its one rkey: with R the server may
     * still invalidate that rkey, so it is held (not withdrawn first) until the late reply
     * withdraws it, and the connection goes on.
     */
    @Test
    void aCancelledLongCallWithItsReplyChunkHoldsItsOneRkeyForTheReply() {
        java.util.List<IncomingCall> held = new java.util.concurrent.CopyOnWriteArrayList<>();
        RpcRdmaOptions o = RpcRdmaOptions.builder().inlineThreshold(1024).reconnectAttempts(0).build();
        CallHandler echo = ConnectionLoopbackTest.echo();
        CallHandler holdForty = call -> {
            if (call.xid() == 40) {
                held.add(call);
            } else {
                echo.handle(call);
            }
        };
        try (InMemoryPair p = InMemoryPair.open(o, holdForty)) {
            p.client().call(callMsg(1, 1, new byte[16]), CallOptions.DEFAULT).join().release();
            java.util.concurrent.CompletableFuture<ReceivedMessage> f = p.client().call(
                    callMsg(40, 1, new byte[3000]), CallOptions.DEFAULT.withMaxReplyBytes(8000));
            assertTrue(p.settle(), "the call reached the handler"); // delivery is asynchronous
            assertEquals(1, held.size());
            assertTrue(f.cancel(false));
            assertEquals(1, p.exposedCount(), "its one rkey held for the reply");
            echo.handle(held.get(0));
            assertTrue(p.settle(), "the late reply reached the client");
            assertTrue(p.client().isOpen() && p.server().isOpen());
            assertEquals(0, p.exposedCount(), "withdrawn by the late reply's Send with Invalidate");
            assertEquals(1, p.client().stats().remoteInvalidations());
            assertEquals(0, p.client().stats().localInvalidations());
            assertEquals(1, p.client().stats().lateReplies());
            p.client().call(callMsg(41, 1, new byte[3000]), CallOptions.DEFAULT.withMaxReplyBytes(8000)).join().release();
        }
    }

    /**
     * An rkey held for a cancelled call's reply goes with the connection if that reply
     * never comes, and so does the use of the registered buffer it exposed in place.
     */
    @Test
    void anRkeyHeldForALateReplyGoesWithTheConnection() {
        java.util.List<IncomingCall> held = new java.util.ArrayList<>();
        RpcRdmaOptions o = RpcRdmaOptions.builder().inlineThreshold(1024).reconnectAttempts(0).build();
        CallHandler holdForty = call -> {
            if (call.xid() == 40) {
                held.add(call);
            } else {
                SMALL_REPLY.handle(call);
            }
        };
        try (InMemoryPair p = InMemoryPair.open(o, holdForty)) {
            p.client().call(callMsg(1, 1, new byte[16]),
                    CallOptions.DEFAULT).join().release(); // opens the credit window
            RegisteredBuffer buf = p.allocateRegistered(4096);
            MemorySegment call = callMsg(40, 1, new byte[3000]);
            MemorySegment.copy(call, 0, buf.segment(), 0, call.byteSize());
            java.util.concurrent.CompletableFuture<ReceivedMessage> f = p.client().call(
                    buf.segment().asSlice(0, call.byteSize()), CallOptions.DEFAULT);
            assertTrue(p.settle());
            assertEquals(1, held.size());
            assertEquals(1, p.client().stats().zeroCopyExposures(), "exposed in place");
            f.cancel(false);
            assertEquals(1, p.exposedCount(), "held for the reply");
            p.client().close(0, java.util.concurrent.TimeUnit.MILLISECONDS);
            assertEquals(0, p.exposedCount(), "withdrawn with the connection");
            assertFalse(buf.memory().inUse(), "no use of the buffer left behind");
            buf.close();
            assertFalse(buf.segment().scope().isAlive(), "so closing it frees it");
        }
    }
    /**
     * A long call exposed in place from the caller's registered memory, echoed through the
     * Reply chunk it offers (chunk memory): two rkeys, which cannot share a window. With R
     * the server's reply invalidates one of them by Send with Invalidate (RFC 8797 §4.1: any
     * STag of that XID), so the requester posts one LOCAL_INV, not two; the reply's bytes
     * come back intact and no rkey outlives the call.
     */
    @ParameterizedTest(name = "remote invalidation {0}")
    @ValueSource(booleans = {true, false})
    void aRegisteredMemoryEchoHasOneOfItsTwoRkeysInvalidatedByTheReply(boolean on) {
        RpcRdmaOptions o = RpcRdmaOptions.builder().inlineThreshold(1024).remoteInvalidation(on).build();
        try (InMemoryPair p = InMemoryPair.open(o, ConnectionLoopbackTest.echo());
                RegisteredBuffer buf = p.allocateRegistered(4096)) {
            byte[] args = new byte[3000];
            new java.util.Random(5).nextBytes(args);
            for (int i = 1; i <= 3; i++) {
                MemorySegment call = callMsg(i, 1, args);
                MemorySegment.copy(call, 0, buf.segment(), 0, call.byteSize());
                byte[] got = ConnectionLoopbackTest.results(p.client().call(buf.segment().asSlice(0, call.byteSize()),
                        CallOptions.DEFAULT.withMaxReplyBytes(8000)).join());
                org.junit.jupiter.api.Assertions.assertArrayEquals(args, got, "call " + i);
            }
            assertTrue(p.settle());
            Supplier<RpcRdmaStats> cs = p.client()::stats;
            assertEquals(3, cs.get().zeroCopyExposures(), "each call exposed in place");
            assertEquals(3, p.server().stats().rdmaWrites(), "each reply through its Reply chunk");
            assertEquals(on ? 3 : 0, p.server().stats().sendsWithInvalidate(), "one Send with Invalidate per reply");
            assertEquals(on ? 3 : 0, cs.get().remoteInvalidations());
            assertEquals(on ? 3 : 6, cs.get().localInvalidations(), "LOCAL_INVs: the rkey the reply did not withdraw");
            assertEquals(0, p.exposedCount(), "no rkey outlives its call");
            assertTrue(p.client().isOpen() && p.server().isOpen());
        }
    }

    /**
     * A cancelled call of two rkeys (registered memory in place, and a Reply chunk): with R
     * the server's late reply may invalidate either, so both are held until it comes (an
     * invalidation of an rkey we withdrew first would fail the connection); it withdraws
     * one, we the other, and the connection and its next call go on.
     */
    @Test
    void aCancelledCallOfTwoRkeysHoldsBothForTheReplyThatInvalidatesOne() {
        java.util.List<IncomingCall> held = new java.util.concurrent.CopyOnWriteArrayList<>();
        RpcRdmaOptions o = RpcRdmaOptions.builder().inlineThreshold(1024).reconnectAttempts(0).build();
        CallHandler echo = ConnectionLoopbackTest.echo();
        CallHandler holdForty = call -> {
            if (call.xid() == 40) {
                held.add(call);
            } else {
                echo.handle(call);
            }
        };
        try (InMemoryPair p = InMemoryPair.open(o, holdForty); RegisteredBuffer buf = p.allocateRegistered(4096)) {
            p.client().call(callMsg(1, 1, new byte[16]), CallOptions.DEFAULT).join().release();
            MemorySegment call = callMsg(40, 1, new byte[3000]);
            MemorySegment.copy(call, 0, buf.segment(), 0, call.byteSize());
            java.util.concurrent.CompletableFuture<ReceivedMessage> f = p.client().call(
                    buf.segment().asSlice(0, call.byteSize()), CallOptions.DEFAULT.withMaxReplyBytes(8000));
            assertTrue(p.settle(), "the call reached the handler");
            assertEquals(1, held.size());
            assertEquals(2, p.exposedCount(), "two rkeys: the call in place and the Reply chunk");
            assertTrue(f.cancel(false));
            assertEquals(2, p.exposedCount(), "both held for the reply, which may invalidate either");
            echo.handle(held.get(0));
            assertTrue(p.settle(), "the late reply reached the client");
            assertTrue(p.client().isOpen() && p.server().isOpen(), "the late reply's invalidation found its rkey valid");
            assertEquals(0, p.exposedCount(), "one withdrawn by the reply, the other by us");
            assertEquals(1, p.client().stats().remoteInvalidations());
            assertEquals(1, p.client().stats().localInvalidations());
            assertEquals(1, p.client().stats().lateReplies());
            p.client().call(callMsg(41, 1, new byte[3000]), CallOptions.DEFAULT.withMaxReplyBytes(8000)).join().release();
        }
    }
}
