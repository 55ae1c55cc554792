package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ChunkTest.ddpEcho;
import static org.rpcrdma.transport.ChunkTest.pattern;
import static org.rpcrdma.transport.ChunkTest.writeCall;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.chunk.ChunkBuffer;
import org.rpcrdma.transport.rpc.CallFuture;
import org.rpcrdma.transport.wire.RpcRdmaHeader;

/**
 * Zero copy from {@link RegisteredBuffer}s over {@link InMemoryPair}: a DDP argument, a
 * long call and a receptacle in registered memory are exposed in place (the chunk's
 * address is the caller's own, {@code zeroCopyExposures} counts them, nothing is copied),
 * the rkeys still die with the call, and the buffers' ownership: registered once per
 * connection, released exactly once, never while a call exposes them.
 */
class ZeroCopyTest {
    private static final RpcRdmaOptions OPTS = RpcRdmaOptions.defaults().withInlineThreshold(1024);

    /** {@code msg} copied into {@code b} at its start; the slice. */
    private static MemorySegment into(RegisteredBuffer b, MemorySegment msg) {
        MemorySegment s = b.segment().asSlice(0, msg.byteSize());
        s.copyFrom(msg);
        return s;
    }

    @Test
    void aWritePayloadInRegisteredMemoryIsReadInPlace() {
        try (InMemoryPair p = InMemoryPair.open(OPTS, ddpEcho())) {
            RegisteredBuffer b = p.allocateRegistered(64 << 10);
            byte[] data = pattern(10_001, 1);
            MemorySegment call = into(b, writeCall(0x10, data));
            CompletableFuture<ReceivedMessage> f = p.client().call(call,
                    CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44, data.length))
                            .withReceptacle(MemorySegment.ofArray(new byte[16_384])));
            RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
            assertEquals(call.address() + 44, offered.readList().segments().offset(0),
                    "the read chunk is the caller's own memory");
            ReceivedMessage m = f.join();
            assertEquals(data.length, m.placedBytes());
            m.release();
            Supplier<RpcRdmaStats> cs = p.client()::stats;
            assertEquals(1, cs.get().zeroCopyExposures(), "the payload; the heap receptacle was copied");
            assertEquals(1, cs.get().registeredBufferRegistrations());
            assertEquals(0, p.exposedCount());
        }
    }

    @Test
    void aReceptacleInRegisteredMemoryIsWrittenInPlace() {
        try (InMemoryPair p = InMemoryPair.open(OPTS, ddpEcho())) {
            RegisteredBuffer b = p.allocateRegistered(64 << 10);
            byte[] data = pattern(30_001, 2);
            MemorySegment receptacle = b.segment().asSlice(4096, 32_768);
            receptacle.fill((byte) 0x55);
            CompletableFuture<ReceivedMessage> f = p.client().call(writeCall(0x11, data),
                    CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44,
                    data.length)).withReceptacle(receptacle));
            RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
            assertEquals(receptacle.address(), offered.writeList().offset(0, 0), "the write chunk is the receptacle");
            ReceivedMessage m = f.join();
            assertEquals(data.length, m.placedBytes());
            m.release();
            assertArrayEquals(data, receptacle.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE));
            assertEquals(0x55, receptacle.get(ValueLayout.JAVA_BYTE, data.length), "no pad written");
            assertEquals(1, p.client().stats().zeroCopyExposures());
            assertEquals(0, p.exposedCount());
            // a late RDMA Write with the completed call's rkey must not reach the caller's memory
            ChunkBuffer junk = RawAccess.link(p.server()).allocateChunk(64);
            junk.segment().fill((byte) 0x77);
            RawAccess.link(p.server()).postWrite(0, junk, 0, 64, offered.writeList().handle(0, 0), receptacle.address());
            junk.release();
            assertFalse(p.client().isOpen(), "a remote access error");
            assertArrayEquals(data, receptacle.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE), "untouched");
        }
    }

    @Test
    void aLongCallInRegisteredMemoryIsPulledInPlaceAndItsRkeyDiesWithTheCall() {
        try (InMemoryPair p = InMemoryPair.open(OPTS, echo())) {
            RegisteredBuffer b = p.allocateRegistered(8192);
            byte[] args = pattern(5000, 3);
            MemorySegment call = into(b, callMsg(0x12, 1, args));
            CompletableFuture<ReceivedMessage> f = p.client().call(call, CallOptions.DEFAULT.withMaxReplyBytes(8192));
            RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
            assertEquals(call.address(), offered.readList().segments().offset(0));
            int rkey = offered.readList().segments().handle(0);
            assertArrayEquals(args, results(f.join()));
            assertEquals(1, p.client().stats().zeroCopyExposures(), "the call; the Reply chunk is chunk memory");
            assertEquals(1, p.client().stats().longCallsSent());
            ChunkBuffer local = RawAccess.link(p.server()).allocateChunk(64);
            RawAccess.link(p.server()).postRead(0, local, 0, 64, rkey, call.address());
            assertFalse(p.client().isOpen(), "a late RDMA Read with the completed call's rkey is a remote access error");
            local.release();
        }
    }

    @Test
    void eachConnectionRegistersABufferOnceAndOrdinaryMemoryIsStillCopied() {
        try (InMemoryPair p = InMemoryPair.open(OPTS, echo()); Arena a = Arena.ofShared()) {
            RegisteredBuffer b = p.allocateRegistered(8192);
            for (int i = 0; i < 5; i++) {
                byte[] args = pattern(3000 + i, i);
                MemorySegment call = into(b, callMsg(0x20 + i, 1, args));
                assertArrayEquals(args, results(p.client().call(call,
                        CallOptions.DEFAULT.withMaxReplyBytes(8192)).join()));
            }
            MemorySegment plain = a.allocate(4000);
            plain.copyFrom(callMsg(0x30, 1, new byte[3960]));
            results(p.client().call(plain, CallOptions.DEFAULT.withMaxReplyBytes(8192)).join());
            Supplier<RpcRdmaStats> cs = p.client()::stats;
            assertEquals(5, cs.get().zeroCopyExposures(), "native memory not from the allocator is copied");
            assertEquals(6, cs.get().longCallsSent());
            assertEquals(1, cs.get().registeredBufferRegistrations(), "registered once, used five times");
        }
    }

    @Test
    void closingReleasesOnceAndWaitsForTheCallThatExposesTheMemory() {
        List<IncomingCall> held = new ArrayList<>();
        try (InMemoryPair p = InMemoryPair.open(OPTS, held::add)) {
            RegisteredBuffers all = p.registeredBuffers();
            RegisteredBuffer b = p.allocateRegistered(8192);
            MemorySegment receptacle = b.segment().asSlice(0, 4096);
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0x40, 1, new byte[8]),
                    CallOptions.DEFAULT.withReceptacle(receptacle));
            b.close();
            b.close();
            assertTrue(b.isClosed());
            assertEquals(1, all.live(), "a call exposes it: not freed yet");
            receptacle.fill((byte) 1); // still the caller's memory while the call is out
            assertEquals(1, held.size());
            held.get(0).reply(echoReply(0x40), MemorySegment.ofArray(new byte[] {9, 8, 7}));
            ReceivedMessage m = f.join();
            assertEquals(3, m.placedBytes());
            m.release();
            assertEquals(0, all.live());
            assertEquals(1, all.freed(), "freed exactly once");
            assertThrows(IllegalStateException.class, () -> receptacle.get(ValueLayout.JAVA_BYTE, 0),
                    "its memory is gone once freed");
        }
    }

    @Test
    void aCallNamingAClosedBufferFailsWithATypedError() {
        List<IncomingCall> held = new ArrayList<>();
        try (InMemoryPair p = InMemoryPair.open(OPTS, held::add)) {
            RegisteredBuffer b = p.allocateRegistered(16384);
            CompletableFuture<ReceivedMessage> first = p.client().call(callMsg(0x50, 1, new byte[8]),
                    CallOptions.DEFAULT.withReceptacle(b.segment().asSlice(8192, 4096)));
            MemorySegment call = into(b, callMsg(0x51, 1, new byte[3000]));
            b.close(); // deferred: the first call still exposes it
            CompletionException e = assertThrows(CompletionException.class, () -> p.client().call(call,
                    CallOptions.DEFAULT.withMaxReplyBytes(8192)).join());
            assertInstanceOf(ChunksUnavailableException.class, e.getCause());
            assertInstanceOf(IllegalStateException.class, e.getCause().getCause());
            assertTrue(e.getCause().getMessage().contains("is closed"), e.getCause().getMessage());
            assertEquals(1, p.client().stats().callsSent(), "the second call was not sent");
            held.get(0).reply(echoReply(0x50), MemorySegment.ofArray(new byte[3]));
            first.join().release();
            // freed now: FFM refuses the memory itself
            assertThrows(IllegalStateException.class, () -> p.client().call(call,
                    CallOptions.DEFAULT.withMaxReplyBytes(8192)));
            assertEquals(1, p.client().stats().zeroCopyExposures());
        }
    }

    @Test
    void closingThePairFreesWhatIsLeft() {
        RegisteredBuffers all;
        MemorySegment s;
        try (InMemoryPair p = InMemoryPair.open(OPTS, echo())) {
            all = p.registeredBuffers();
            RegisteredBuffer b = p.allocateRegistered(8192);
            s = into(b, callMsg(0x60, 1, new byte[3000]));
            results(p.client().call(s, CallOptions.DEFAULT.withMaxReplyBytes(8192)).join());
            p.allocateRegistered(100); // never used
            assertEquals(2, all.live());
        }
        assertEquals(0, all.live());
        assertEquals(2, all.freed());
        assertFalse(s.scope().isAlive());
    }

    @Test
    void badSizesAreRefused() {
        try (InMemoryPair p = InMemoryPair.open(OPTS, echo())) {
            assertThrows(IllegalArgumentException.class, () -> p.allocateRegistered(0));
            assertThrows(IllegalArgumentException.class, () -> p.allocateRegistered(-1));
        }
    }

    private static MemorySegment echoReply(int xid) {
        return echoReply(xid, 3);
    }

    /** An accepted REPLY to {@code xid} whose results are an opaque of {@code placed} bytes placed by DDP. */
    static MemorySegment echoReply(int xid, int placed) {
        MemorySegment r = MemorySegment.ofArray(new byte[28]);
        org.rpcrdma.xdr.Xdr.putInt(r, 0, xid);
        org.rpcrdma.xdr.Xdr.putInt(r, 4, org.rpcrdma.xdr.OncRpc.REPLY);
        org.rpcrdma.xdr.Xdr.putInt(r, 24, placed);
        return r;
    }
}
