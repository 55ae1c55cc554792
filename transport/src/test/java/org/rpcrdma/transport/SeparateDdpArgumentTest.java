package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.rpcrdma.transport.ChunkTest.pattern;
import static org.rpcrdma.transport.ChunkTest.writeCall;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.rpc.CallFuture;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * A DDP argument that is a segment of its own ({@link DdpArgument#of}): the call message
 * holds the XDR around it, and the server sees the very call it would have seen had the
 * data been inside the message (RFC 8166 §3.4.5). From registered memory it is the read
 * chunk itself; a call that fits inline carries it in its Send; a call whose other parts
 * do not fit goes as RDMA_NOMSG, put together once in chunk memory (§3.5.3).
 */
class SeparateDdpArgumentTest {
    private static final RpcRdmaOptions OPTS = RpcRdmaOptions.builder().inlineThreshold(1024).build();

    /** Keeps the call's bytes as the server saw them and answers SUCCESS with no results. */
    static CallHandler recording(AtomicReference<byte[]> seen) {
        return call -> {
            seen.set(call.message().toByteArray());
            MemorySegment r = MemorySegment.ofArray(new byte[24]);
            int[] w = {call.xid(), OncRpc.REPLY, OncRpc.MSG_ACCEPTED, OncRpc.AUTH_NONE, 0, OncRpc.SUCCESS};
            for (int i = 0; i < w.length; i++) {
                Xdr.putInt(r, i * 4L, w[i]);
            }
            call.reply(r);
        };
    }

    /** {@code writeCall(xid, data)} without the data and its pad: the header, the length word, the trailer. */
    static MemorySegment around(int xid, int length) {
        byte[] args = new byte[4 + 8];
        MemorySegment a = MemorySegment.ofArray(args);
        Xdr.putInt(a, 0, length);
        Xdr.putLong(a, 4, 0x0102030405060708L);
        return callMsg(xid, 2, args);
    }

    private static void assertNothingHeld(InMemoryPair p) {
        assertTrue(p.settle(), "the wire settles"); // the server lets go once its reply is sent
        assertEquals(0, p.exposedCount(), "every rkey withdrawn");
        assertEquals(0, p.chunkBytesInUse(true), "client chunk memory back");
        assertEquals(0, p.chunkBytesInUse(false), "server chunk memory back");
        assertEquals(0, p.client().outstandingCalls());
        assertEquals(0, p.server().heldReceives());
        assertEquals(0, p.client().heldReceives());
    }

    @Test
    void aRegisteredPayloadIsTheReadChunkItselfAndTheServerSeesTheWholeCall() {
        AtomicReference<byte[]> seen = new AtomicReference<>();
        try (InMemoryPair p = InMemoryPair.open(OPTS, recording(seen))) {
            byte[] data = pattern(100_001, 7); // unaligned: 3 pad bytes neither sent nor read
            RegisteredBuffer b = p.allocateRegistered(128 << 10);
            MemorySegment payload = b.segment().asSlice(0, data.length);
            payload.copyFrom(MemorySegment.ofArray(data));
            CompletableFuture<ReceivedMessage> f = p.client().call(around(0x31, data.length),
                    CallOptions.DEFAULT.withDdpArgument(DdpArgument.of(44, payload)));
            RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
            assertEquals(RpcRdma.RDMA_MSG, offered.proc());
            assertEquals(44, offered.readList().chunkPosition(0));
            assertEquals(payload.address(), offered.readList().segments().offset(0), "the caller's own memory");
            f.join().release();
            assertArrayEquals(writeCall(0x31, data).toArray(ValueLayout.JAVA_BYTE), seen.get(),
                    "the server assembled exactly the call with the data inside");
            assertEquals(1, p.client().stats().zeroCopyExposures());
            assertEquals(0, p.client().stats().longCallsSent());
            assertEquals(data.length, RawAccess.settled(p).server().stats().rdmaBytesRead());
            assertNothingHeld(p);
        }
    }

    @Test
    void aPayloadOnTheHeapIsCopiedOnceToChunkMemory() {
        AtomicReference<byte[]> seen = new AtomicReference<>();
        try (InMemoryPair p = InMemoryPair.open(OPTS, recording(seen))) {
            byte[] data = pattern(20_002, 8);
            p.client().call(around(0x32, data.length), CallOptions.DEFAULT.withDdpArgument(DdpArgument.of(44, MemorySegment.ofArray(data))))
                    .join().release();
            assertArrayEquals(writeCall(0x32, data).toArray(ValueLayout.JAVA_BYTE), seen.get());
            assertEquals(0, p.client().stats().zeroCopyExposures());
            assertEquals(1, RawAccess.settled(p).server().stats().rdmaReads());
            assertNothingHeld(p);
        }
    }

    @Test
    void aCallThatFitsInlineCarriesThePayloadInItsSend() {
        AtomicReference<byte[]> seen = new AtomicReference<>();
        try (InMemoryPair p = InMemoryPair.open(OPTS, recording(seen))) {
            byte[] data = pattern(301, 9);
            RegisteredBuffer b = p.allocateRegistered(4096);
            MemorySegment payload = b.segment().asSlice(0, data.length);
            payload.copyFrom(MemorySegment.ofArray(data));
            CompletableFuture<ReceivedMessage> f = p.client().call(around(0x33, data.length),
                    CallOptions.DEFAULT.withDdpArgument(DdpArgument.of(44, payload)));
            RpcRdmaHeader sent = ((CallFuture) f).request().exposure().header();
            assertEquals(RpcRdma.RDMA_MSG, sent.proc());
            assertEquals(0, sent.readList().chunkCount(), "no chunk: it fits");
            f.join().release();
            assertArrayEquals(writeCall(0x33, data).toArray(ValueLayout.JAVA_BYTE), seen.get());
            assertEquals(0, p.client().stats().zeroCopyExposures(), "nothing exposed");
            assertEquals(0, RawAccess.settled(p).server().stats().chunkedCallsReceived());
            assertNothingHeld(p);
        }
    }

    @Test
    void aPayloadConfinedToTheCallersThreadFitsInlineAsWell() {
        AtomicReference<byte[]> seen = new AtomicReference<>();
        try (InMemoryPair p = InMemoryPair.open(OPTS, recording(seen)); Arena confined = Arena.ofConfined()) {
            byte[] data = pattern(77, 10);
            MemorySegment payload = confined.allocate(data.length);
            payload.copyFrom(MemorySegment.ofArray(data));
            p.client().call(around(0x34, data.length), CallOptions.DEFAULT.withDdpArgument(DdpArgument.of(44, payload))).join().release();
            assertArrayEquals(writeCall(0x34, data).toArray(ValueLayout.JAVA_BYTE), seen.get());
            assertNothingHeld(p);
        }
    }

    @Test
    void whenTheRestDoesNotFitInlineTheWholeCallGoesAsALongCall() {
        AtomicReference<byte[]> seen = new AtomicReference<>();
        try (InMemoryPair p = InMemoryPair.open(OPTS, recording(seen))) {
            byte[] data = pattern(5001, 11);
            byte[] tail = pattern(2000, 12); // after the data: the rest alone is over the threshold
            byte[] fullArgs = new byte[4 + Xdr.roundUp(data.length) + tail.length];
            MemorySegment fa = MemorySegment.ofArray(fullArgs);
            Xdr.putInt(fa, 0, data.length);
            MemorySegment.copy(data, 0, fa, ValueLayout.JAVA_BYTE, 4, data.length);
            MemorySegment.copy(tail, 0, fa, ValueLayout.JAVA_BYTE, 4 + Xdr.roundUp(data.length), tail.length);
            byte[] restArgs = new byte[4 + tail.length];
            MemorySegment ra = MemorySegment.ofArray(restArgs);
            Xdr.putInt(ra, 0, data.length);
            MemorySegment.copy(tail, 0, ra, ValueLayout.JAVA_BYTE, 4, tail.length);
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0x35, 2, restArgs),
                    CallOptions.DEFAULT.withDdpArgument(DdpArgument.of(44, MemorySegment.ofArray(data))));
            assertEquals(RpcRdma.RDMA_NOMSG, ((CallFuture) f).request().exposure().header().proc());
            f.join().release();
            assertArrayEquals(callMsg(0x35, 2, fullArgs).toArray(ValueLayout.JAVA_BYTE), seen.get());
            assertEquals(1, p.client().stats().longCallsSent());
            assertNothingHeld(p);
        }
    }

    @Test
    void aPayloadPositionBeyondTheMessageIsRefusedAtOnce() {
        try (InMemoryPair p = InMemoryPair.open(OPTS, recording(new AtomicReference<>()))) {
            MemorySegment m = around(0x36, 8);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> p.client().call(m,
                    CallOptions.DEFAULT.withDdpArgument(DdpArgument.of(m.byteSize() + 4, MemorySegment.ofArray(new byte[8])))));
            assertEquals("ddpArgument: DDP argument at 56 of 8 bytes (a segment of its own) is inserted beyond the end of the"
                    + " 52-byte call", e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> new DdpArgument(44, 9, MemorySegment.ofArray(new byte[8])));
            assertNull(new DdpArgument(44, 8).payload());
            assertEquals(0, p.client().stats().callsSent());
        }
    }
}
