package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.CoreDefectsTest.await;
import static org.rpcrdma.transport.EndpointVerbsTest.closeAndCheckNothingLeft;
import static org.rpcrdma.transport.EndpointVerbsTest.deviceAddress;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * The zero-allocation shapes (callAndRead, callback calls, an immediate handler) over real
 * verbs, in both completion modes: the caller polls or sleeps on the channel for its own
 * reply, callbacks run on whichever thread took the completion, and a timed-out call's
 * late reply is released without disturbing the next call.
 */
@Tag("verbs")
class ReusableCallVerbsTest {
    private RpcRdmaServer server;
    private RpcRdmaClient client;

    @AfterEach
    void tearDown() throws Exception {
        closeAndCheckNothingLeft(client, server);
    }

    private Connection start(RpcRdmaOptions o, CallHandler h) throws Exception {
        InetAddress ip = deviceAddress();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, h, null);
        client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
        return client.connection();
    }

    private static byte[] results(MemorySegment reply) {
        assertEquals(OncRpc.REPLY, Xdr.getInt(reply, 4));
        return reply.asSlice(24).toArray(ValueLayout.JAVA_BYTE);
    }

    @Test
    void busyPollCallAndReadAndCallbacksAgainstAnImmediateHandler() throws Exception {
        shapes(EndpointVerbsTest.OPTS.withBusyPoll(true));
    }

    @Test
    void eventModeCallAndReadAndCallbacksAgainstAnImmediateHandler() throws Exception {
        Connection c = shapes(EndpointVerbsTest.OPTS);
        // event mode: the blocking caller took its own replies off the channel (no hand-off)
        assertTrue(c.stats().repliesTakenByCaller() >= c.stats().repliesHandedOff(),
                () -> "taken " + c.stats().repliesTakenByCaller() + ", handed off "
                        + c.stats().repliesHandedOff());
    }

    /** 200 callAndRead calls, then 200 callback calls 8 at a time with callAndRead calls between them. */
    private Connection shapes(RpcRdmaOptions o) throws Exception {
        Connection c = start(o, CallHandler.immediate(echo()));
        for (int i = 0; i < 200; i++) {
            byte[] a = {(byte) i, (byte) (i >> 8), 7, 9, 11};
            assertArrayEquals(a, c.callAndRead(callMsg(0x100 + i, 1, a),
                    CallOptions.timeout(30, TimeUnit.SECONDS), ReusableCallVerbsTest::results));
        }
        Semaphore window = new Semaphore(8);
        AtomicInteger replies = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        ReplyCallback cb = new ReplyCallback() {
            @Override
            public void onReply(MemorySegment reply) {
                int xid = Xdr.getInt(reply, 0);
                byte[] want = {(byte) xid, 3, 5};
                if (!java.util.Arrays.equals(want, results(reply))) {
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
            assertTrue(window.tryAcquire(30, TimeUnit.SECONDS));
            c.call(callMsg(0x1000 + i, 1, new byte[] {(byte) (0x1000 + i), 3, 5}), cb);
            if (i % 10 == 0) {
                byte[] a = {1, 2, 3};
                assertArrayEquals(a, c.callAndRead(callMsg(0x5000 + i, 1, a),
                        CallOptions.timeout(30, TimeUnit.SECONDS), ReusableCallVerbsTest::results));
            }
        }
        assertTrue(await(() -> replies.get() == 200 || failure.get() != null, 30_000), replies.get() + " replies");
        assertEquals(null, failure.get());
        // 8 callback calls and 1 callAndRead at a time, plus 1: a callback frees its window
        // place before its slot goes back (the slot is recycled when onReply returns), so the
        // next call may take a new slot meanwhile; one completion thread runs callbacks at a time.
        assertTrue(c.engine().freeCallSlots() <= 10, c.engine().freeCallSlots() + " call slots for at most 10 calls at a time");
        return c;
    }

    @Test
    void aTimedOutCallAndReadsLateReplyIsReleasedAndTheNextCallWorks() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        AtomicInteger hold = new AtomicInteger();
        CallHandler echo = echo();
        Connection c = start(EndpointVerbsTest.OPTS.withBusyPoll(true), call -> {
            if (hold.get() == 1) {
                held.add(call);
            } else {
                echo.handle(call);
            }
        });
        byte[] a = {4, 2};
        assertArrayEquals(a, c.callAndRead(callMsg(1, 1, a),
                CallOptions.timeout(30, TimeUnit.SECONDS), ReusableCallVerbsTest::results));
        hold.set(1);
        assertThrows(CallTimeoutException.class, () -> c.callAndRead(callMsg(2, 1, a),
                CallOptions.timeout(300, TimeUnit.MILLISECONDS), ReusableCallVerbsTest::results));
        assertTrue(await(() -> !held.isEmpty(), 10_000));
        hold.set(0);
        echo.handle(held.poll()); // the late answer
        assertTrue(await(() -> c.stats().lateReplies() == 1, 10_000), "the late reply is released");
        assertArrayEquals(a, c.callAndRead(callMsg(3, 1, a),
                CallOptions.timeout(30, TimeUnit.SECONDS), ReusableCallVerbsTest::results));
        assertEquals(0, c.outstandingCalls());
        assertTrue(c.isOpen());
    }
}
