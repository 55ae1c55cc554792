package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ChunkTest.ddpEcho;
import static org.rpcrdma.transport.ChunkTest.pattern;
import static org.rpcrdma.transport.ChunkTest.writeCall;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;
import static org.rpcrdma.transport.ZeroCopyTest.echoReply;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.chunk.ChunkBuffer;
import org.rpcrdma.transport.chunk.RegistrationCache;
import org.rpcrdma.transport.rpc.CallFuture;
import org.rpcrdma.transport.wire.RpcRdmaHeader;

/**
 * The {@link RegistrationCache} over {@link InMemoryPair} (which registers and checks rkeys
 * as a device does): ordinary caller memory exposed in place, found again by scope and
 * range, never served once its arena is gone (even at the same address), its scope held
 * weakly, bounded with LRU eviction of unused entries, off at 0, heap/global/small memory
 * copied, everything deregistered exactly once, and a call whose exposed memory was freed
 * under it failing with a clear error.
 */
class RegistrationCacheTest {
    private static final RpcRdmaOptions OPTS = RpcRdmaOptions.builder().inlineThreshold(1024).build();
    private static final int SIZE = 32 << 10;
    /** The pages of a 20,040-byte call at a page boundary. */
    private static final int CALL_PAGES = 5 * 4096;

    /** A WRITE-like call of {@code data} placed in {@code m} (the payload at 44); the call's slice. */
    private static MemorySegment writeCallIn(MemorySegment m, int xid, byte[] data) {
        MemorySegment call = writeCall(xid, data);
        MemorySegment s = m.asSlice(0, call.byteSize());
        s.copyFrom(call);
        return s;
    }

    /** WRITE-like call from {@code mem}, READ-like result into {@code receptacle}; checks the bytes. */
    private static void writeAndRead(InMemoryPair p, MemorySegment mem, MemorySegment receptacle, int xid) {
        byte[] data = pattern(20_001, xid);
        MemorySegment call = writeCallIn(mem, xid, data);
        CompletableFuture<ReceivedMessage> f = p.client().call(call,
                CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44, data.length)).withReceptacle(receptacle));
        RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
        assertEquals(call.address() + 44, offered.readList().segments().offset(0), "the payload is read in place");
        assertEquals(receptacle.address(), offered.writeList().offset(0, 0), "the result is written in place");
        ReceivedMessage m = f.join();
        assertEquals(data.length, m.placedBytes());
        m.release();
        assertArrayEquals(data, receptacle.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void theSecondCallOverTheSameMemoryHitsAndCopiesNothing() {
        try (InMemoryPair p = InMemoryPair.open(OPTS, ddpEcho()); Arena a = Arena.ofShared()) {
            MemorySegment mem = a.allocate(SIZE);
            MemorySegment receptacle = a.allocate(SIZE);
            writeAndRead(p, mem, receptacle, 1);
            Supplier<RpcRdmaStats> cs = p.client()::stats;
            assertEquals(2, cs.get().registrationCacheMisses());
            assertEquals(0, cs.get().registrationCacheHits());
            assertEquals(2, cs.get().registeredBufferRegistrations());
            assertEquals(2, cs.get().zeroCopyExposures());
            writeAndRead(p, mem, receptacle, 2);
            assertEquals(2, cs.get().registrationCacheHits(), "both found again");
            assertEquals(2, cs.get().registeredBufferRegistrations(), "not registered again");
            assertEquals(4, cs.get().zeroCopyExposures(), "not copied");
            assertEquals(2, p.registeredBuffers().cache().entries());
            assertEquals(0, p.exposedCount(), "every rkey died with its call");
        }
    }

    @Test
    void aSliceStartingInTheSamePagesOfTheSameArenaHits() {
        try (InMemoryPair p = InMemoryPair.open(OPTS, echo()); Arena a = Arena.ofShared()) {
            MemorySegment mem = a.allocate(64 << 10, 4096);
            byte[] args = pattern(20_000, 7);
            MemorySegment call = mem.asSlice(0, 20_040);
            call.copyFrom(callMsg(0x70, 1, args));
            assertArrayEquals(args, results(p.client().call(call,
                    CallOptions.DEFAULT.withMaxReplyBytes(32 << 10)).join()));
            MemorySegment shorter = mem.asSlice(0, 18_040);
            shorter.copyFrom(callMsg(0x71, 1, new byte[18_000]));
            results(p.client().call(shorter, CallOptions.DEFAULT.withMaxReplyBytes(32 << 10)).join());
            assertEquals(1, p.client().stats().registrationCacheHits(), "inside the first one's pages");
            assertEquals(1, p.client().stats().registrationCacheMisses());
        }
    }

    @Test
    void memoryOfAClosedArenaIsNeverServedAgainEvenAtTheSameAddress() {
        try (InMemoryPair p = InMemoryPair.open(OPTS, ddpEcho()); Arena backing = Arena.ofShared()) {
            MemorySegment pages = backing.allocate(2 * SIZE, 4096);
            Arena first = Arena.ofShared();
            // the same address under another arena's scope: memory freed and allocated again
            MemorySegment mem = pages.asSlice(0, SIZE).reinterpret(SIZE, first, null);
            MemorySegment rec = pages.asSlice(SIZE, SIZE).reinterpret(SIZE, first, null);
            writeAndRead(p, mem, rec, 1);
            first.close();
            Arena second = Arena.ofShared();
            MemorySegment mem2 = pages.asSlice(0, SIZE).reinterpret(SIZE, second, null);
            MemorySegment rec2 = pages.asSlice(SIZE, SIZE).reinterpret(SIZE, second, null);
            assertEquals(mem.address(), mem2.address());
            writeAndRead(p, mem2, rec2, 2);
            Supplier<RpcRdmaStats> cs = p.client()::stats;
            assertEquals(0, cs.get().registrationCacheHits(), "a new scope at the same address is a miss");
            assertEquals(4, cs.get().registrationCacheMisses());
            assertEquals(2, cs.get().registeredBufferDeregistrations(), "the dead entries were dropped");
            assertEquals(2, p.registeredBuffers().cache().entries());
            second.close();
        }
    }

    @Test
    void theScopeIsHeldWeaklyAndACollectedArenasEntryIsDeregistered() throws InterruptedException {
        try (InMemoryPair p = InMemoryPair.open(OPTS, echo())) {
            WeakReference<MemorySegment.Scope> scope = callFromAutoArena(p, 0x80);
            for (int i = 0; i < 100 && scope.get() != null; i++) {
                System.gc();
                Thread.sleep(10);
            }
            assertTrue(scope.get() == null, "the cache kept an Arena.ofAuto() segment alive");
            callFromAutoArena(p, 0x81); // a miss sweeps what the GC collected
            Supplier<RpcRdmaStats> cs = p.client()::stats;
            assertEquals(2, cs.get().registrationCacheMisses());
            assertEquals(1, cs.get().registeredBufferDeregistrations());
            assertEquals(1, p.registeredBuffers().cache().entries());
        }
    }

    private static WeakReference<MemorySegment.Scope> callFromAutoArena(InMemoryPair p, int xid) {
        MemorySegment m = Arena.ofAuto().allocate(SIZE);
        byte[] args = pattern(20_000, xid);
        MemorySegment call = m.asSlice(0, 20_040);
        call.copyFrom(callMsg(xid, 1, args));
        assertArrayEquals(args, results(p.client().call(call, CallOptions.DEFAULT.withMaxReplyBytes(32 << 10)).join()));
        return new WeakReference<>(m.scope());
    }

    @Test
    void theLeastRecentlyUsedUnusedEntryIsEvictedWithinTheLimit() {
        RpcRdmaOptions o = OPTS.toBuilder().registrationCacheBytes(2 * CALL_PAGES).build();
        try (InMemoryPair p = InMemoryPair.open(o, echo()); Arena arena = Arena.ofShared()) {
            MemorySegment a = arena.allocate(SIZE, 4096);
            MemorySegment b = arena.allocate(SIZE, 4096);
            MemorySegment c = arena.allocate(SIZE, 4096);
            RegistrationCache cache = p.registeredBuffers().cache();
            longCall(p, a, 1);
            longCall(p, b, 2);
            longCall(p, c, 3); // evicts a
            longCall(p, b, 4); // a hit: b is the most recently used
            longCall(p, a, 5); // evicts c
            Supplier<RpcRdmaStats> cs = p.client()::stats;
            assertEquals(4, cs.get().registrationCacheMisses());
            assertEquals(1, cs.get().registrationCacheHits());
            assertEquals(2, cs.get().registrationCacheEvictions());
            assertEquals(2, cache.evictions());
            assertEquals(2, cs.get().registeredBufferDeregistrations());
            assertEquals(2 * CALL_PAGES, cache.pinnedBytes());
            longCall(p, b, 6);
            assertEquals(2, cs.get().registrationCacheHits(), "b survived: c went");
            assertEquals(6, cs.get().zeroCopyExposures(), "every call in place");
        }
    }

    private static void longCall(InMemoryPair p, MemorySegment m, int xid) {
        byte[] args = pattern(20_000, xid);
        MemorySegment call = m.asSlice(0, 20_040);
        call.copyFrom(callMsg(xid, 1, args));
        assertArrayEquals(args, results(p.client().call(call, CallOptions.DEFAULT.withMaxReplyBytes(32 << 10)).join()));
    }

    @Test
    void anEntryACallUsesIsNeverEvictedAndTheOtherMemoryIsCopiedMeanwhile() {
        RpcRdmaOptions o = OPTS.toBuilder().registrationCacheBytes(SIZE).build();
        List<IncomingCall> held = new ArrayList<>();
        try (InMemoryPair p = InMemoryPair.open(o, held::add); Arena arena = Arena.ofShared()) {
            MemorySegment rec = arena.allocate(SIZE, 4096);
            MemorySegment other = arena.allocate(SIZE, 4096);
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0x90, 1, new byte[8]),
                    CallOptions.DEFAULT.withReceptacle(rec));
            Supplier<RpcRdmaStats> cs = p.client()::stats;
            assertEquals(1, cs.get().zeroCopyExposures());
            CompletableFuture<ReceivedMessage> g = p.client().call(callMsg(0x91, 1, new byte[8]),
                    CallOptions.DEFAULT.withReceptacle(other));
            assertEquals(1, cs.get().zeroCopyExposures(), "no room: copied, the receptacle in use stays");
            assertEquals(0, cs.get().registrationCacheEvictions());
            assertEquals(0, cs.get().registeredBufferDeregistrations());
            byte[] result = pattern(5000, 9);
            assertTrue(p.settle());
            held.get(0).reply(echoReply(0x90, 5000), MemorySegment.ofArray(result));
            f.join().release();
            assertTrue(p.settle());
            assertEquals(2, held.size(), "the second call waited for the first's credit");
            held.get(1).reply(echoReply(0x91, 5000), MemorySegment.ofArray(result));
            g.join().release();
            assertArrayEquals(result, rec.asSlice(0, 5000).toArray(ValueLayout.JAVA_BYTE));
            assertArrayEquals(result, other.asSlice(0, 5000).toArray(ValueLayout.JAVA_BYTE));
            held.clear();
            CompletableFuture<ReceivedMessage> h = p.client().call(callMsg(0x92, 1, new byte[8]),
                    CallOptions.DEFAULT.withReceptacle(other));
            assertEquals(1, cs.get().registrationCacheEvictions(), "unused now: evicted");
            assertEquals(2, cs.get().zeroCopyExposures());
            assertTrue(p.settle());
            held.get(0).reply(echoReply(0x92, 5000), MemorySegment.ofArray(result));
            h.join().release();
        }
    }

    @Test
    void zeroTurnsTheCacheOffAndTheMemoryIsCopied() {
        try (InMemoryPair p = InMemoryPair.open(OPTS.toBuilder().registrationCacheBytes(0).build(), ddpEcho());
                Arena a = Arena.ofShared()) {
            MemorySegment mem = a.allocate(SIZE);
            byte[] data = pattern(20_001, 3);
            MemorySegment call = writeCallIn(mem, 3, data);
            MemorySegment rec = a.allocate(SIZE);
            CompletableFuture<ReceivedMessage> f = p.client().call(call,
                    CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44, data.length)).withReceptacle(rec));
            RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
            assertNotEquals(rec.address(), offered.writeList().offset(0, 0), "chunk memory, not the caller's");
            f.join().release();
            assertArrayEquals(data, rec.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE));
            Supplier<RpcRdmaStats> cs = p.client()::stats;
            assertEquals(0, cs.get().zeroCopyExposures());
            assertEquals(0, cs.get().registrationCacheMisses());
            assertEquals(0, cs.get().registeredBufferRegistrations());
        }
    }

    @Test
    void heapGlobalAndSmallMemoryIsCopied() {
        try (InMemoryPair p = InMemoryPair.open(OPTS, ddpEcho()); Arena a = Arena.ofShared()) {
            MemorySegment global = Arena.global().allocate(SIZE); // lives for the JVM: a small leak, once
            MemorySegment ofAddress = MemorySegment.ofAddress(a.allocate(SIZE).address()).reinterpret(SIZE);
            List<MemorySegment> copied = List.of(MemorySegment.ofArray(new byte[SIZE]), global, ofAddress,
                    a.allocate(RegistrationCache.MIN_BYTES - 1));
            int xid = 1;
            for (MemorySegment rec : copied) {
                byte[] data = pattern(3001, xid);
                ReceivedMessage m = p.client().call(writeCall(xid++, data),
                        CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44, data.length))
                                .withReceptacle(rec)).join();
                assertEquals(data.length, m.placedBytes());
                m.release();
                assertArrayEquals(data, rec.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE));
            }
            Supplier<RpcRdmaStats> cs = p.client()::stats;
            assertEquals(0, cs.get().zeroCopyExposures(), "all copied");
            assertEquals(0, cs.get().registrationCacheMisses());
            assertEquals(0, p.registeredBuffers().cache().entries());
        }
    }

    @Test
    void closingThePairDeregistersEveryEntryOnce() {
        RegistrationCache cache;
        Supplier<RpcRdmaStats> cs;
        try (Arena a = Arena.ofShared()) {
            try (InMemoryPair p = InMemoryPair.open(OPTS, ddpEcho())) {
                cache = p.registeredBuffers().cache();
                cs = p.client()::stats;
                writeAndRead(p, a.allocate(SIZE), a.allocate(SIZE), 1);
                writeAndRead(p, a.allocate(SIZE), a.allocate(SIZE), 2);
                assertEquals(4, cs.get().registeredBufferRegistrations());
                assertEquals(0, cs.get().registeredBufferDeregistrations());
                assertTrue(cache.pinnedBytes() >= 2 * SIZE, () -> "pinned " + cache.pinnedBytes());
            }
            assertEquals(4, cs.get().registeredBufferDeregistrations(), "each once");
            assertEquals(0, cache.pinnedBytes());
            assertEquals(0, cache.entries());
        }
    }

    @Test
    void aReceptacleWhoseArenaIsClosedWhileTheCallIsOutFailsTheCall() {
        List<IncomingCall> held = new ArrayList<>();
        try (InMemoryPair p = InMemoryPair.open(OPTS, held::add)) {
            Arena a = Arena.ofShared();
            MemorySegment rec = a.allocate(SIZE);
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0xa0, 1, new byte[8]),
                    CallOptions.DEFAULT.withReceptacle(rec));
            assertEquals(1, p.client().stats().zeroCopyExposures());
            a.close(); // the caller's error: the pages stay registered, the result is lost
            assertTrue(p.settle());
            held.get(0).reply(echoReply(0xa0, 5000), MemorySegment.ofArray(pattern(5000, 1)));
            CompletionException e = assertThrows(CompletionException.class, f::join);
            assertInstanceOf(RpcRdmaException.class, e.getCause());
            assertInstanceOf(IllegalStateException.class, e.getCause().getCause());
            assertTrue(e.getCause().getCause().getMessage().contains("was freed"), e.getCause().getMessage());
            assertEquals(0, p.exposedCount());
            assertTrue(p.client().isOpen(), "the connection goes on");
        }
    }

    @Test
    void aLateRdmaWriteWithACompletedCallsRkeyFails() {
        try (InMemoryPair p = InMemoryPair.open(OPTS, ddpEcho()); Arena a = Arena.ofShared()) {
            MemorySegment rec = a.allocate(SIZE);
            byte[] data = pattern(20_001, 4);
            CompletableFuture<ReceivedMessage> f = p.client().call(writeCall(4, data),
                    CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44,
                    data.length)).withReceptacle(rec));
            int rkey = ((CallFuture) f).request().exposure().header().writeList().handle(0, 0);
            f.join().release();
            assertEquals(1, p.client().stats().zeroCopyExposures());
            ChunkBuffer junk = RawAccess.link(p.server()).allocateChunk(64);
            junk.segment().fill((byte) 0x77);
            RawAccess.link(p.server()).postWrite(0, junk, 0, 64, rkey, rec.address());
            junk.release();
            assertTrue(p.settle());
            assertFalse(p.client().isOpen(), "a remote access error");
            assertArrayEquals(data, rec.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE), "untouched");
        }
    }
}
