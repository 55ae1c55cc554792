package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * The zero-allocation call shapes on every link: {@link Connection#callAndRead}, callback
 * calls and immediate handlers. A reply read in place gives its receive buffer and call
 * slot back; a call that times out or is interrupted is abandoned and its slot never used
 * again, its late reply released; a callback gets one outcome; an immediate handler's call
 * object is reused and confined to its handler.
 */
abstract class ReusableCallBehaviour {
    static final byte[] ARGS = "twelve bytes".getBytes();

    abstract LinkFixture link();

    /** Forward credits 4, no backward calls, reconnects off: a lost connection stays lost. */
    RpcRdmaOptions opts() {
        return RpcRdmaOptions.builder().inlineThreshold(1024).credits(4).backwardCredits(0)
                .reconnectAttempts(0).build();
    }

    CallOptions patient() {
        return CallOptions.timeout(link().patienceMillis(), TimeUnit.MILLISECONDS);
    }

    static byte[] resultBytes(MemorySegment reply) {
        assertEquals(OncRpc.REPLY, Xdr.getInt(reply, 4));
        return reply.asSlice(24).toArray(ValueLayout.JAVA_BYTE);
    }

    /** Echoes calls while {@code hold} is false, keeps them in {@code held} while it is true. */
    static CallHandler echoOrHold(AtomicInteger hold, ConcurrentLinkedQueue<IncomingCall> held) {
        CallHandler echo = echo();
        return c -> {
            if (hold.get() != 0) {
                held.add(c);
            } else {
                echo.handle(c);
            }
        };
    }

    /**
     * One answered call, so the server's grant of 4 arrives: with the initial window of 1,
     * a single abandoned call would hold every credit and reset the connection.
     */
    private void opensTheWindow(Connection c) throws Exception {
        assertArrayEquals(ARGS, c.callAndRead(callMsg(1, 1, ARGS), patient(), ReusableCallBehaviour::resultBytes));
        assertEquals(4, c.ownCallWindow());
    }

    @Test
    void callAndReadReadsTheReplyInPlaceAndUsesItsSlotAgain() throws Exception {
        try (LinkFixture.Ends e = link().open(opts(), echo())) {
            Connection c = e.client();
            for (int i = 0; i < 5; i++) {
                byte[] got = c.callAndRead(callMsg(10 + i, 1, ARGS), patient(), ReusableCallBehaviour::resultBytes);
                assertArrayEquals(ARGS, got);
                assertEquals(1, c.engine().freeCallSlots(), "one slot, back in the pool after each call");
            }
            assertTrue(link().await(() -> c.heldReceives() == 0),
                    "every reply's receive buffer went back after its reader");
        }
    }

    @Test
    void aReaderThatThrowsStillReleasesTheReplyAndTheSlot() throws Exception {
        try (LinkFixture.Ends e = link().open(opts(), echo())) {
            Connection c = e.client();
            IllegalStateException x = assertThrows(IllegalStateException.class, () -> c.callAndRead(
                    callMsg(1, 1, ARGS), patient(), r -> {
                        throw new IllegalStateException("reader failed");
                    }));
            assertEquals("reader failed", x.getMessage());
            assertTrue(link().await(() -> c.heldReceives() == 0));
            assertEquals(1, c.engine().freeCallSlots());
            assertArrayEquals(ARGS, c.callAndRead(callMsg(2, 1, ARGS), patient(), ReusableCallBehaviour::resultBytes));
        }
    }

    @Test
    void aTimedOutCallAndReadIsAbandonedItsLateReplyReleasedAndItsSlotNeverUsedAgain() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        AtomicInteger hold = new AtomicInteger();
        try (LinkFixture.Ends e = link().open(opts(), echoOrHold(hold, held))) {
            Connection c = e.client();
            opensTheWindow(c);
            hold.set(1);
            CallTimeoutException x = assertThrows(CallTimeoutException.class, () -> c.callAndRead(callMsg(7, 1, ARGS),
                    CallOptions.timeout(300, TimeUnit.MILLISECONDS), ReusableCallBehaviour::resultBytes));
            assertTrue(x.getMessage().contains("0x7"), x.getMessage());
            assertEquals(1, c.stats().abandonedCalls());
            assertEquals(0, c.engine().freeCallSlots(), "the abandoned slot is still the requester's: not pooled");
            assertTrue(link().await(() -> !held.isEmpty()));
            hold.set(0);
            echo().handle(held.poll()); // the late answer
            assertTrue(link().await(() -> c.stats().lateReplies() == 1), () -> "the late reply is released: "
                    + c.stats() + " outstanding=" + c.outstandingCalls());
            assertTrue(link().await(() -> c.heldReceives() == 0));
            assertEquals(0, c.outstandingCalls());
            assertEquals(0, c.engine().freeCallSlots(), "the abandoned slot is dropped, not reused");
            assertArrayEquals(ARGS, c.callAndRead(callMsg(8, 1, ARGS), patient(), ReusableCallBehaviour::resultBytes));
            assertEquals(1, c.engine().freeCallSlots());
            assertTrue(c.isOpen());
        }
    }

    @Test
    void anInterruptedCallAndReadIsAbandoned() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        try (LinkFixture.Ends e = link().open(opts(), held::add)) {
            Connection c = e.client();
            AtomicReference<Throwable> outcome = new AtomicReference<>();
            Thread caller = Thread.ofPlatform().start(() -> {
                try {
                    c.callAndRead(callMsg(9, 1, ARGS), patient(), ReusableCallBehaviour::resultBytes);
                } catch (Throwable t) {
                    outcome.set(t);
                }
            });
            assertTrue(link().await(() -> !held.isEmpty()));
            caller.interrupt();
            caller.join(link().patienceMillis());
            assertInstanceOf(InterruptedException.class, outcome.get());
            assertEquals(1, c.stats().abandonedCalls());
        }
    }

    /** Collects a callback call's one outcome, and counts them. */
    static class Outcome implements ReplyCallback {
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
        try (LinkFixture.Ends e = link().open(opts(), echo())) {
            Connection c = e.client();
            Outcome o = new Outcome();
            for (int i = 0; i < 3; i++) {
                c.call(callMsg(20 + i, 1, ARGS), o);
                int want = i + 1;
                assertTrue(link().await(() -> o.calls.get() == want));
                assertArrayEquals(ARGS, o.reply.get());
            }
            assertTrue(link().await(() -> c.engine().freeCallSlots() == 1 && c.heldReceives() == 0));
            assertNull(o.failure.get());
            assertEquals(3, o.calls.get());
        }
    }

    @Test
    void aCallbackCallFailsOnceWhenItsConnectionIsLost() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        try (LinkFixture.Ends e = link().open(opts(), held::add)) {
            Connection c = e.client();
            Outcome o = new Outcome();
            c.call(callMsg(30, 1, ARGS), o);
            assertTrue(link().await(() -> !held.isEmpty()));
            RawAccess.link(c).disconnect(); // the link goes
            assertTrue(link().await(() -> o.calls.get() == 1));
            assertInstanceOf(ConnectionLostException.class, o.failure.get());
            Thread.sleep(50); // room for a wrong second outcome
            assertEquals(1, o.calls.get(), "exactly one outcome");
        }
    }

    @Test
    void aCallbackCallTimesOutWithItsConnectionsCallTimeout() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        AtomicInteger hold = new AtomicInteger();
        RpcRdmaOptions timing = opts().toBuilder().callTimeoutMillis(300).build();
        try (LinkFixture.Ends e = link().open(timing, echoOrHold(hold, held))) {
            Connection c = e.client();
            opensTheWindow(c);
            hold.set(1);
            Outcome o = new Outcome();
            c.call(callMsg(40, 1, ARGS), o);
            assertTrue(link().await(() -> o.calls.get() == 1));
            assertInstanceOf(CallTimeoutException.class, o.failure.get());
            assertTrue(link().await(() -> !held.isEmpty()));
            echo().handle(held.poll()); // the late answer: released, no second outcome
            assertTrue(link().await(() -> c.stats().lateReplies() == 1));
            assertTrue(link().await(() -> c.heldReceives() == 0));
            assertEquals(1, o.calls.get());
            assertEquals(0, c.engine().freeCallSlots(), "the abandoned slot is dropped, not reused");
        }
    }

    /**
     * A callback call's deadline is stamped by the call timer, not by the caller (no clock
     * read per call): stamped from a clock read after the call was queued, it never fires
     * before the timeout has run from the call's issue.
     */
    @Test
    void aCallTimesOutNeverBeforeItsTimeoutHasRunFromItsIssue() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        AtomicInteger hold = new AtomicInteger();
        RpcRdmaOptions timing = opts().toBuilder().callTimeoutMillis(100).build();
        try (LinkFixture.Ends e = link().open(timing, echoOrHold(hold, held))) {
            Connection c = e.client();
            opensTheWindow(c);
            hold.set(1);
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
                c.call(callMsg(50 + i, 1, ARGS), o);
                assertTrue(link().await(() -> o.calls.get() == 1));
                assertInstanceOf(CallTimeoutException.class, o.failure.get());
                long ms = TimeUnit.NANOSECONDS.toMillis(failedAt.get() - issued);
                assertTrue(ms >= 100, "timed out " + ms + " ms after its issue, before its 100 ms timeout");
                assertTrue(link().await(() -> !held.isEmpty()));
                echo().handle(held.poll());
                int late = i + 1;
                assertTrue(link().await(() -> c.stats().lateReplies() == late));
            }
        }
    }

    @Test
    void bytesThatAreNotAnRpcCallAreRefusedAtOnce() throws Exception {
        try (LinkFixture.Ends e = link().open(opts(), echo())) {
            Connection c = e.client();
            MemorySegment reply = MemorySegment.ofArray(new byte[24]);
            Xdr.putInt(reply, 4, OncRpc.REPLY);
            assertThrows(IllegalArgumentException.class, () -> c.callAndRead(reply, patient(), r -> r));
            assertThrows(IllegalArgumentException.class, () -> c.call(reply, new Outcome()));
            assertThrows(IllegalArgumentException.class, () -> c.callAndRead(callMsg(1, 1, ARGS),
                    patient().withMaxReplyBytes(Integer.MAX_VALUE), r -> r));
            assertEquals(0, c.outstandingCalls());
            assertEquals(0, c.stats().callsSent(), "nothing was sent");
        }
    }

    /**
     * Many callAndRead calls, then callback calls 8 at a time with callAndRead calls between
     * them, against an immediate handler; with the client polling or sleeping on its channel.
     */
    @ParameterizedTest(name = "busy poll {0}")
    @ValueSource(booleans = {true, false})
    void callAndReadAndCallbacksAgainstAnImmediateHandler(boolean busyPoll) throws Exception {
        try (LinkFixture.Ends e = link().open(RpcRdmaOptions.builder().busyPoll(busyPoll).reconnectAttempts(0).build(),
                CallHandler.immediate(echo()))) {
            Connection c = e.client();
            for (int i = 0; i < 200; i++) {
                byte[] a = {(byte) i, (byte) (i >> 8), 7, 9, 11};
                assertArrayEquals(a, c.callAndRead(callMsg(0x100 + i, 1, a), patient(),
                        ReusableCallBehaviour::resultBytes));
            }
            Semaphore window = new Semaphore(8);
            AtomicInteger replies = new AtomicInteger();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            ReplyCallback cb = new ReplyCallback() {
                @Override
                public void onReply(MemorySegment reply) {
                    int xid = Xdr.getInt(reply, 0);
                    byte[] want = {(byte) xid, 3, 5};
                    if (!Arrays.equals(want, resultBytes(reply))) {
                        failure.compareAndSet(null, new AssertionError("reply to 0x" + Integer.toHexString(xid)));
                    }
                    replies.incrementAndGet();
                    window.release();
                }

                @Override
                public void onFailure(Throwable cause) {
                    failure.compareAndSet(null, cause);
                    window.release();
                }
            };
            for (int i = 0; i < 200; i++) {
                assertTrue(window.tryAcquire(link().patienceMillis(), TimeUnit.MILLISECONDS));
                c.call(callMsg(0x1000 + i, 1, new byte[] {(byte) (0x1000 + i), 3, 5}), cb);
                if (i % 10 == 0) {
                    byte[] a = {1, 2, 3};
                    assertArrayEquals(a, c.callAndRead(callMsg(0x5000 + i, 1, a), patient(),
                            ReusableCallBehaviour::resultBytes));
                }
            }
            assertTrue(link().await(() -> replies.get() == 200 || failure.get() != null), replies.get() + " replies");
            assertNull(failure.get());
            // 8 callback calls and 1 callAndRead at a time, plus 1: a callback frees its window
            // place before its slot goes back (the slot is recycled when onReply returns), so the
            // next call may take a new slot meanwhile; one completion thread runs callbacks at a time.
            assertTrue(c.engine().freeCallSlots() <= 10, c.engine().freeCallSlots() + " call slots for at most 10 calls at a time");
            if (!busyPoll) {
                // sleeping on the channel, the blocking caller took its own replies (no hand-off)
                assertTrue(c.stats().repliesTakenByCaller() >= c.stats().repliesHandedOff(),
                        () -> "taken " + c.stats().repliesTakenByCaller() + ", handed off " + c.stats().repliesHandedOff());
            }
        }
    }

    // ---------------------------------------------------------------- immediate handlers

    @Test
    void anImmediateHandlerGetsOneCallObjectUsedAgain() throws Exception {
        Set<IncomingCall> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        CallHandler echo = echo();
        try (LinkFixture.Ends e = link().open(opts(), CallHandler.immediate(c -> {
            synchronized (seen) {
                seen.add(c);
            }
            echo.handle(c);
        }))) {
            for (int i = 0; i < 10; i++) {
                byte[] args = Arrays.copyOf(ARGS, 4 + i * 4);
                assertArrayEquals(args, e.client().callAndRead(callMsg(50 + i, 1, args), patient(),
                        ReusableCallBehaviour::resultBytes));
            }
            synchronized (seen) {
                assertEquals(1, seen.size(), "ten calls, one call object");
            }
            Connection s = e.server();
            assertTrue(link().await(() -> s.heldReceives() == 0));
        }
    }

    @Test
    void anImmediateCallKeptPastItsHandlerCannotBeUsed() throws Exception {
        AtomicReference<IncomingCall> kept = new AtomicReference<>();
        CallHandler echo = echo();
        try (LinkFixture.Ends e = link().open(opts(), CallHandler.immediate(c -> {
            kept.set(c);
            echo.handle(c);
        }))) {
            e.client().callAndRead(callMsg(60, 1, ARGS), patient(), ReusableCallBehaviour::resultBytes);
            Connection s = e.server();
            assertTrue(link().await(() -> s.heldReceives() == 0));
            IncomingCall stale = kept.get();
            MemorySegment late = MemorySegment.ofArray(new byte[24]);
            Xdr.putInt(late, 0, 60);
            Xdr.putInt(late, 4, OncRpc.REPLY);
            assertThrows(IllegalStateException.class, () -> stale.reply(late));
            assertThrows(IllegalStateException.class, () -> stale.message().bytes());
            assertEquals(1, e.serverStats().repliesSent(), "the stale reply sent nothing");
        }
    }

    @Test
    void anImmediateCallIsConfinedToItsHandlersThread() throws Exception {
        AtomicReference<Throwable> replyElsewhere = new AtomicReference<>();
        AtomicReference<Throwable> readElsewhere = new AtomicReference<>();
        CallHandler echo = echo();
        try (LinkFixture.Ends e = link().open(opts(), CallHandler.immediate(c -> {
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
            } catch (InterruptedException x) {
                throw new IllegalStateException(x);
            }
            echo.handle(c);
        }))) {
            assertArrayEquals(ARGS, e.client().callAndRead(callMsg(70, 1, ARGS), patient(),
                    ReusableCallBehaviour::resultBytes));
            assertInstanceOf(IllegalStateException.class, readElsewhere.get());
            assertInstanceOf(IllegalStateException.class, replyElsewhere.get());
        }
    }

    @Test
    void anImmediateHandlerThatReturnsWithoutAnsweringIsAnsweredSystemErr() throws Exception {
        try (LinkFixture.Ends e = link().open(opts(), CallHandler.immediate(c -> { }))) {
            int acceptStat = e.client().callAndRead(callMsg(80, 1, ARGS), patient(), r -> Xdr.getInt(r, 20));
            assertEquals(OncRpc.SYSTEM_ERR, acceptStat);
            assertEquals(1, e.serverStats().handlerFailures());
            Connection s = e.server();
            assertTrue(link().await(() -> s.heldReceives() == 0));
        }
    }

    @Test
    void anImmediateCallCountsAgainstThePeersCreditsUntilItIsAnswered() throws Exception {
        AtomicIntegerArray seen = new AtomicIntegerArray(2);
        MemorySegment reply = MemorySegment.ofArray(new byte[24]);
        CallHandler h = CallHandler.immediate(c -> {
            seen.set(0, c.connection().peerOutstandingCalls());
            Xdr.putInt(reply, 0, c.xid());
            Xdr.putInt(reply, 4, OncRpc.REPLY);
            c.reply(reply);
            seen.set(1, c.connection().peerOutstandingCalls());
        });
        try (LinkFixture.Ends e = link().open(opts(), h)) {
            e.client().callAndRead(callMsg(90, 1, ARGS), patient(), r -> null);
            assertTrue(link().await(() -> seen.get(1) == 0), "answered, it holds none");
            assertEquals(1, seen.get(0), "unanswered, it holds one of the peer's credits");
            assertEquals(1, e.server().peerCallHighWater());
            assertEquals(0, e.server().peerOutstandingCalls());
        }
    }
}
