package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RegisteredBuffer;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.RpcRdmaStats;

/**
 * A typed call's DDP-eligible argument ({@link Codecs#payload}) goes as its own segment,
 * not encoded into the call message (RFC 8166 §3.4.5): from registered memory it is
 * exposed in place as the read chunk and pulled by the server's RDMA Read; a call that
 * fits inline gathers it into the Send. The typed server hands the pulled bytes to the
 * handler as a view of the memory they were read into, not a heap copy. Over an
 * {@link InMemoryPair} (RDMA Read emulated, counters and rkeys as on verbs).
 */
class TypedDdpArgumentTest {
    static final int PROG = 0x20000088;
    static final int MIB = 1 << 20;

    /** WRITE-like: a handle, the DDP-eligible data, a trailer; answers the data's CRC-32 xor the trailer. */
    record Write(int handle, MemorySegment data, int trailer) {}

    static final XdrCodec<Write> WRITE_ARGS = XdrCodec.of((w, a) -> {
        w.writeInt(a.handle());
        Codecs.payload(2 * MIB).encode(w, a.data());
        w.writeInt(a.trailer());
    }, r -> new Write(r.readInt(), Codecs.payload(2 * MIB).decode(r), r.readInt()));

    static final RpcProcedure<Write, Long> WRITE = new RpcProcedure<>(1, WRITE_ARGS, Codecs.HYPER);

    /** What the handler saw of its argument's data (read while the call was being served). */
    record Seen(long crc, boolean nativeMemory, boolean readOnly, int handle) {}

    static long crc(MemorySegment m) {
        CRC32 c = new CRC32();
        c.update(m.asByteBuffer());
        return c.getValue();
    }

    static void fill(MemorySegment m, int seed) {
        for (long i = 0; i < m.byteSize(); i++) {
            m.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + seed + (i >>> 12)));
        }
    }

    static RpcDispatcher server(CompletableFuture<Seen> seen) {
        RpcDispatcher d = new RpcDispatcher();
        d.program(PROG, 1).procedure(WRITE, (a, call) -> {
            long crc = crc(a.data());
            seen.complete(new Seen(crc, a.data().isNative(), a.data().isReadOnly(), a.handle()));
            call.reply(crc ^ a.trailer());
        });
        return d;
    }

    static RpcRdmaOptions options() {
        return RpcRdmaOptions.builder().maxChunkBytes(2 * MIB).chunkMemoryBytes(8L * MIB).build();
    }

    @Test
    void aRegisteredOneMebibyteArgumentIsReadInPlaceAndNothingStaysHeld() throws Exception {
        CompletableFuture<Seen> seen = new CompletableFuture<>();
        try (InMemoryPair p = InMemoryPair.open(options(), server(seen))) {
            RegisteredBuffer b = p.allocateRegistered(MIB);
            fill(b.segment(), 5);
            long want = crc(b.segment());
            OncRpcClient c = new OncRpcClient(p.client(), PROG, 1);

            long got = c.call(WRITE, new Write(3, b.segment(), 0x1234), null, 0, 10, TimeUnit.SECONDS);

            assertEquals(want ^ 0x1234, got, "the server's CRC of the data, xor the trailer after it");
            assertEquals(want, seen.get().crc());
            assertEquals(3, seen.get().handle());
            Supplier<RpcRdmaStats> cs = p.client()::stats;
            Supplier<RpcRdmaStats> ss = p.server()::stats;
            assertEquals(1, cs.get().zeroCopyExposures(), "the argument was exposed in place, not copied");
            assertEquals(0, cs.get().longCallsSent(), "a DDP read chunk, the rest inline: not a long call");
            assertEquals(1, ss.get().rdmaReads());
            assertEquals(MIB, ss.get().rdmaBytesRead(), "the data alone was read, no pad, no header");
            // nothing held: calls, receives, rkeys, the registered buffer
            assertEquals(0, p.client().outstandingCalls());
            assertEquals(0, p.server().peerOutstandingCalls());
            assertEquals(0, p.client().heldReceives());
            assertEquals(0, p.server().heldReceives());
            assertEquals(1, cs.get().localInvalidations() + cs.get().remoteInvalidations(), "its one rkey withdrawn");
            b.close();
            assertEquals(1, cs.get().registeredBufferDeregistrations(), "no call uses the buffer: closed at once");
            assertEquals(0, p.registeredBuffers().live());
        }
    }

    @Test
    void theHandlerGetsAReadOnlyViewOfThePulledBytesNotAHeapCopy() throws Exception {
        CompletableFuture<Seen> seen = new CompletableFuture<>();
        try (InMemoryPair p = InMemoryPair.open(options(), server(seen))) {
            MemorySegment data = MemorySegment.ofArray(new byte[MIB]);
            fill(data, 9);
            OncRpcClient c = new OncRpcClient(p.client(), PROG, 1);

            long got = c.call(WRITE, new Write(4, data, 7), null, 0, 10, TimeUnit.SECONDS);

            assertEquals(crc(data) ^ 7, got);
            assertTrue(seen.get().nativeMemory(), "the handler's data is the memory the RDMA Read filled");
            assertTrue(seen.get().readOnly(), "and it cannot write into the transport's memory");
            assertEquals(0, p.client().stats().zeroCopyExposures(), "heap memory is copied to chunk memory");
            assertEquals(1, p.server().stats().rdmaReads());
            assertEquals(0, p.server().heldReceives());
        }
    }

    @Test
    void aSmallArgumentIsGatheredIntoTheSendAndTheHandlerGetsItOnTheHeap() throws Exception {
        CompletableFuture<Seen> seen = new CompletableFuture<>();
        try (InMemoryPair p = InMemoryPair.open(options(), server(seen))) {
            RegisteredBuffer b = p.allocateRegistered(4096);
            MemorySegment data = b.segment().asSlice(0, 1001); // unaligned: 3 pad bytes come from the encoder
            fill(data, 1);
            OncRpcClient c = new OncRpcClient(p.client(), PROG, 1);

            long got = c.call(WRITE, new Write(5, data, 0x55), null, 0, 10, TimeUnit.SECONDS);

            assertEquals(crc(data) ^ 0x55, got, "the trailer after the data's pad decodes");
            assertFalse(seen.get().nativeMemory(), "inline: a heap copy, the receive buffer goes back at once");
            assertEquals(0, p.client().stats().zeroCopyExposures(), "nothing exposed");
            assertEquals(0, p.server().stats().rdmaReads(), "inline, no chunk");
            assertEquals(0, p.server().stats().chunkedCallsReceived());
            assertEquals(0, p.server().heldReceives());
        }
    }

    @Test
    void aHandlerThatAnswersLaterStillReadsItsViewAndTheMemoryGoesBackWithTheAnswer() throws Exception {
        CompletableFuture<RpcServerCall<Long>> pending = new CompletableFuture<>();
        CompletableFuture<MemorySegment> view = new CompletableFuture<>();
        RpcDispatcher d = new RpcDispatcher();
        d.program(PROG, 1).procedure(WRITE, (a, call) -> {
            view.complete(a.data());
            pending.complete(call);
        });
        try (InMemoryPair p = InMemoryPair.open(options(), d)) {
            MemorySegment data = MemorySegment.ofArray(new byte[MIB]);
            fill(data, 2);
            OncRpcClient c = new OncRpcClient(p.client(), PROG, 1);
            CompletableFuture<Long> f = c.callAsync(WRITE, new Write(1, data, 0), null, 0);
            RpcServerCall<Long> call = pending.get(10, TimeUnit.SECONDS);
            assertEquals(crc(data), crc(view.get()), "valid after the handler returned, until it answers");
            assertEquals(1, p.server().peerOutstandingCalls());
            call.reply(crc(view.get()));
            assertEquals(crc(data), f.get(10, TimeUnit.SECONDS));
            assertEquals(0, p.server().peerOutstandingCalls());
            assertEquals(0, p.server().heldReceives());
        }
    }
}
