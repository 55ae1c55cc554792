package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.transport.rpc.CallFuture;
import org.rpcrdma.transport.rpc.ConnectionSizing;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.transport.wire.WriteList;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * The receive side against what deployed peers send and what careless handlers do, over
 * {@link InMemoryPair}: write lists returned empty or echoed (implementation-experience
 * draft §3.8), handlers that throw an {@link Error}, malformed messages carrying the other
 * direction's XID (RFC 8167 §2.4.1), a stale release of an immediate handler's message,
 * the counting of callback replies and of RDMA_NOMSG's credit value, and RDMA_NOMSG calls
 * with read chunks beside the Position-Zero Read chunk (§3.4.1). Each test asserts the
 * outcome the right caller sees, that the other direction is unaffected, and that credits,
 * receive buffers and rkeys are back to their initial values.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ReceiveDefectsTest {
    /** Backward credits keep receives posted on the client for answers to messages posted by hand. */
    private static final RpcRdmaOptions RAW = RpcRdmaOptions.defaults().withBackwardCredits(8);
    /**
     * For tests that answer a held call after a reply posted by hand: without R its answer is
     * a plain Send, not a Send with Invalidate of the rkey the client withdrew at the first
     * reply (a remote invalid request that ends the connection).
     */
    private static final RpcRdmaOptions RAW_NO_R = RAW.withRemoteInvalidation(false);

    private static RpcRdmaHeader header(int xid, int proc) {
        return new RpcRdmaHeader(64, 8, 64, 8).clear().xid(xid).credit(4).proc(proc);
    }

    private static MemorySegment words(int... w) {
        MemorySegment m = MemorySegment.ofArray(new byte[w.length * 4]);
        for (int i = 0; i < w.length; i++) {
            Xdr.putInt(m, i * 4L, w[i]);
        }
        return m;
    }

    private static MemorySegment cat(MemorySegment a, MemorySegment b) {
        MemorySegment m = MemorySegment.ofArray(new byte[(int) (a.byteSize() + b.byteSize())]);
        MemorySegment.copy(a, 0, m, 0, a.byteSize());
        MemorySegment.copy(b, 0, m, a.byteSize(), b.byteSize());
        return m;
    }

    /** An accepted reply {xid, REPLY, MSG_ACCEPTED, AUTH_NONE/0, acceptStat} and then {@code body}. */
    private static MemorySegment reply(int xid, int acceptStat, int... body) {
        int[] w = new int[6 + body.length];
        int[] head = {xid, OncRpc.REPLY, OncRpc.MSG_ACCEPTED, OncRpc.AUTH_NONE, 0, acceptStat};
        System.arraycopy(head, 0, w, 0, 6);
        System.arraycopy(body, 0, w, 6, body.length);
        return words(w);
    }

    private static byte[] filled(int n, int b) {
        byte[] a = new byte[n];
        Arrays.fill(a, (byte) b);
        return a;
    }

    /**
     * Resources of both sides back where a quiet pair has them (a reply sent from another
     * thread reaches the caller before that thread gives the call's buffer back: waited for).
     */
    private static void quiet(InMemoryPair p) {
        CoreDefectsTest.await(() -> p.server().heldReceives() == 0 && p.client().heldReceives() == 0, 5_000);
        assertEquals(0, p.client().outstandingCalls(), "client: calls outstanding");
        assertEquals(0, p.server().outstandingCalls(), "server: backward calls outstanding");
        assertEquals(0, p.client().peerOutstandingCalls(), "client: backward calls unanswered");
        assertEquals(0, p.server().peerOutstandingCalls(), "server: forward calls unanswered");
        assertEquals(0, p.client().heldReceives(), "client: receive buffers held");
        assertEquals(0, p.server().heldReceives(), "server: receive buffers held");
        assertEquals(0, p.exposedCount(), "rkeys exposed");
        assertTrue(p.client().isOpen() && p.server().isOpen(), "both sides open");
    }

    private static ReceivedMessage get(CompletableFuture<ReceivedMessage> f) throws Exception {
        try {
            return f.get(5, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError("the call failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new AssertionError("no reply within 5 s", e);
        }
    }

    // ---- write lists returned empty or echoed (implementation-experience draft §3.8) ----

    /** A handler that answers call 1 with {@code payload} as a DDP result and keeps the others. */
    private static CallHandler placeFirstHoldRest(byte[] payload, List<IncomingCall> held) {
        return c -> {
            if (c.xid() == 1) {
                MemorySegment r = reply(1, OncRpc.SUCCESS, payload.length);
                c.reply(r, MemorySegment.ofArray(payload));
            } else {
                held.add(c);
            }
        };
    }

    @Test
    void aZeroSegmentWriteChunkInAReplyDeliversTheReplyWithNothingPlaced() throws Exception {
        List<IncomingCall> held = new ArrayList<>();
        try (InMemoryPair p = InMemoryPair.open(RAW_NO_R, held::add)) {
            MemorySegment receptacle = MemorySegment.ofArray(filled(64, 0x55));
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0x20, 1, new byte[0]),
                    CallOptions.DEFAULT.withReceptacle(receptacle));
            assertEquals(1, held.size());
            // the reply of a failed NFS READ as one deployed server sends it: a write chunk of no segments
            MemorySegment fixed = words(0x20, 1, 8, RpcRdma.RDMA_MSG, 0, 1, 0, 0, 0);
            RawAccess.send(p.server(), cat(fixed, reply(0x20, OncRpc.SUCCESS, 5 /* NFS3ERR_IO */)));
            ReceivedMessage m = get(f);
            assertEquals(0, m.placedBytes(), "nothing was placed");
            assertEquals(5, Xdr.getInt(m.bytes(), 24), "the upper layer's error status reaches the caller");
            m.release();
            assertArrayEquals(filled(64, 0x55), receptacle.toArray(ValueLayout.JAVA_BYTE), "receptacle untouched");
            assertEquals(0, p.client().stats().malformedReplies());
            held.get(0).reply(reply(0x20, OncRpc.SUCCESS)); // the server's call is answered too (a stray reply)
            quiet(p);
        }
    }

    @Test
    void anEchoedWriteChunkNeverFillsTheReceptacleWithMemoryTheResponderDidNotWrite() throws Exception {
        List<IncomingCall> held = new ArrayList<>();
        byte[] secret = filled(64, 0x3c);
        try (InMemoryPair p = InMemoryPair.open(RAW_NO_R, placeFirstHoldRest(secret, held))) {
            // an earlier call leaves its DDP result in the client's chunk memory
            MemorySegment first = MemorySegment.ofArray(new byte[64]);
            ReceivedMessage m = get(p.client().call(callMsg(1, 1, new byte[0]),
                    CallOptions.DEFAULT.withReceptacle(first)));
            assertEquals(64, m.placedBytes());
            m.release();
            // the next call's receptacle goes through the same chunk memory; its reply echoes
            // the offered write chunk (full lengths) without writing a byte, as deployed servers do
            MemorySegment receptacle = MemorySegment.ofArray(filled(64, 0x55));
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(2, 1, new byte[0]),
                    CallOptions.DEFAULT.withReceptacle(receptacle));
            WriteList offered = ((CallFuture) f).request().exposure().header().writeList();
            RpcRdmaHeader h = header(2, RpcRdma.RDMA_MSG);
            h.writeList().beginChunk();
            h.writeList().addSegment(offered.handle(0, 0), offered.length(0, 0), offered.offset(0, 0));
            RawAccess.send(p.server(), ChunkTest.raw(h, reply(2, OncRpc.SUCCESS, 5)));
            m = get(f);
            m.release();
            assertArrayEquals(filled(64, 0x55), receptacle.toArray(ValueLayout.JAVA_BYTE),
                    "the receptacle holds bytes the responder never wrote (another call's chunk memory)");
            held.get(0).reply(reply(2, OncRpc.SUCCESS));
            quiet(p);
        }
    }

    @Test
    void anEchoedWriteChunkInAReplyWithoutResultsPlacesNothing() throws Exception {
        List<IncomingCall> held = new ArrayList<>();
        try (InMemoryPair p = InMemoryPair.open(RAW_NO_R, held::add)) {
            MemorySegment receptacle = MemorySegment.ofArray(filled(64, 0x55));
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(3, 1, new byte[0]),
                    CallOptions.DEFAULT.withReceptacle(receptacle));
            WriteList offered = ((CallFuture) f).request().exposure().header().writeList();
            RpcRdmaHeader h = header(3, RpcRdma.RDMA_MSG);
            h.writeList().beginChunk();
            h.writeList().addSegment(offered.handle(0, 0), offered.length(0, 0), offered.offset(0, 0));
            // SYSTEM_ERR: an accepted reply with no results (RFC 5531 §9), so no DDP result either
            RawAccess.send(p.server(), ChunkTest.raw(h, reply(3, OncRpc.SYSTEM_ERR)));
            ReceivedMessage m = get(f);
            assertEquals(0, m.placedBytes(), "a reply without results placed no result");
            m.release();
            assertArrayEquals(filled(64, 0x55), receptacle.toArray(ValueLayout.JAVA_BYTE));
            held.get(0).reply(reply(3, OncRpc.SUCCESS));
            quiet(p);
        }
    }

    @Test
    void anEchoedWriteChunkBesideAReplyChunkHoldingAReplyWithoutResultsPlacesNothing() throws Exception {
        List<IncomingCall> held = new ArrayList<>();
        try (InMemoryPair p = InMemoryPair.open(RAW.withInlineThreshold(1024), held::add)) {
            MemorySegment receptacle = MemorySegment.ofArray(filled(64, 0x55));
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(4, 1, new byte[0]),
                    CallOptions.DEFAULT.withMaxReplyBytes(8192).withReceptacle(receptacle));
            RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
            // the responder writes a SYSTEM_ERR reply into the Reply chunk, then answers RDMA_NOMSG
            // returning the Reply chunk's length and the write chunk as it was offered
            MemorySegment r = reply(4, OncRpc.SYSTEM_ERR);
            org.rpcrdma.transport.chunk.ChunkBuffer b = RawAccess.link(p.server()).allocateChunk(r.byteSize());
            b.segment().copyFrom(r);
            RawAccess.link(p.server()).postWrite(0, b, 0, (int) r.byteSize(), offered.replyChunk().handle(0),
                    offered.replyChunk().offset(0));
            b.release();
            RpcRdmaHeader h = header(4, RpcRdma.RDMA_NOMSG).hasReplyChunk(true);
            h.writeList().beginChunk();
            WriteList w = offered.writeList();
            h.writeList().addSegment(w.handle(0, 0), w.length(0, 0), w.offset(0, 0));
            h.replyChunk().add(offered.replyChunk().handle(0), r.byteSize(), offered.replyChunk().offset(0));
            RawAccess.send(p.server(), ChunkTest.raw(h, null));
            ReceivedMessage m = get(f);
            assertEquals(OncRpc.SYSTEM_ERR, Xdr.getInt(m.bytes(), 20));
            assertEquals(0, m.placedBytes(), "a reply without results placed no result");
            m.release();
            assertArrayEquals(filled(64, 0x55), receptacle.toArray(ValueLayout.JAVA_BYTE));
            held.get(0).reply(reply(4, OncRpc.SUCCESS));
            quiet(p);
        }
    }

    // ---- a handler that throws an Error ----

    private static final CallHandler THROWS_ASSERTION_ERROR = c -> {
        if (c.xid() == 0x30) {
            throw new AssertionError("test: a handler's assertion failed");
        }
        echo().handle(c);
    };

    /** The first call's reply must be SYSTEM_ERR, the second an echo; the pair must stay quiet and open. */
    private static void answeredSystemErrThenServes(InMemoryPair p) throws Exception {
        CompletableFuture<ReceivedMessage> f;
        try {
            f = p.client().call(callMsg(0x30, 1, new byte[4]), CallOptions.timeout(5, TimeUnit.SECONDS));
        } catch (Throwable t) {
            throw new AssertionError("the call threw what the server's handler threw: " + t, t);
        }
        ReceivedMessage m = get(f);
        assertEquals(OncRpc.SYSTEM_ERR, Xdr.getInt(m.bytes(), 20), "answered SYSTEM_ERR for the handler");
        m.release();
        assertArrayEquals(new byte[] {1, 2, 3}, results(get(p.client().call(callMsg(0x31, 1, new byte[] {1, 2, 3}),
                CallOptions.timeout(5, TimeUnit.SECONDS)))));
        assertEquals(1, p.server().stats().handlerFailures());
        quiet(p);
    }

    @Test
    void aHandlerThatThrowsAnErrorIsAnsweredSystemErrAndTheConnectionServesOn() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), THROWS_ASSERTION_ERROR)) {
            answeredSystemErrThenServes(p);
        }
    }

    @Test
    void anImmediateHandlerThatThrowsAnErrorIsAnsweredSystemErrAndTheConnectionServesOn() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(),
                CallHandler.immediate(THROWS_ASSERTION_ERROR))) {
            answeredSystemErrThenServes(p);
        }
    }

    @Test
    void aHandlerOnAnExecutorThatThrowsAnErrorIsAnsweredSystemErr() throws Exception {
        ExecutorService exec = Executors.newSingleThreadExecutor();
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(),
                CallHandler.onExecutor(exec, THROWS_ASSERTION_ERROR))) {
            answeredSystemErrThenServes(p);
        } finally {
            exec.shutdownNow();
        }
    }

    @Test
    void aHandlerThatThrowsAVirtualMachineErrorFailsTheConnectionCleanly() throws Exception {
        CallHandler oom = c -> {
            throw new OutOfMemoryError("test: the VM is in trouble");
        };
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), oom)) {
            CompletableFuture<ReceivedMessage> f;
            try {
                f = p.client().call(callMsg(0x32, 1, new byte[4]), CallOptions.timeout(5, TimeUnit.SECONDS));
            } catch (Throwable t) {
                throw new AssertionError("the call threw what the server's handler threw: " + t, t);
            }
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> f.get(5, TimeUnit.SECONDS));
            assertInstanceOf(ConnectionLostException.class, e.getCause());
            assertFalse(p.server().isOpen(), "the server's connection failed");
            assertFalse(p.client().isOpen());
            assertEquals(0, p.client().outstandingCalls());
        }
    }

    @Test
    void aReplyCallbackThatThrowsAnErrorLeavesTheConnectionServing() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), echo())) {
            CompletableFuture<Void> ran = new CompletableFuture<>();
            try {
                p.client().call(callMsg(0x33, 1, new byte[] {1}), new ReplyCallback() {
                    @Override
                    public void onReply(MemorySegment reply) {
                        ran.complete(null);
                        throw new AssertionError("test: a callback's assertion failed");
                    }

                    @Override
                    public void onFailure(Throwable cause) {
                        ran.completeExceptionally(cause);
                    }
                });
            } catch (Throwable t) {
                throw new AssertionError("the call threw what its callback threw: " + t, t);
            }
            ran.get(5, TimeUnit.SECONDS);
            assertArrayEquals(new byte[] {2}, results(get(p.client().call(callMsg(0x34, 1, new byte[] {2}),
                    CallOptions.timeout(5, TimeUnit.SECONDS)))));
            quiet(p);
        }
    }

    // ---- malformed messages carrying the other direction's XID (RFC 8167 §2.4.1) ----

    /** RDMA_MSG with a misaligned read position (RFC 8166 §3.4.5) and an inline RPC CALL of {@code xid}. */
    private static MemorySegment malformedCall(int xid) {
        MemorySegment fixed = words(xid, 1, 4, RpcRdma.RDMA_MSG, 1, 42, 0x1234, 4, 0, 0x1000, 0, 0, 0);
        return cat(fixed, callMsg(xid, 1, new byte[4]));
    }

    @Test
    void aMalformedForwardCallWithTheXidOfABackwardCallIsAnsweredAndLeavesThatCallAlone() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> backward = new ConcurrentLinkedQueue<>();
        try (InMemoryPair p = InMemoryPair.open(RAW, echo())) {
            p.client().enableBackchannel(backward::add).get(5, TimeUnit.SECONDS);
            CompletableFuture<ReceivedMessage> b = p.server().call(callMsg(0x40, 7, new byte[] {9}));
            assertEquals(1, backward.size());
            RawAccess.send(p.client(), malformedCall(0x40));
            assertFalse(b.isDone(), "the backward call was failed by a malformed forward call");
            assertEquals(1, p.server().stats().errChunkSent(), "the forward requester was answered RDMA_ERROR");
            assertEquals(1, p.client().stats().rdmaErrorsReceived());
            backward.poll().reply(reply(0x40, OncRpc.SUCCESS, 9));
            ReceivedMessage m = get(b);
            assertEquals(9, Xdr.getInt(m.bytes(), 24));
            m.release();
            quiet(p);
        }
    }

    @Test
    void aMalformedBackwardCallWithTheXidOfAForwardCallIsAnsweredAndLeavesThatCallAlone() throws Exception {
        List<IncomingCall> held = new ArrayList<>();
        try (InMemoryPair p = InMemoryPair.open(RAW, held::add)) {
            p.client().enableBackchannel(echo()).get(5, TimeUnit.SECONDS);
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0x41, 1, new byte[0]));
            assertEquals(1, held.size());
            RawAccess.send(p.server(), malformedCall(0x41));
            assertFalse(f.isDone(), "the forward call was failed by a malformed backward call");
            assertEquals(1, p.client().stats().errChunkSent(), "the backward requester was answered RDMA_ERROR");
            assertEquals(1, p.server().stats().rdmaErrorsReceived());
            held.get(0).reply(reply(0x41, OncRpc.SUCCESS));
            get(f).release();
            quiet(p);
        }
    }

    @Test
    void anRdmaNomsgReplyMatchingNoCallIsDroppedNotAnsweredWithRdmaError() throws Exception {
        List<IncomingCall> held = new ArrayList<>();
        try (InMemoryPair p = InMemoryPair.open(RAW, held::add)) {
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0x42, 1, new byte[0]));
            RpcRdmaHeader h = header(0x42, RpcRdma.RDMA_NOMSG).hasReplyChunk(true);
            h.replyChunk().add(0x777, 64, 0x10000);
            RawAccess.send(p.client(), ChunkTest.raw(h, null)); // a "reply" to a backward call the server never made
            assertEquals(0, p.server().stats().errChunkSent(), "a requester answered a reply with RDMA_ERROR");
            assertFalse(f.isDone(), "the client's own call was failed by the server's RDMA_ERROR");
            assertEquals(1, p.server().stats().unmatchedBackwardReplies());
            held.get(0).reply(reply(0x42, OncRpc.SUCCESS));
            get(f).release();
            assertEquals(ConnectionSizing.ownCalls(RAW, true), p.client().ownCallWindow(), "the client's window is the server's grant");
            quiet(p);
        }
    }

    // ---- a stale release of an immediate handler's message ----

    @Test
    void aStaleReleaseOfAnImmediateHandlersMessageThrowsAndFreesNothing() throws Exception {
        AtomicReference<ReceivedMessage> kept = new AtomicReference<>();
        AtomicReference<Throwable> staleDuring = new AtomicReference<>();
        CallHandler h = c -> {
            if (c.xid() == 0x50) {
                kept.set(c.message()); // kept past the handler, against the contract
            } else {
                Thread t = new Thread(() -> {
                    try {
                        kept.get().release();
                    } catch (Throwable e) {
                        staleDuring.set(e);
                    }
                });
                t.start();
                try {
                    t.join();
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }
            echo().handle(c);
        };
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), CallHandler.immediate(h))) {
            results(get(p.client().call(callMsg(0x50, 1, new byte[] {1}))));
            assertArrayEquals(new byte[] {7, 7}, results(get(p.client().call(callMsg(0x51, 1, new byte[] {7, 7})))),
                    "the second call's handler read its own message");
            assertInstanceOf(IllegalStateException.class, staleDuring.get(),
                    "a release from another thread during the next call's dispatch");
            Throwable after = null;
            try {
                CompletableFuture.runAsync(() -> kept.get().release()).get(5, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                after = e.getCause();
            }
            assertInstanceOf(IllegalStateException.class, after, "a release from another thread after the handler");
            assertEquals(0, p.server().stats().handlerFailures());
            quiet(p);
        }
    }

    // ---- counting ----

    @Test
    void aCallbackReplyIsNotCountedAsLate() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), echo())) {
            CompletableFuture<byte[]> got = new CompletableFuture<>();
            p.client().call(callMsg(0x60, 1, new byte[] {4, 5}), new ReplyCallback() {
                @Override
                public void onReply(MemorySegment reply) {
                    got.complete(reply.asSlice(24).toArray(ValueLayout.JAVA_BYTE));
                }

                @Override
                public void onFailure(Throwable cause) {
                    got.completeExceptionally(cause);
                }
            });
            assertArrayEquals(new byte[] {4, 5}, got.get(5, TimeUnit.SECONDS));
            assertEquals(0, p.client().stats().lateReplies(), "a reply its callback read counted as late");
            quiet(p);
        }
    }

    @Test
    void anRdmaNomsgRepliesCreditIsAGrantAndCountedAsNoneIgnored() throws Exception {
        CallHandler big = c -> {
            MemorySegment r = MemorySegment.ofArray(new byte[3000]);
            MemorySegment.copy(reply(c.xid(), OncRpc.SUCCESS), 0, r, 0, 24);
            c.reply(r);
        };
        try (InMemoryPair p = InMemoryPair.open(RAW.withInlineThreshold(1024), big)) {
            assertEquals(1, p.client().ownCallWindow(), "a new connection's window");
            ReceivedMessage m = get(p.client().call(callMsg(0x61, 1, new byte[0]),
                    CallOptions.DEFAULT.withMaxReplyBytes(4096)));
            assertEquals(3000, m.bytes().byteSize());
            m.release();
            assertEquals(1, p.client().stats().repliesThroughReplyChunk());
            assertEquals(ConnectionSizing.ownCalls(RAW, true), p.client().ownCallWindow(),
                    "an RDMA_NOMSG reply's rdma_credit is the responder's grant (RFC 8166 §3.3.3)");
            assertEquals(0, p.client().stats().creditsIgnored(), "a credit value used as a grant counted as ignored");
            // RDMA_DONE tells no direction (it carries no RPC message): its credit value is ignored
            RawAccess.send(p.server(), words(0x62, 1, 1, RpcRdma.RDMA_DONE));
            assertEquals(ConnectionSizing.ownCalls(RAW, true), p.client().ownCallWindow());
            assertEquals(1, p.client().stats().creditsIgnored());
            quiet(p);
        }
    }

    // ---- RDMA_NOMSG calls with read chunks beside the Position-Zero Read chunk (§3.4.1) ----

    @Test
    void anRdmaNomsgCallWithAReadChunkBesideThePositionZeroChunkIsAssembledAndServed() throws Exception {
        List<byte[]> seen = new ArrayList<>();
        CallHandler rec = c -> {
            seen.add(c.message().toByteArray());
            c.reply(reply(c.xid(), OncRpc.SUCCESS));
        };
        try (InMemoryPair p = InMemoryPair.open(RAW, rec); Arena a = Arena.ofShared()) {
            // the call: header (40), opaque of 10 bytes (length word, data, 2 bytes of pad), 8-byte trailer
            byte[] data = ChunkTest.pattern(10, 3);
            MemorySegment full = ChunkTest.writeCall(0x70, data);
            assertEquals(64, full.byteSize());
            // the Position-Zero chunk carries the call without the data and its pad (52 bytes),
            // in two segments, the second holding the bytes either side of the data's position 44
            MemorySegment reduced = a.allocate(52);
            MemorySegment.copy(full, 0, reduced, 0, 44);
            MemorySegment.copy(full, 56, reduced, 44, 8);
            int pz = RawAccess.expose(p.client(), reduced, false);
            MemorySegment dataMem = a.allocate(10);
            dataMem.copyFrom(MemorySegment.ofArray(data));
            int dk = RawAccess.expose(p.client(), dataMem, false);
            RpcRdmaHeader h = header(0x70, RpcRdma.RDMA_NOMSG);
            h.readList().add(0, pz, 30, reduced.address());
            h.readList().add(0, pz, 22, reduced.address() + 30);
            h.readList().add(44, dk, 10, dataMem.address());
            RawAccess.send(p.client(), ChunkTest.raw(h, null));
            assertEquals(0, p.server().stats().chunkListsRefused(), "refused with ERR_CHUNK");
            assertEquals(1, seen.size(), "the handler got the call");
            assertArrayEquals(full.toArray(ValueLayout.JAVA_BYTE), seen.get(0), "assembled in XDR order, pad zero");
            assertEquals(4, p.server().stats().rdmaReads(), "the second Position-Zero segment read in two pieces");
            p.invalidate(pz);
            p.invalidate(dk);
            quiet(p);
        }
    }

    @Test
    void rdmaNomsgCallsWithSeveralReadChunksAndAPositionZeroChunkInManySegmentsAreAssembled() throws Exception {
        List<byte[]> seen = new ArrayList<>();
        CallHandler rec = c -> {
            seen.add(c.message().toByteArray());
            c.reply(reply(c.xid(), OncRpc.SUCCESS));
        };
        java.util.Random rnd = new java.util.Random(42);
        try (InMemoryPair p = InMemoryPair.open(RAW, rec); Arena a = Arena.ofShared()) {
            for (int round = 0; round < 50; round++) {
                int xid = 0x700 + round;
                // the call: header, then k opaques of odd lengths (length word, data, pad), then a trailer
                int k = 1 + rnd.nextInt(3);
                byte[][] data = new byte[k][];
                java.io.ByteArrayOutputStream full = new java.io.ByteArrayOutputStream();
                java.io.ByteArrayOutputStream reduced = new java.io.ByteArrayOutputStream();
                full.writeBytes(callMsg(xid, 1, new byte[0]).toArray(ValueLayout.JAVA_BYTE));
                reduced.writeBytes(callMsg(xid, 1, new byte[0]).toArray(ValueLayout.JAVA_BYTE));
                int[] positions = new int[k];
                for (int j = 0; j < k; j++) {
                    data[j] = ChunkTest.pattern(1 + rnd.nextInt(40), round * 8L + j);
                    byte[] len = words(data[j].length).toArray(ValueLayout.JAVA_BYTE);
                    full.writeBytes(len);
                    reduced.writeBytes(len);
                    positions[j] = full.size();
                    full.writeBytes(data[j]);
                    full.writeBytes(new byte[Xdr.roundUp(data[j].length) - data[j].length]);
                }
                byte[] trailer = ChunkTest.pattern(8, round);
                full.writeBytes(trailer);
                reduced.writeBytes(trailer);
                byte[] r = reduced.toByteArray();
                MemorySegment pzMem = a.allocate(r.length);
                pzMem.copyFrom(MemorySegment.ofArray(r));
                int pz = RawAccess.expose(p.client(), pzMem, false);
                RpcRdmaHeader h = header(xid, RpcRdma.RDMA_NOMSG);
                // the Position-Zero chunk in 1 to 5 segments cut anywhere, some of them empty
                int cuts = rnd.nextInt(5);
                int[] at = new int[cuts + 2];
                at[cuts + 1] = r.length;
                for (int j = 1; j <= cuts; j++) {
                    at[j] = rnd.nextInt(r.length + 1);
                }
                Arrays.sort(at);
                for (int j = 0; j <= cuts; j++) {
                    h.readList().add(0, pz, at[j + 1] - at[j], pzMem.address() + at[j]);
                }
                List<Integer> keys = new ArrayList<>(List.of(pz));
                for (int j = 0; j < k; j++) {
                    MemorySegment dm = a.allocate(data[j].length);
                    dm.copyFrom(MemorySegment.ofArray(data[j]));
                    int dk = RawAccess.expose(p.client(), dm, false);
                    keys.add(dk);
                    h.readList().add(positions[j], dk, data[j].length, dm.address());
                }
                RawAccess.send(p.client(), ChunkTest.raw(h, null));
                assertEquals(round + 1, seen.size(), "round " + round + ": the handler got the call");
                assertArrayEquals(full.toByteArray(), seen.get(round), "round " + round);
                keys.forEach(p::invalidate);
            }
            assertEquals(0, p.server().stats().chunkListsRefused());
            quiet(p);
        }
    }
}
