package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.CallHandler;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.MalformedReplyException;
import org.rpcrdma.transport.RdmaErrorException;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * {@link OncRpcClient#callAsync(RpcProcedure, Object, MemorySegment, int)} over an
 * {@link InMemoryPair} (the whole transport, RDMA Read and Write emulated): a WRITE-like
 * payload leaves as a read chunk, a READ-like result lands in the receptacle through the
 * write chunk, a long reply through the Reply chunk (RFC 8166 §3.4-3.5). The server here
 * is a raw handler that builds its reply by hand, as RFC 5531 §9 lays it out.
 */
class DdpCallTest {
    static final int PROG = 0x20000077;
    static final int MAX = 1 << 20;

    /** handle, opaque data (DDP-eligible), a trailer word after the data's pad. */
    record Write(int handle, MemorySegment data, int trailer) {}

    static XdrCodec<Write> writeArgs() {
        return XdrCodec.of((w, a) -> {
            w.writeInt(a.handle());
            Codecs.payload(MAX).encode(w, a.data());
            w.writeInt(a.trailer());
        }, r -> new Write(r.readInt(), Codecs.payload(MAX).decode(r), r.readInt()));
    }

    /** Echoes the data: placed in the write chunk when one is offered (and {@code place}), else inline; then the trailer. */
    static CallHandler echo(boolean place, int lengthWordDelta) {
        return call -> {
            MemorySegment in = call.message().bytes();
            int len = Xdr.getInt(in, 44);
            int trailer = Xdr.getInt(in, 48 + Xdr.roundUp(len));
            MemorySegment data = MemorySegment.ofArray(in.asSlice(48, len).toArray(ValueLayout.JAVA_BYTE));
            boolean placed = place && call.writeChunkCount() > 0;
            MemorySegment r = MemorySegment.ofArray(new byte[24 + 4 + (placed ? 0 : Xdr.roundUp(len)) + 4]);
            int[] hdr = {call.xid(), OncRpc.REPLY, OncRpc.MSG_ACCEPTED, OncRpc.AUTH_NONE, 0, OncRpc.SUCCESS,
                len + lengthWordDelta};
            for (int i = 0; i < hdr.length; i++) {
                Xdr.putInt(r, i * 4L, hdr[i]);
            }
            long at = 28;
            if (!placed) {
                MemorySegment.copy(data, 0, r, at, len);
                at += Xdr.roundUp(len);
            }
            Xdr.putInt(r, at, trailer);
            if (placed) {
                call.reply(r, data);
            } else {
                call.reply(r);
            }
        };
    }

    record Read(MemorySegment data, int trailer) {}

    static RpcProcedure<Write, Read> proc(MemorySegment receptacle) {
        return new RpcProcedure<>(1, writeArgs(), XdrCodec.of((w, v) -> { },
                r -> new Read(Codecs.payloadInto(receptacle).decode(r), r.readInt())));
    }

    static byte[] pattern(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 7 + 3);
        }
        return b;
    }

    static RpcRdmaOptions small() {
        return RpcRdmaOptions.builder().inlineThreshold(1024).build();
    }

    @Test
    void aPayloadGoesAsAReadChunkAndTheResultLandsInTheReceptacle() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(small(), echo(true, 0))) {
            OncRpcClient c = new OncRpcClient(p.client(), PROG, 1);
            byte[] data = pattern(10_001); // unaligned: 3 pad bytes neither sent nor placed
            MemorySegment receptacle = MemorySegment.ofArray(new byte[16_384]);
            Read r = c.call(proc(receptacle), new Write(9, MemorySegment.ofArray(data), 0x5a5a), receptacle, 0);
            assertEquals(10_001, r.data().byteSize());
            assertEquals(receptacle.address(), r.data().address(), "the result is the receptacle itself, not a copy");
            assertSame(receptacle.heapBase().orElseThrow(), r.data().heapBase().orElseThrow());
            assertArrayEquals(data, r.data().toArray(ValueLayout.JAVA_BYTE));
            assertEquals(0x5a5a, r.trailer(), "the item after the placed data decodes from the reduced reply");
            assertEquals(0, p.client().stats().longCallsSent(), "a DDP read chunk, not a long call");
            assertEquals(1, p.server().stats().rdmaReads(), "the server pulled the payload");
            assertEquals(1, p.server().stats().rdmaWrites(), "and pushed the result");
        }
    }

    @Test
    void aReceptacleTheServerLeavesUnusedGetsTheInlineData() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), echo(false, 0))) {
            OncRpcClient c = new OncRpcClient(p.client(), PROG, 1);
            MemorySegment receptacle = MemorySegment.ofArray(new byte[64]);
            Read r = c.call(proc(receptacle), new Write(1, MemorySegment.ofArray(pattern(5)), 7), receptacle, 0);
            assertArrayEquals(pattern(5), r.data().toArray(ValueLayout.JAVA_BYTE));
            assertArrayEquals(pattern(5), receptacle.asSlice(0, 5).toArray(ValueLayout.JAVA_BYTE));
            assertEquals(7, r.trailer());
        }
    }

    @Test
    void aLengthWordThatDisagreesWithThePlacedBytesIsAMalformedReply() {
        try (InMemoryPair p = InMemoryPair.open(small(), echo(true, 1))) {
            OncRpcClient c = new OncRpcClient(p.client(), PROG, 1);
            MemorySegment receptacle = MemorySegment.ofArray(new byte[4096]);
            ExecutionException e = assertThrows(ExecutionException.class, () -> c.callAsync(proc(receptacle),
                    new Write(1, MemorySegment.ofArray(pattern(2000)), 0), receptacle, 0).get());
            assertInstanceOf(MalformedReplyException.class, e.getCause());
        }
    }

    @Test
    void aLongReplyNeedsMaxReplyBytesForItsReplyChunk() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(small(), echo(false, 0))) {
            OncRpcClient c = new OncRpcClient(p.client(), PROG, 1);
            byte[] data = pattern(5000);
            MemorySegment receptacle = MemorySegment.ofArray(new byte[8192]);
            Read r = c.call(proc(receptacle), new Write(1, MemorySegment.ofArray(data), 3), receptacle, 8192);
            assertArrayEquals(data, r.data().toArray(ValueLayout.JAVA_BYTE));
            assertEquals(1, p.server().stats().replyChunksUsed());
            ExecutionException e = assertThrows(ExecutionException.class, () -> c.callAsync(proc(receptacle),
                    new Write(1, MemorySegment.ofArray(data), 3), receptacle, 0).get());
            assertInstanceOf(RdmaErrorException.class, e.getCause(), "no Reply chunk: the server could not answer");
        }
    }

    /**
     * The transport copies placed data into the receptacle on the thread that takes the
     * reply (the poller over RDMA); a receptacle confined to the caller's thread could not be
     * written there and the call never completed (seen against nfsd: a READ hung past its
     * timeout). Refused when the call is made instead.
     */
    @Test
    void aReceptacleConfinedToTheCallersThreadIsRefusedAtOnce() throws Exception {
        java.util.concurrent.ExecutorService replier = java.util.concurrent.Executors.newSingleThreadExecutor();
        CallHandler onAnotherThread = call -> replier.execute(() -> echo(true, 0).handle(call));
        try (InMemoryPair p = InMemoryPair.open(small(), onAnotherThread);
                java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            OncRpcClient c = new OncRpcClient(p.client(), PROG, 1);
            MemorySegment receptacle = arena.allocate(16_384);
            var f = c.callAsync(proc(receptacle), new Write(9, MemorySegment.ofArray(pattern(5000)), 1), receptacle, 0);
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, java.util.concurrent.TimeUnit.SECONDS));
            assertInstanceOf(IllegalArgumentException.class, e.getCause());
            // the same call with shared memory works
            MemorySegment shared = java.lang.foreign.Arena.ofAuto().allocate(16_384);
            Read r = c.callAsync(proc(shared), new Write(9, MemorySegment.ofArray(pattern(5000)), 1), shared, 0)
                    .get(5, java.util.concurrent.TimeUnit.SECONDS);
            assertArrayEquals(pattern(5000), r.data().toArray(ValueLayout.JAVA_BYTE));
        } finally {
            replier.shutdownNow();
        }
    }

    /**
     * A receptacle whose arena the caller closes while the call is out: the placed data
     * can't be copied in, and the call must fail, not hang (it hung: the reply was matched,
     * the copy threw on the thread taking the reply, and nothing completed the call).
     */
    @Test
    void aReceptacleClosedWhileTheCallIsOutFailsTheCall() throws Exception {
        java.util.concurrent.CompletableFuture<org.rpcrdma.transport.IncomingCall> held =
                new java.util.concurrent.CompletableFuture<>();
        try (InMemoryPair p = InMemoryPair.open(small(), held::complete)) {
            OncRpcClient c = new OncRpcClient(p.client(), PROG, 1);
            java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared();
            MemorySegment receptacle = arena.allocate(16_384);
            var f = c.callAsync(proc(receptacle), new Write(9, MemorySegment.ofArray(pattern(5000)), 1), receptacle, 0);
            org.rpcrdma.transport.IncomingCall call = held.get(5, java.util.concurrent.TimeUnit.SECONDS);
            arena.close();
            echo(true, 0).handle(call);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> f.get(5, java.util.concurrent.TimeUnit.SECONDS));
            assertInstanceOf(org.rpcrdma.transport.RpcRdmaException.class, e.getCause());
        }
    }

    @Test
    void twoPayloadsInOneCallAreRefusedBeforeAnythingIsSent() {
        RpcProcedure<Write, Void> two = new RpcProcedure<>(2, XdrCodec.of((w, a) -> {
            Codecs.payload(MAX).encode(w, a.data());
            Codecs.payload(MAX).encode(w, a.data());
        }, r -> null), Codecs.VOID);
        int[] reached = {0};
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), call -> reached[0]++)) {
            OncRpcClient c = new OncRpcClient(p.client(), PROG, 1);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> c.callAsync(two, new Write(0, MemorySegment.ofArray(new byte[4]), 0), null, 0).get());
            assertInstanceOf(IllegalArgumentException.class, e.getCause());
            assertEquals(0, p.client().outstandingCalls());
            assertEquals(0, reached[0], "nothing sent");
        }
    }
}
