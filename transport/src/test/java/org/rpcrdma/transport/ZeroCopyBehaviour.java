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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.xdr.Xdr;
import org.rpcrdma.transport.rpc.CallFuture;
import org.rpcrdma.transport.chunk.ChunkBuffer;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.xdr.OncRpc;

/**
 * Zero copy from {@link RegisteredBuffer}s, on every link: a DDP argument, a long call and a
 * receptacle in registered memory are exposed in place (the chunk's address is the caller's
 * own, {@code zeroCopyExposures} counts them, the bytes arrive byte for byte), their rkeys
 * die with the call (a late RDMA Read or Write with one ends the peer's connection and
 * leaves the caller's memory alone), and the buffers' ownership: registered once per
 * connection, freed exactly once, never while a call exposes them.
 */
abstract class ZeroCopyBehaviour {
    abstract LinkFixture link();

    private RpcRdmaOptions opts() {
        return RpcRdmaOptions.builder().inlineThreshold(1024).reconnectAttempts(0).build();
    }

    /** {@code msg} copied to the start of {@code b}; the slice. */
    static MemorySegment into(RegisteredBuffer b, MemorySegment msg) {
        MemorySegment s = b.segment().asSlice(0, msg.byteSize());
        s.copyFrom(msg);
        return s;
    }

    private ReceivedMessage get(CompletableFuture<ReceivedMessage> f) throws Exception {
        return f.get(link().patienceMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void aWritePayloadAndAReceptacleInRegisteredMemoryMoveWithoutACopy() throws Exception {
        try (LinkFixture.Ends e = link().open(opts(), ddpEcho())) {
            RegisteredBuffer b = e.allocateRegistered(1 << 20);
            byte[] data = pattern(100_001, 7); // unaligned: the 3 pad bytes are neither sent nor written
            MemorySegment call = into(b, writeCall(0x100, data));
            MemorySegment receptacle = b.segment().asSlice(512 << 10, 128 << 10);
            receptacle.fill((byte) 0x55);
            Connection c = e.client();
            CompletableFuture<ReceivedMessage> f = c.call(call,
                    CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44, data.length)).withReceptacle(receptacle));
            RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
            assertEquals(call.address() + 44, offered.readList().segments().offset(0), "the read chunk is the caller's");
            assertEquals(receptacle.address(), offered.writeList().offset(0, 0), "the write chunk is the receptacle");
            ReceivedMessage m = get(f);
            assertEquals(data.length, m.placedBytes());
            assertEquals(data.length, Xdr.getInt(m.bytes(), 24));
            m.release();
            assertArrayEquals(data, receptacle.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE));
            assertEquals(0x55, receptacle.get(ValueLayout.JAVA_BYTE, data.length), "no pad written");
            RpcRdmaStats cs = c.stats();
            assertEquals(2, cs.zeroCopyExposures(), "the payload and the receptacle, in place");
            assertEquals(link().bindsWindows(opts()) ? 2 : 0, cs.windowsBound(), "under windows of their own");
            assertEquals(1, cs.registeredBufferRegistrations(), "registered once");
            assertEquals(data.length, e.serverStats().rdmaBytesRead());
            assertEquals(data.length, e.serverStats().rdmaBytesWritten());
            assertTrue(link().await(() -> e.exposedNow() == 0), "the rkeys died with the call");
        }
    }

    @Test
    void aLongCallInRegisteredMemoryIsPulledInPlaceAndALateReadWithItsRkeyFails() throws Exception {
        try (LinkFixture.Ends e = link().open(opts(), echo())) {
            RegisteredBuffer b = e.allocateRegistered(64 << 10);
            byte[] args = pattern(20_000, 3);
            MemorySegment call = into(b, callMsg(0x12, 1, args));
            Connection c = e.client();
            CompletableFuture<ReceivedMessage> f = c.call(call, CallOptions.DEFAULT.withMaxReplyBytes(args.length + 256));
            RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
            assertEquals(call.address(), offered.readList().segments().offset(0), "the call is the caller's memory");
            int rkey = offered.readList().segments().handle(0);
            assertArrayEquals(args, results(get(f)));
            assertEquals(1, c.stats().zeroCopyExposures(), "the call; the Reply chunk is chunk memory");
            assertEquals(1, c.stats().longCallsSent());
            assertEquals(1, c.stats().registeredBufferRegistrations());

            Connection sc = e.server();
            Link l = RawAccess.link(sc);
            ChunkBuffer local = l.allocateChunk(64);
            try {
                l.postRead(0, local, 0, 64, rkey, call.address());
                assertTrue(link().await(() -> !sc.isOpen()), "a late RDMA Read with the completed call's rkey failed");
            } finally {
                local.release();
            }
            b.close();
            // freed once the lost connection's link deregistered it (its release may still be under way)
            assertTrue(link().await(() -> e.registeredBuffers().freed() == 1), "freed after the loss");
        }
    }

    @Test
    void aLateWriteWithACompletedCallsRkeyFailsAndLeavesTheReceptacleAlone() throws Exception {
        try (LinkFixture.Ends e = link().open(opts(), ddpEcho())) {
            RegisteredBuffer b = e.allocateRegistered(64 << 10);
            byte[] data = pattern(20_001, 8);
            MemorySegment receptacle = b.segment().asSlice(32 << 10, 32 << 10);
            CompletableFuture<ReceivedMessage> f = e.client().call(writeCall(0x11, data),
                    CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44, data.length)).withReceptacle(receptacle));
            RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
            assertEquals(receptacle.address(), offered.writeList().offset(0, 0), "the write chunk is the receptacle");
            ReceivedMessage m = get(f);
            assertEquals(data.length, m.placedBytes());
            m.release();
            assertArrayEquals(data, receptacle.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE));
            assertEquals(1, e.client().stats().zeroCopyExposures(), "the receptacle; the heap payload was copied");

            Connection sc = e.server();
            ChunkBuffer junk = RawAccess.link(sc).allocateChunk(64);
            try {
                junk.segment().fill((byte) 0x77);
                RawAccess.link(sc).postWrite(0, junk, 0, 64, offered.writeList().handle(0, 0), receptacle.address());
                assertTrue(link().await(() -> !sc.isOpen()), "a late RDMA Write with the completed call's rkey failed");
            } finally {
                junk.release();
            }
            assertArrayEquals(data, receptacle.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE), "untouched");
        }
    }

    @Test
    void eachConnectionRegistersABufferOnceAndOrdinaryMemoryIsStillCopied() throws Exception {
        try (LinkFixture.Ends e = link().open(opts(), echo()); Arena a = Arena.ofShared()) {
            RegisteredBuffer b = e.allocateRegistered(8192);
            for (int i = 0; i < 5; i++) {
                byte[] args = pattern(3000 + i, i);
                MemorySegment call = into(b, callMsg(0x20 + i, 1, args));
                assertArrayEquals(args, results(get(e.client().call(call, CallOptions.DEFAULT.withMaxReplyBytes(8192)))));
            }
            MemorySegment plain = a.allocate(4000);
            plain.copyFrom(callMsg(0x30, 1, new byte[3960]));
            results(get(e.client().call(plain, CallOptions.DEFAULT.withMaxReplyBytes(8192))));
            RpcRdmaStats cs = e.client().stats();
            assertEquals(5, cs.zeroCopyExposures(), "native memory not from the allocator is copied");
            assertEquals(6, cs.longCallsSent());
            assertEquals(1, cs.registeredBufferRegistrations(), "registered once, used five times");
        }
    }

    @Test
    void closingABufferReleasesItOnceAndWaitsForTheCallThatExposesIt() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        try (LinkFixture.Ends e = link().open(opts(), held::add)) {
            RegisteredBuffers all = e.registeredBuffers();
            RegisteredBuffer b = e.allocateRegistered(8192);
            MemorySegment receptacle = b.segment().asSlice(0, 4096);
            CompletableFuture<ReceivedMessage> f = e.client().call(callMsg(0x40, 1, new byte[8]),
                    CallOptions.DEFAULT.withReceptacle(receptacle));
            b.close();
            b.close();
            assertTrue(b.isClosed());
            assertEquals(1, all.live(), "a call exposes it: not freed yet");
            receptacle.fill((byte) 1); // still the caller's memory while the call is out
            assertTrue(link().await(() -> held.size() == 1), "the call reached the server");
            held.poll().reply(echoReply(0x40, 3), MemorySegment.ofArray(new byte[] {9, 8, 7}));
            ReceivedMessage m = get(f);
            assertEquals(3, m.placedBytes());
            m.release();
            assertTrue(link().await(() -> all.live() == 0), "freed once the call is done");
            assertEquals(1, all.freed(), "freed exactly once");
            assertThrows(IllegalStateException.class, () -> receptacle.get(ValueLayout.JAVA_BYTE, 0),
                    "its memory is gone once freed");
        }
    }

    @Test
    void aCallNamingAClosedBufferFailsWithATypedError() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        try (LinkFixture.Ends e = link().open(opts(), held::add)) {
            RegisteredBuffer b = e.allocateRegistered(16384);
            CompletableFuture<ReceivedMessage> first = e.client().call(callMsg(0x50, 1, new byte[8]),
                    CallOptions.DEFAULT.withReceptacle(b.segment().asSlice(8192, 4096)));
            MemorySegment call = into(b, callMsg(0x51, 1, new byte[3000]));
            b.close(); // deferred: the first call still exposes it
            CompletableFuture<ReceivedMessage> second = e.client().call(call, CallOptions.DEFAULT.withMaxReplyBytes(8192));
            ExecutionException x = assertThrows(ExecutionException.class, () -> get(second));
            assertInstanceOf(ChunksUnavailableException.class, x.getCause());
            assertInstanceOf(IllegalStateException.class, x.getCause().getCause());
            assertTrue(x.getCause().getMessage().contains("is closed"), x.getCause().getMessage());
            assertEquals(1, e.client().stats().callsSent(), "the second call was not sent");
            assertTrue(link().await(() -> held.size() == 1), "the first call reached the server");
            held.poll().reply(echoReply(0x50, 3), MemorySegment.ofArray(new byte[3]));
            get(first).release();
            assertTrue(link().await(() -> e.registeredBuffers().live() == 0), "freed once the first call is done");
            // freed now: FFM refuses the memory itself
            assertThrows(IllegalStateException.class, () -> e.client().call(call,
                    CallOptions.DEFAULT.withMaxReplyBytes(8192)));
            assertEquals(1, e.client().stats().zeroCopyExposures());
        }
    }

    @Test
    void closingTheEndpointsFreesWhatIsLeft() throws Exception {
        RegisteredBuffers all;
        MemorySegment s;
        try (LinkFixture.Ends e = link().open(opts(), echo())) {
            all = e.registeredBuffers();
            RegisteredBuffer b = e.allocateRegistered(8192);
            s = into(b, callMsg(0x60, 1, new byte[3000]));
            results(get(e.client().call(s, CallOptions.DEFAULT.withMaxReplyBytes(8192))));
            e.allocateRegistered(100); // never used
            assertEquals(2, all.live());
        }
        assertEquals(0, all.live());
        assertEquals(2, all.freed());
        assertFalse(s.scope().isAlive());
    }

    @Test
    void badSizesAreRefused() throws Exception {
        try (LinkFixture.Ends e = link().open(opts(), echo())) {
            assertThrows(IllegalArgumentException.class, () -> e.allocateRegistered(0));
            assertThrows(IllegalArgumentException.class, () -> e.allocateRegistered(-1));
        }
    }

    /** An accepted REPLY to {@code xid} whose results are an opaque of {@code placed} bytes placed by DDP. */
    static MemorySegment echoReply(int xid, int placed) {
        MemorySegment r = MemorySegment.ofArray(new byte[28]);
        Xdr.putInt(r, 0, xid);
        Xdr.putInt(r, 4, org.rpcrdma.xdr.OncRpc.REPLY);
        Xdr.putInt(r, 24, placed);
        return r;
    }
}
