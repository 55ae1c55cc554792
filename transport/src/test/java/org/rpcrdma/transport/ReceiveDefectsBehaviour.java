package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.transport.wire.WriteList;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;
import org.rpcrdma.transport.rpc.CallFuture;
import org.rpcrdma.transport.chunk.ChunkBuffer;
import org.rpcrdma.transport.rpc.ConnectionSizing;

/**
 * The receive side against what deployed peers send and what careless handlers do, on
 * every link: write lists returned empty or echoed (implementation-experience draft §3.8),
 * handlers and callbacks that throw an {@link Error} (answered SYSTEM_ERR while the
 * completion thread lives on), malformed messages carrying the other direction's XID
 * (RFC 8167 §2.4.1), a stale release of an immediate handler's message, and the counting
 * of callback replies and of RDMA_NOMSG's credit value. Each case asserts the outcome the
 * right caller sees, that the other direction is unaffected, and that credits, receive
 * buffers and rkeys are back to their initial values. Messages posted by hand go through
 * {@link RawAccess#send}, on either link.
 */
abstract class ReceiveDefectsBehaviour {
    abstract LinkFixture link();

    /** Backward credits keep receives posted on the client for answers to messages posted by hand. */
    /** Reconnects off: a connection lost stays lost. */
    static final RpcRdmaOptions PLAIN = RpcRdmaOptions.builder().reconnectAttempts(0).build();
    static final RpcRdmaOptions RAW = RpcRdmaOptions.builder().backwardCredits(8).reconnectAttempts(0).build();
    /**
     * For cases that answer a held call after a reply posted by hand: without R its answer
     * is a plain Send, not a Send with Invalidate of the rkey the client withdrew at the
     * first reply (a remote invalid request that ends the connection; rxe panics on it).
     */
    static final RpcRdmaOptions RAW_NO_R = RAW.toBuilder().remoteInvalidation(false).build();

    static RpcRdmaHeader header(int xid, int proc) {
        return new RpcRdmaHeader(64, 8, 64, 8).clear().xid(xid).credit(4).proc(proc);
    }

    static MemorySegment words(int... w) {
        MemorySegment m = MemorySegment.ofArray(new byte[w.length * 4]);
        for (int i = 0; i < w.length; i++) {
            Xdr.putInt(m, i * 4L, w[i]);
        }
        return m;
    }

    static MemorySegment cat(MemorySegment a, MemorySegment b) {
        MemorySegment m = MemorySegment.ofArray(new byte[(int) (a.byteSize() + b.byteSize())]);
        MemorySegment.copy(a, 0, m, 0, a.byteSize());
        MemorySegment.copy(b, 0, m, a.byteSize(), b.byteSize());
        return m;
    }

    /** An accepted reply {xid, REPLY, MSG_ACCEPTED, AUTH_NONE/0, acceptStat} and then {@code body}. */
    static MemorySegment reply(int xid, int acceptStat, int... body) {
        int[] w = new int[6 + body.length];
        int[] head = {xid, OncRpc.REPLY, OncRpc.MSG_ACCEPTED, OncRpc.AUTH_NONE, 0, acceptStat};
        System.arraycopy(head, 0, w, 0, 6);
        System.arraycopy(body, 0, w, 6, body.length);
        return words(w);
    }

    static byte[] filled(int n, int b) {
        byte[] a = new byte[n];
        Arrays.fill(a, (byte) b);
        return a;
    }

    /**
     * Resources of both sides back where a quiet pair has them (a reply sent from another
     * thread reaches the caller before that thread gives the call's buffer back: waited for).
     */
    void quiet(LinkFixture.Ends e) {
        e.settle(); // a stray reply or error just sent may still be on its way
        Connection c = e.client();
        Connection s = e.server();
        // in memory: what was sent last (a late reply) has arrived, not merely been sent
        assertTrue(InMemoryPair.settle(RawAccess.link(c)), "in memory: both sides idle");
        link().await(() -> s.heldReceives() == 0 && c.heldReceives() == 0 && c.outstandingCalls() == 0
                && s.outstandingCalls() == 0 && c.peerOutstandingCalls() == 0 && s.peerOutstandingCalls() == 0
                && e.exposedNow() == 0);
        assertEquals(0, c.outstandingCalls(), "client: calls outstanding");
        assertEquals(0, s.outstandingCalls(), "server: backward calls outstanding");
        assertEquals(0, c.peerOutstandingCalls(), "client: backward calls unanswered");
        assertEquals(0, s.peerOutstandingCalls(), "server: forward calls unanswered");
        assertEquals(0, c.heldReceives(), "client: receive buffers held");
        assertEquals(0, s.heldReceives(), "server: receive buffers held");
        assertEquals(0, e.exposedNow(), "rkeys exposed");
        assertTrue(c.isOpen() && s.isOpen(), "both sides open");
    }

    /**
     * Answers a call the client has already had a (hand-made) reply to, and waits until the
     * client has dropped that stray reply: on verbs nothing else says it has arrived, and a
     * reply still on its way would be held by the client while {@link #quiet} counts.
     */
    void answerStray(LinkFixture.Ends e, IncomingCall held, MemorySegment reply) {
        long before = e.client().stats().unmatchedForwardReplies();
        held.reply(reply);
        assertTrue(link().await(() -> e.client().stats().unmatchedForwardReplies() == before + 1),
                "the client dropped the stray reply");
    }

    ReceivedMessage get(CompletableFuture<ReceivedMessage> f) throws Exception {
        try {
            return f.get(link().patienceMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError("the call failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new AssertionError("no reply in time", e);
        }
    }

    CallOptions patient() {
        return CallOptions.timeout(link().patienceMillis(), TimeUnit.MILLISECONDS);
    }

    // ---- write lists returned empty or echoed (implementation-experience draft §3.8) ----

    /** A handler that answers call 1 with {@code payload} as a DDP result and keeps the others. */
    static CallHandler placeFirstHoldRest(byte[] payload, ConcurrentLinkedQueue<IncomingCall> held) {
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
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        try (LinkFixture.Ends p = link().open(RAW_NO_R, held::add)) {
            MemorySegment receptacle = MemorySegment.ofArray(filled(64, 0x55));
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0x20, 1, new byte[0]),
                    CallOptions.DEFAULT.withReceptacle(receptacle));
            assertTrue(link().await(() -> held.size() == 1), "the server holds the call");
            // the reply of a failed NFS READ as one deployed server sends it: a write chunk of no segments
            MemorySegment fixed = words(0x20, 1, 8, RpcRdma.RDMA_MSG, 0, 1, 0, 0, 0);
            RawAccess.send(p.server(), cat(fixed, reply(0x20, OncRpc.SUCCESS, 5 /* NFS3ERR_IO */)));
            ReceivedMessage m = get(f);
            assertEquals(0, m.placedBytes(), "nothing was placed");
            assertEquals(5, Xdr.getInt(m.bytes(), 24), "the upper layer's error status reaches the caller");
            m.release();
            assertArrayEquals(filled(64, 0x55), receptacle.toArray(ValueLayout.JAVA_BYTE), "receptacle untouched");
            assertEquals(0, p.client().stats().malformedReplies());
            answerStray(p, held.poll(), reply(0x20, OncRpc.SUCCESS)); // the server's call is answered too
            quiet(p);
        }
    }

    @Test
    void anEchoedWriteChunkNeverFillsTheReceptacleWithMemoryTheResponderDidNotWrite() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        byte[] secret = filled(64, 0x3c);
        try (LinkFixture.Ends p = link().open(RAW_NO_R, placeFirstHoldRest(secret, held))) {
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
            assertTrue(link().await(() -> held.size() == 1), "the server holds the call");
            WriteList offered = ((CallFuture) f).request().exposure().header().writeList();
            RpcRdmaHeader h = header(2, RpcRdma.RDMA_MSG);
            h.writeList().beginChunk();
            h.writeList().addSegment(offered.handle(0, 0), offered.length(0, 0), offered.offset(0, 0));
            RawAccess.send(p.server(), ChunkTest.raw(h, reply(2, OncRpc.SUCCESS, 5)));
            m = get(f);
            m.release();
            assertArrayEquals(filled(64, 0x55), receptacle.toArray(ValueLayout.JAVA_BYTE),
                    "the receptacle holds bytes the responder never wrote (another call's chunk memory)");
            answerStray(p, held.poll(), reply(2, OncRpc.SUCCESS)); // the server's call is answered too
            quiet(p);
        }
    }

    @Test
    void anEchoedWriteChunkInAReplyWithoutResultsPlacesNothing() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        try (LinkFixture.Ends p = link().open(RAW_NO_R, held::add)) {
            MemorySegment receptacle = MemorySegment.ofArray(filled(64, 0x55));
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(3, 1, new byte[0]),
                    CallOptions.DEFAULT.withReceptacle(receptacle));
            assertTrue(link().await(() -> held.size() == 1), "the server holds the call");
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
            answerStray(p, held.poll(), reply(3, OncRpc.SUCCESS)); // the server's call is answered too
            quiet(p);
        }
    }

    @Test
    void anEchoedWriteChunkBesideAReplyChunkHoldingAReplyWithoutResultsPlacesNothing() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        try (LinkFixture.Ends p = link().open(RAW_NO_R.toBuilder().inlineThreshold(1024).build(), held::add)) {
            MemorySegment receptacle = MemorySegment.ofArray(filled(64, 0x55));
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(4, 1, new byte[0]),
                    CallOptions.DEFAULT.withMaxReplyBytes(8192).withReceptacle(receptacle));
            assertTrue(link().await(() -> held.size() == 1), "the server holds the call");
            RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
            // the responder writes a SYSTEM_ERR reply into the Reply chunk, then answers RDMA_NOMSG
            // returning the Reply chunk's length and the write chunk as it was offered
            MemorySegment r = reply(4, OncRpc.SYSTEM_ERR);
            ChunkBuffer b = RawAccess.link(p.server()).allocateChunk(r.byteSize());
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
            answerStray(p, held.poll(), reply(4, OncRpc.SUCCESS)); // the server's call is answered too
            quiet(p);
        }
    }

    // ---- a handler that throws an Error ----

    static final CallHandler THROWS_ASSERTION_ERROR = c -> {
        if (c.xid() == 0x30) {
            throw new AssertionError("test: a handler's assertion failed");
        }
        echo().handle(c);
    };

    /**
     * The first call's reply must be SYSTEM_ERR, the next ones echoes (the thread that ran
     * the handler lives on: before, it ended and the connection stayed open with nobody
     * taking its completions); the pair must stay quiet and open.
     */
    private void answeredSystemErrThenServes(LinkFixture.Ends p) throws Exception {
        CompletableFuture<ReceivedMessage> f;
        try {
            f = p.client().call(callMsg(0x30, 1, new byte[4]), patient());
        } catch (Throwable t) {
            throw new AssertionError("the call threw what the server's handler threw: " + t, t);
        }
        ReceivedMessage m = get(f);
        assertEquals(OncRpc.SYSTEM_ERR, Xdr.getInt(m.bytes(), 20), "answered SYSTEM_ERR for the handler");
        m.release();
        for (int i = 0; i < 20; i++) {
            byte[] a = {(byte) i, 2, 3};
            assertArrayEquals(a, results(get(p.client().call(callMsg(0x31 + i, 1, a), patient()))),
                    "call " + i + " after the error");
        }
        assertEquals(1, p.serverStats().handlerFailures());
        assertEquals(0, p.serverStats().connectionsLost());
        quiet(p);
    }

    @Test
    void aHandlerThatThrowsAnErrorIsAnsweredSystemErrAndTheConnectionServesOn() throws Exception {
        try (LinkFixture.Ends p = link().open(PLAIN, THROWS_ASSERTION_ERROR)) {
            answeredSystemErrThenServes(p);
        }
    }

    @Test
    void anImmediateHandlerThatThrowsAnErrorIsAnsweredSystemErrAndTheConnectionServesOn() throws Exception {
        RpcRdmaOptions busy = PLAIN.toBuilder().busyPoll(true).build();
        try (LinkFixture.Ends p = link().open(busy, CallHandler.immediate(THROWS_ASSERTION_ERROR))) {
            answeredSystemErrThenServes(p);
        }
    }

    @Test
    void aHandlerOnAnExecutorThatThrowsAnErrorIsAnsweredSystemErr() throws Exception {
        ExecutorService exec = Executors.newSingleThreadExecutor();
        try (LinkFixture.Ends p = link().open(PLAIN,
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
        try (LinkFixture.Ends p = link().open(PLAIN, oom)) {
            CompletableFuture<ReceivedMessage> f;
            try {
                f = p.client().call(callMsg(0x32, 1, new byte[4]), patient());
            } catch (Throwable t) {
                throw new AssertionError("the call threw what the server's handler threw: " + t, t);
            }
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> f.get(link().patienceMillis(), TimeUnit.MILLISECONDS));
            assertInstanceOf(ConnectionLostException.class, e.getCause());
            Connection s = p.server();
            assertTrue(link().await(() -> !s.isOpen()), "the server's connection failed");
            assertFalse(p.client().isOpen());
            assertEquals(0, p.client().outstandingCalls());
        }
    }

    @Test
    void aReplyCallbackThatThrowsAnErrorLeavesTheConnectionServing() throws Exception {
        try (LinkFixture.Ends p = link().open(PLAIN, echo())) {
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
            ran.get(link().patienceMillis(), TimeUnit.MILLISECONDS);
            assertArrayEquals(new byte[] {2}, results(get(p.client().call(callMsg(0x34, 1, new byte[] {2}),
                    patient()))));
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
        try (LinkFixture.Ends p = link().open(RAW, echo())) {
            p.client().enableBackchannel(backward::add).get(link().patienceMillis(), TimeUnit.MILLISECONDS);
            CompletableFuture<ReceivedMessage> b = p.server().call(callMsg(0x40, 7, new byte[] {9}));
            assertTrue(link().await(() -> backward.size() == 1), "the client holds the backward call");
            RawAccess.send(p.client(), malformedCall(0x40));
            assertTrue(link().await(() -> p.client().stats().rdmaErrorsReceived() == 1), "answered RDMA_ERROR");
            assertFalse(b.isDone(), "the backward call was failed by a malformed forward call");
            assertEquals(1, p.serverStats().errChunkSent(), "the forward requester was answered RDMA_ERROR");
            backward.poll().reply(reply(0x40, OncRpc.SUCCESS, 9));
            ReceivedMessage m = get(b);
            assertEquals(9, Xdr.getInt(m.bytes(), 24));
            m.release();
            quiet(p);
        }
    }

    @Test
    void aMalformedBackwardCallWithTheXidOfAForwardCallIsAnsweredAndLeavesThatCallAlone() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        try (LinkFixture.Ends p = link().open(RAW, held::add)) {
            p.client().enableBackchannel(echo()).get(link().patienceMillis(), TimeUnit.MILLISECONDS);
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0x41, 1, new byte[0]));
            assertTrue(link().await(() -> held.size() == 1), "the server holds the call");
            RawAccess.send(p.server(), malformedCall(0x41));
            assertTrue(link().await(() -> p.serverStats().rdmaErrorsReceived() == 1), "answered RDMA_ERROR");
            assertFalse(f.isDone(), "the forward call was failed by a malformed backward call");
            assertEquals(1, p.client().stats().errChunkSent(), "the backward requester was answered RDMA_ERROR");
            held.poll().reply(reply(0x41, OncRpc.SUCCESS));
            get(f).release();
            quiet(p);
        }
    }

    @Test
    void anRdmaNomsgReplyMatchingNoCallIsDroppedNotAnsweredWithRdmaError() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        try (LinkFixture.Ends p = link().open(RAW, held::add)) {
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0x42, 1, new byte[0]));
            RpcRdmaHeader h = header(0x42, RpcRdma.RDMA_NOMSG).hasReplyChunk(true);
            h.replyChunk().add(0x777, 64, 0x10000);
            assertTrue(link().await(() -> held.size() == 1), "the server holds the call");
            RawAccess.send(p.client(), ChunkTest.raw(h, null)); // a "reply" to a backward call the server never made
            assertTrue(link().await(() -> p.serverStats().unmatchedBackwardReplies() == 1), "dropped");
            assertEquals(0, p.serverStats().errChunkSent(), "a requester answered a reply with RDMA_ERROR");
            assertFalse(f.isDone(), "the client's own call was failed by the server's RDMA_ERROR");
            held.poll().reply(reply(0x42, OncRpc.SUCCESS));
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
        try (LinkFixture.Ends p = link().open(PLAIN, CallHandler.immediate(h))) {
            results(get(p.client().call(callMsg(0x50, 1, new byte[] {1}))));
            assertArrayEquals(new byte[] {7, 7}, results(get(p.client().call(callMsg(0x51, 1, new byte[] {7, 7})))),
                    "the second call's handler read its own message");
            assertInstanceOf(IllegalStateException.class, staleDuring.get(),
                    "a release from another thread during the next call's dispatch");
            Throwable after = null;
            try {
                CompletableFuture.runAsync(() -> kept.get().release()).get(link().patienceMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                after = e.getCause();
            }
            assertInstanceOf(IllegalStateException.class, after, "a release from another thread after the handler");
            assertEquals(0, p.serverStats().handlerFailures());
            quiet(p);
        }
    }

    // ---- counting ----

    @Test
    void aCallbackReplyIsNotCountedAsLate() throws Exception {
        try (LinkFixture.Ends p = link().open(PLAIN, echo())) {
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
            assertArrayEquals(new byte[] {4, 5}, got.get(link().patienceMillis(), TimeUnit.MILLISECONDS));
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
        try (LinkFixture.Ends p = link().open(RAW.toBuilder().inlineThreshold(1024).build(), big)) {
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
            assertTrue(link().await(() -> p.client().stats().creditsIgnored() == 1), "counted as ignored");
            assertEquals(ConnectionSizing.ownCalls(RAW, true), p.client().ownCallWindow());
            quiet(p);
        }
    }

}
