package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.CoreDefectsTest.await;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * The zero-allocation call shapes: {@link Connection#callAndRead}, callback
 * calls and immediate handlers. The loopback pair delivers on its own completion thread, so
 * a blocking caller here parks and is woken (the hand-off path); the in-memory pair
 * completes calls inside the call (the path the allocation check measures).
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ReusableCallTest {
    private static final byte[] ARGS = "twelve bytes".getBytes();

    private static byte[] resultBytes(MemorySegment reply) {
        assertEquals(OncRpc.REPLY, Xdr.getInt(reply, 4));
        return reply.asSlice(24).toArray(ValueLayout.JAVA_BYTE);
    }

    /** A handler that holds every call it gets (answered later by the test). */
    private static CallHandler holding(ConcurrentLinkedQueue<IncomingCall> held) {
        return held::add;
    }

    /**
     * One answered call, so the server's grant of 4 arrives: with the initial window of 1,
     * a single abandoned call would hold every credit and reset the connection.
     */
    private static void opensTheWindow(LoopbackPair p) throws Exception {
        p.server.engine().handler(echo());
        p.client.callAndRead(callMsg(1, 1, ARGS),
                CallOptions.timeout(5, TimeUnit.SECONDS), ReusableCallTest::resultBytes);
        assertEquals(4, p.client.ownCallWindow());
    }

    @Test
    void callAndReadReadsTheReplyInPlaceAndUsesItsSlotAgain() throws Exception {
        try (LoopbackPair p = new LoopbackPair(1024, 4, 0, 4)) {
            p.server.engine().handler(echo());
            for (int i = 0; i < 5; i++) {
                byte[] got = p.client.callAndRead(callMsg(10 + i, 1, ARGS),
                        CallOptions.timeout(5, TimeUnit.SECONDS), ReusableCallTest::resultBytes);
                assertArrayEquals(ARGS, got);
                assertEquals(1, p.client.engine().freeCallSlots(), "one slot, back in the pool after each call");
            }
            p.clientSide.sync();
            assertEquals(0, p.client.heldReceives(), "every reply's receive buffer went back after its reader");
            assertEquals(5, p.client.stats().repliesHandedOff(), "the loopback's poller took the replies");
        }
    }

    @Test
    void aReaderThatThrowsStillReleasesTheReplyAndTheSlot() throws Exception {
        try (LoopbackPair p = new LoopbackPair(1024, 4, 0, 4)) {
            p.server.engine().handler(echo());
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> p.client.callAndRead(
                    callMsg(1, 1, ARGS), CallOptions.timeout(5, TimeUnit.SECONDS), r -> {
                        throw new IllegalStateException("reader failed");
                    }));
            assertEquals("reader failed", e.getMessage());
            p.clientSide.sync();
            assertEquals(0, p.client.heldReceives());
            assertEquals(1, p.client.engine().freeCallSlots());
            assertArrayEquals(ARGS, p.client.callAndRead(callMsg(2, 1, ARGS),
                    CallOptions.timeout(5, TimeUnit.SECONDS), ReusableCallTest::resultBytes));
        }
    }

    @Test
    void aTimedOutCallAndReadIsAbandonedAndItsSlotNeverUsedAgain() throws Exception {
        try (LoopbackPair p = new LoopbackPair(1024, 4, 0, 4)) {
            opensTheWindow(p);
            ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
            p.server.engine().handler(holding(held));
            CallTimeoutException e = assertThrows(CallTimeoutException.class, () -> p.client.callAndRead(callMsg(7, 1, ARGS),
                    CallOptions.timeout(100, TimeUnit.MILLISECONDS), ReusableCallTest::resultBytes));
            assertTrue(e.getMessage().contains("0x7"), e.getMessage());
            assertEquals(1, p.client.stats().abandonedCalls());
            assertEquals(0, p.client.engine().freeCallSlots(), "the abandoned slot is still the requester's: not pooled");
            assertTrue(await(() -> !held.isEmpty(), 5000));
            echo().handle(held.poll()); // the late answer
            assertTrue(await(() -> p.client.stats().lateReplies() == 1, 5000), () -> "the late reply is released: " + p.client.stats() + " outstanding=" + p.client.outstandingCalls() + " held=" + held.size());
            p.clientSide.sync();
            assertEquals(0, p.client.heldReceives());
            assertEquals(0, p.client.outstandingCalls());
            assertEquals(0, p.client.engine().freeCallSlots(), "the abandoned slot is dropped, not reused");
            p.server.engine().handler(echo());
            assertArrayEquals(ARGS, p.client.callAndRead(callMsg(8, 1, ARGS),
                    CallOptions.timeout(5, TimeUnit.SECONDS), ReusableCallTest::resultBytes));
            assertEquals(1, p.client.engine().freeCallSlots());
        }
    }

    @Test
    void anInterruptedCallAndReadIsAbandoned() throws Exception {
        try (LoopbackPair p = new LoopbackPair(1024, 4, 0, 4)) {
            ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
            p.server.engine().handler(holding(held));
            AtomicReference<Throwable> outcome = new AtomicReference<>();
            Thread caller = Thread.ofPlatform().start(() -> {
                try {
                    p.client.callAndRead(callMsg(9, 1, ARGS),
                            CallOptions.timeout(30, TimeUnit.SECONDS), ReusableCallTest::resultBytes);
                } catch (Throwable t) {
                    outcome.set(t);
                }
            });
            assertTrue(await(() -> !held.isEmpty(), 5000));
            caller.interrupt();
            caller.join(5000);
            assertInstanceOf(InterruptedException.class, outcome.get());
            assertEquals(1, p.client.stats().abandonedCalls());
        }
    }

    /** Collects a callback call's one outcome, and counts them. */
    private static class Outcome implements ReplyCallback {
        final AtomicInteger calls = new AtomicInteger();
        final AtomicReference<byte[]> reply = new AtomicReference<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();

        @Override
        public void onReply(MemorySegment r) {
            reply.set(resultBytes(r));
            calls.incrementAndGet();
        }

        @Override
        public void onFailure(Throwable cause) {
            failure.set(cause);
            calls.incrementAndGet();
        }
    }

    @Test
    void aCallbackCallGetsItsReplyOnceAndItsSlotGoesBack() throws Exception {
        try (LoopbackPair p = new LoopbackPair(1024, 4, 0, 4)) {
            p.server.engine().handler(echo());
            Outcome o = new Outcome();
            for (int i = 0; i < 3; i++) {
                p.client.call(callMsg(20 + i, 1, ARGS), o);
                int want = i + 1;
                assertTrue(await(() -> o.calls.get() == want, 5000));
                assertArrayEquals(ARGS, o.reply.get());
            }
            p.clientSide.sync();
            assertNull(o.failure.get());
            assertEquals(3, o.calls.get());
            assertEquals(1, p.client.engine().freeCallSlots());
            assertEquals(0, p.client.heldReceives());
        }
    }

    @Test
    void aCallbackCallFailsOnceWhenItsConnectionIsLost() throws Exception {
        try (LoopbackPair p = new LoopbackPair(1024, 4, 0, 4)) {
            ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
            p.server.engine().handler(holding(held));
            Outcome o = new Outcome();
            p.client.call(callMsg(30, 1, ARGS), o);
            assertTrue(await(() -> !held.isEmpty(), 5000));
            p.client.engine().onLinkLost(new RpcRdmaException("test: link gone"));
            assertTrue(await(() -> o.calls.get() == 1, 5000));
            assertInstanceOf(ConnectionLostException.class, o.failure.get());
            Thread.sleep(50);
            assertEquals(1, o.calls.get(), "exactly one outcome");
        }
    }

    @Test
    void aCallbackCallTimesOutWithItsConnectionsCallTimeout() throws Exception {
        try (LoopbackPair p = new LoopbackPair(1024, 4, 0, 4, 100)) {
            opensTheWindow(p);
            ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
            p.server.engine().handler(holding(held));
            Outcome o = new Outcome();
            p.client.call(callMsg(40, 1, ARGS), o);
            assertTrue(await(() -> o.calls.get() == 1, 5000));
            assertInstanceOf(CallTimeoutException.class, o.failure.get());
            echo().handle(held.poll()); // the late answer: released, no second outcome
            assertTrue(await(() -> p.client.stats().lateReplies() == 1, 5000));
            p.clientSide.sync();
            assertEquals(1, o.calls.get());
            assertEquals(0, p.client.heldReceives());
            assertEquals(0, p.client.engine().freeCallSlots(), "the abandoned slot is dropped, not reused");
        }
    }

    /**
     * A callback call's deadline is stamped by the call timer, not by the caller (no clock
     * read per call): stamped from a clock read after the call was queued, it never fires
     * before the timeout has run from the call's issue, and at most two ticks after.
     */
    @Test
    void aCallTimesOutNeverBeforeItsTimeoutHasRunFromItsIssue() throws Exception {
        try (LoopbackPair p = new LoopbackPair(1024, 4, 0, 4, 100)) {
            opensTheWindow(p);
            ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
            p.server.engine().handler(holding(held));
            for (int i = 0; i < 5; i++) {
                AtomicLong failedAt = new AtomicLong();
                Outcome o = new Outcome() {
                    @Override
                    public void onFailure(Throwable cause) {
                        failedAt.set(System.nanoTime());
                        super.onFailure(cause);
                    }
                };
                Thread.sleep(i * 3); // issued at different places between the timer's ticks
                long issued = System.nanoTime();
                p.client.call(callMsg(50 + i, 1, ARGS), o);
                assertTrue(await(() -> o.calls.get() == 1, 5000));
                assertInstanceOf(CallTimeoutException.class, o.failure.get());
                long ms = TimeUnit.NANOSECONDS.toMillis(failedAt.get() - issued);
                assertTrue(ms >= 100, "timed out " + ms + " ms after its issue, before its 100 ms timeout");
                echo().handle(held.poll());
                int late = i + 1;
                assertTrue(await(() -> p.client.stats().lateReplies() == late, 5000));
            }
        }
    }

    @Test
    void bytesThatAreNotAnRpcCallAreRefusedAtOnce() {
        try (LoopbackPair p = new LoopbackPair(1024, 4, 0, 4)) {
            MemorySegment reply = MemorySegment.ofArray(new byte[24]);
            Xdr.putInt(reply, 4, OncRpc.REPLY);
            assertThrows(IllegalArgumentException.class,
                    () -> p.client.callAndRead(reply, CallOptions.timeout(1, TimeUnit.SECONDS), r -> r));
            assertThrows(IllegalArgumentException.class, () -> p.client.call(reply, new Outcome()));
            assertThrows(IllegalArgumentException.class,
                    () -> p.client.callAndRead(callMsg(1, 1, ARGS),
                            CallOptions.timeout(1, TimeUnit.SECONDS).withMaxReplyBytes(Integer.MAX_VALUE), r -> r));
            assertEquals(0, p.client.outstandingCalls());
        }
    }

    // ---------------------------------------------------------------- immediate handlers

    @Test
    void anImmediateHandlerGetsOneCallObjectUsedAgain() throws Exception {
        try (LoopbackPair p = new LoopbackPair(1024, 4, 0, 4)) {
            Set<IncomingCall> seen = Collections.newSetFromMap(new IdentityHashMap<>());
            CallHandler echo = echo();
            p.server.engine().handler(CallHandler.immediate(c -> {
                synchronized (seen) {
                    seen.add(c);
                }
                echo.handle(c);
            }));
            for (int i = 0; i < 10; i++) {
                byte[] args = Arrays.copyOf(ARGS, 4 + i * 4);
                assertArrayEquals(args, p.client.callAndRead(callMsg(50 + i, 1, args),
                        CallOptions.timeout(5, TimeUnit.SECONDS), ReusableCallTest::resultBytes));
            }
            assertEquals(1, seen.size(), "ten calls, one call object");
            p.serverSide.sync();
            assertEquals(0, p.server.heldReceives());
        }
    }

    @Test
    void anImmediateCallKeptPastItsHandlerCannotBeUsed() throws Exception {
        try (LoopbackPair p = new LoopbackPair(1024, 4, 0, 4)) {
            AtomicReference<IncomingCall> kept = new AtomicReference<>();
            CallHandler echo = echo();
            p.server.engine().handler(CallHandler.immediate(c -> {
                kept.set(c);
                echo.handle(c);
            }));
            p.client.callAndRead(callMsg(60, 1, ARGS),
                    CallOptions.timeout(5, TimeUnit.SECONDS), ReusableCallTest::resultBytes);
            p.serverSide.sync();
            IncomingCall stale = kept.get();
            MemorySegment late = MemorySegment.ofArray(new byte[24]);
            Xdr.putInt(late, 0, 60);
            Xdr.putInt(late, 4, OncRpc.REPLY);
            assertThrows(IllegalStateException.class, () -> stale.reply(late));
            assertThrows(IllegalStateException.class, () -> stale.message().bytes());
            assertEquals(1, p.server.stats().repliesSent(), "the stale reply sent nothing");
        }
    }

    @Test
    void anImmediateCallIsConfinedToItsHandlersThread() throws Exception {
        try (LoopbackPair p = new LoopbackPair(1024, 4, 0, 4)) {
            AtomicReference<Throwable> replyElsewhere = new AtomicReference<>();
            AtomicReference<Throwable> readElsewhere = new AtomicReference<>();
            CallHandler echo = echo();
            p.server.engine().handler(CallHandler.immediate(c -> {
                Thread other = Thread.ofPlatform().start(() -> {
                    try {
                        c.message().bytes();
                    } catch (Throwable t) {
                        readElsewhere.set(t);
                    }
                    try {
                        c.reply(MemorySegment.ofArray(new byte[24]));
                    } catch (Throwable t) {
                        replyElsewhere.set(t);
                    }
                });
                try {
                    other.join();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                echo.handle(c);
            }));
            assertArrayEquals(ARGS, p.client.callAndRead(callMsg(70, 1, ARGS),
                    CallOptions.timeout(5, TimeUnit.SECONDS), ReusableCallTest::resultBytes));
            assertInstanceOf(IllegalStateException.class, readElsewhere.get());
            assertInstanceOf(IllegalStateException.class, replyElsewhere.get());
        }
    }

    @Test
    void anImmediateHandlerThatReturnsWithoutAnsweringIsAnsweredSystemErr() throws Exception {
        try (LoopbackPair p = new LoopbackPair(1024, 4, 0, 4)) {
            p.server.engine().handler(CallHandler.immediate(c -> { }));
            int acceptStat = p.client.callAndRead(callMsg(80, 1, ARGS),
                    CallOptions.timeout(5, TimeUnit.SECONDS), r -> Xdr.getInt(r, 20));
            assertEquals(OncRpc.SYSTEM_ERR, acceptStat);
            assertEquals(1, p.server.stats().handlerFailures());
            p.serverSide.sync();
            assertEquals(0, p.server.heldReceives());
        }
    }

    @Test
    void anImmediateCallCountsAgainstThePeersCreditsUntilItIsAnswered() throws Exception {
        int[] seen = new int[2];
        MemorySegment reply = MemorySegment.ofArray(new byte[24]);
        CallHandler h = CallHandler.immediate(c -> {
            seen[0] = c.connection().peerOutstandingCalls();
            Xdr.putInt(reply, 0, c.xid());
            Xdr.putInt(reply, 4, OncRpc.REPLY);
            c.reply(reply);
            seen[1] = c.connection().peerOutstandingCalls();
        });
        try (InMemoryPair pair = InMemoryPair.open(RpcRdmaOptions.defaults(), h)) {
            pair.client().callAndRead(callMsg(90, 1, ARGS), CallOptions.timeout(5, TimeUnit.SECONDS), r -> null);
            assertEquals(1, seen[0], "unanswered, it holds one of the peer's credits");
            assertEquals(0, seen[1], "answered, it holds none");
            assertEquals(1, pair.server().peerCallHighWater());
            assertEquals(0, pair.server().peerOutstandingCalls());
        }
    }

    // ---------------------------------------------------------------- allocation

    /**
     * The shapes allocate nothing per call on the inline path. Measured with
     * the thread's allocation counter over 20,000 calls after a warm-up, on the in-memory
     * pair (the whole round trip runs on this thread); the bench's {@code -prof gc} shows the
     * same. The bound, 1 byte per call, leaves room for the JIT's own bookkeeping only: one
     * object per call (16 bytes at least) fails it.
     */
    @Test
    void callAndReadCallbacksAndImmediateHandlersAllocateNothingPerCall() throws Exception {
        // Through reflection: the test runs in the transport module, which reads no management module.
        Object threads = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean")
                .invoke(null);
        java.lang.reflect.Method allocated = Class.forName("com.sun.management.ThreadMXBean")
                .getMethod("getCurrentThreadAllocatedBytes");
        MemorySegment reply = MemorySegment.ofArray(new byte[24]);
        CallHandler h = CallHandler.immediate(c -> {
            Xdr.putInt(reply, 0, c.xid());
            Xdr.putInt(reply, 4, OncRpc.REPLY);
            c.reply(reply);
        });
        try (InMemoryPair pair = InMemoryPair.open(RpcRdmaOptions.defaults(), h)) {
            MemorySegment call = callMsg(0, 1, ARGS);
            long[] sum = new long[1];
            ReplyCallback cb = new ReplyCallback() {
                @Override
                public void onReply(MemorySegment r) {
                    sum[0] += r.byteSize();
                }

                @Override
                public void onFailure(Throwable cause) {
                    throw new AssertionError(cause);
                }
            };
            ReplyReader<Object> reader = r -> null;
            CallOptions fiveSeconds = CallOptions.timeout(5, TimeUnit.SECONDS); // made once, as a caller would
            int xid = 0;
            long before = 0;
            int measured = 20_000;
            for (int round = 0; round < 2; round++) { // round 0 warms up
                before = (long) allocated.invoke(threads);
                for (int i = 0; i < measured; i++) {
                    Xdr.putInt(call, 0, ++xid);
                    pair.client().callAndRead(call, fiveSeconds, reader);
                    Xdr.putInt(call, 0, ++xid);
                    pair.client().call(call, cb);
                }
            }
            long perCall = ((long) allocated.invoke(threads) - before) / (2L * measured);
            assertEquals(2L * measured * 24, sum[0], "every callback call was answered");
            assertTrue(perCall < 1, "allocated " + perCall + " bytes per call");
        }
    }
}
