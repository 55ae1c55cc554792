package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.CoreDefectsTest.await;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * What every {@link RpcCaller} promises, in every call shape: the same reply, the same
 * timeout rule ({@code 0} none, the endpoint's default otherwise, {@link CallTimeoutException}
 * whatever the shape), bad arguments thrown at the call as {@link IllegalArgumentException}
 * naming the argument, with nothing sent. A subclass names the implementation and opens it
 * over a link; the peer's side runs {@link Peer}.
 */
abstract class RpcCallerContract {
    /** The endpoint's default call timeout in these cases (a software device under emulation needs longer). */
    long defaultTimeoutMillis() {
        return 300;
    }

    /** One implementation under test, its calls answered by {@code peer}. */
    interface Fixture extends AutoCloseable {
        RpcCaller caller();

        /** The connection the caller's calls go out on now (its counters must come back). */
        Connection connection();

        /** Chunks still exposed to the peer now, or -1 where only closing checks it (verbs: nothing left open). */
        int exposedChunks();

        @Override
        void close() throws Exception;
    }

    /** Opens the implementation with {@code options} (its default timeout {@link #defaultTimeoutMillis()}). */
    abstract Fixture open(RpcRdmaOptions options, CallHandler peer) throws Exception;

    RpcRdmaOptions options() {
        return RpcRdmaOptions.builder().callTimeoutMillis(defaultTimeoutMillis()).backwardCredits(4)
                .inlineThreshold(1024).build();
    }

    /** The four shapes, each returning the reply's result bytes or throwing what the caller saw. */
    enum Shape {
        FUTURE {
            @Override
            byte[] run(RpcCaller c, MemorySegment m, CallOptions o) throws Exception {
                CompletableFuture<ReceivedMessage> f = c.call(m, o);
                try {
                    return results(f.get(30, TimeUnit.SECONDS));
                } catch (ExecutionException e) {
                    throw new Later(e.getCause());
                }
            }
        },
        BLOCKING {
            @Override
            byte[] run(RpcCaller c, MemorySegment m, CallOptions o) throws Exception {
                return results(c.callAndWait(m, o));
            }
        },
        READ_IN_PLACE {
            @Override
            byte[] run(RpcCaller c, MemorySegment m, CallOptions o) throws Exception {
                return c.callAndRead(m, o, r -> r.asSlice(24).toArray(ValueLayout.JAVA_BYTE));
            }
        },
        CALLBACK {
            @Override
            byte[] run(RpcCaller c, MemorySegment m, CallOptions o) throws Exception {
                CompletableFuture<byte[]> got = new CompletableFuture<>();
                c.call(m, o, new ReplyCallback() {
                    @Override
                    public void onReply(MemorySegment reply) {
                        got.complete(reply.asSlice(24).toArray(ValueLayout.JAVA_BYTE));
                    }

                    @Override
                    public void onFailure(Throwable cause) {
                        got.completeExceptionally(cause);
                    }
                });
                try {
                    return got.get(30, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    throw new Later(e.getCause());
                }
            }
        };

        abstract byte[] run(RpcCaller c, MemorySegment m, CallOptions o) throws Exception;

        private static byte[] results(ReceivedMessage m) {
            return ConnectionLoopbackTest.results(m);
        }
    }

    /** A failure that came after the call returned (through its future or callback), not thrown at the call. */
    static final class Later extends Exception {
        Later(Throwable cause) {
            super(cause);
        }
    }

    /** What the caller saw fail: thrown at once or later, the exception itself. */
    static Throwable failure(Shape s, Fixture f, MemorySegment m, CallOptions o) {
        Throwable t = assertThrows(Throwable.class, () -> s.run(f.caller(), m, o), s + " must fail");
        return t instanceof Later l ? l.getCause() : t;
    }

    @ParameterizedTest
    @EnumSource(Shape.class)
    void aReplyComesBackInEveryShape(Shape s) throws Exception {
        try (Fixture f = open(options(), echo())) {
            byte[] args = {1, 2, 3, 4, 5, 6, 7, 8};
            for (int i = 0; i < 3; i++) {
                assertArrayEquals(args, s.run(f.caller(), callMsg(0x10 + i, 1, args), CallOptions.DEFAULT));
            }
            assertTrue(await(() -> f.connection().outstandingCalls() == 0, 5000), "no call left outstanding");
        }
    }

    @ParameterizedTest
    @EnumSource(Shape.class)
    void aDdpArgumentAndAReceptacleWorkInEveryShape(Shape s) throws Exception {
        try (Fixture f = open(options(), ChunkTest.ddpEcho())) {
            byte[] data = ChunkTest.pattern(10_001, 3); // beyond the 1 KiB inline threshold
            MemorySegment receptacle = Arena.ofAuto().allocate(16_384);
            CallOptions o = CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44, data.length))
                    .withReceptacle(receptacle);
            byte[] results = s.run(f.caller(), ChunkTest.writeCall(0x50, data), o);
            assertEquals(data.length, Xdr.getInt(MemorySegment.ofArray(results), 0), "the opaque's length word");
            assertArrayEquals(data, receptacle.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE),
                    "the result placed in the receptacle");
            assertTrue(await(() -> f.connection().outstandingCalls() == 0, 5000), "no call left outstanding");
            if (f.exposedChunks() >= 0) {
                assertEquals(0, f.exposedChunks(), "every rkey withdrawn");
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Shape.class)
    void aCallsOwnTimeoutEndsItWithCallTimeoutException(Shape s) throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        try (Fixture f = open(options(), holding(held))) {
            openWindow(s, f);
            Throwable t = failure(s, f, callMsg(0x21, 1, new byte[4]), CallOptions.timeout(50, TimeUnit.MILLISECONDS));
            CallTimeoutException e = assertInstanceOf(CallTimeoutException.class, t, s + ": " + t);
            assertEquals(0x21, e.xid());
            assertTrue(e.getMessage().contains("50 ms"), e.getMessage());
            answerLate(f, held);
        }
    }

    @ParameterizedTest
    @EnumSource(Shape.class)
    void withoutOneTheEndpointsDefaultTimeoutApplies(Shape s) throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        try (Fixture f = open(options(), holding(held))) {
            openWindow(s, f);
            long t0 = System.nanoTime();
            Throwable t = failure(s, f, callMsg(0x22, 1, new byte[4]), CallOptions.DEFAULT);
            assertInstanceOf(CallTimeoutException.class, t, s + ": " + t);
            assertTrue(t.getMessage().contains(defaultTimeoutMillis() + " ms"), t.getMessage());
            assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(defaultTimeoutMillis()),
                    "never early");
            answerLate(f, held);
        }
    }

    @ParameterizedTest
    @EnumSource(Shape.class)
    void aTimeoutOfZeroMeansNone(Shape s) throws Exception {
        // answered well after the endpoint's default timeout: a call without one still gets it
        CallHandler late = call -> Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(3 * defaultTimeoutMillis());
            } catch (InterruptedException e) {
                return;
            }
            echo().handle(call);
        });
        try (Fixture f = open(options(), late)) {
            byte[] args = {9, 8, 7, 6};
            assertArrayEquals(args, s.run(f.caller(), callMsg(0x23, 1, args), CallOptions.timeout(0, TimeUnit.SECONDS)));
        }
    }

    @ParameterizedTest
    @EnumSource(Shape.class)
    void bytesThatAreNotACallAreRefusedAtTheCall(Shape s) throws Exception {
        MemorySegment reply = MemorySegment.ofArray(new byte[24]);
        Xdr.putInt(reply, 0, 0x30);
        Xdr.putInt(reply, 4, OncRpc.REPLY);
        refusedAtTheCall(s, reply, CallOptions.DEFAULT, "rpcCall");
    }

    @ParameterizedTest
    @EnumSource(Shape.class)
    void aReplyLimitBeyondMaxChunkBytesIsRefusedAtTheCall(Shape s) throws Exception {
        refusedAtTheCall(s, callMsg(0x31, 1, new byte[4]), CallOptions.DEFAULT.withMaxReplyBytes(Integer.MAX_VALUE),
                "maxReplyBytes");
    }

    @ParameterizedTest
    @EnumSource(Shape.class)
    void aDdpArgumentBeyondTheCallIsRefusedAtTheCall(Shape s) throws Exception {
        refusedAtTheCall(s, callMsg(0x32, 1, new byte[4]), CallOptions.DEFAULT.withDdpArgument(new DdpArgument(40, 64)),
                "ddpArgument");
    }

    @ParameterizedTest
    @EnumSource(Shape.class)
    void aReceptacleConfinedToTheCallerIsRefusedAtTheCall(Shape s) throws Exception {
        try (Arena confined = Arena.ofConfined()) {
            refusedAtTheCall(s, callMsg(0x33, 1, new byte[4]),
                    CallOptions.DEFAULT.withReceptacle(confined.allocate(4096)), "receptacle");
        }
    }

    @Test
    void aNegativeTimeoutIsRefusedWhenTheOptionsAreMade() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CallOptions.timeout(-1, TimeUnit.MILLISECONDS));
        assertTrue(e.getMessage().contains("timeout -1"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CallOptions.DEFAULT.withMaxReplyBytes(-1));
    }

    private void refusedAtTheCall(Shape s, MemorySegment m, CallOptions o, String argument) throws Exception {
        AtomicInteger reached = new AtomicInteger();
        try (Fixture f = open(options(), call -> {
            reached.incrementAndGet();
            echo().handle(call);
        })) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> s.run(f.caller(), m, o),
                    s + ": thrown at the call, not through the future or callback");
            assertTrue(e.getMessage().contains(argument), "names " + argument + ": " + e.getMessage());
            assertEquals(0, f.connection().outstandingCalls());
            // the caller still works, and the refused call never reached the peer
            byte[] args = {4, 5};
            assertArrayEquals(args, s.run(f.caller(), callMsg(0x40, 1, args), CallOptions.DEFAULT));
            assertEquals(1, reached.get(), "only the good call reached the peer");
        }
    }

    /** The first call of {@link #openWindow} is answered at once; every other call is held. */
    private static CallHandler holding(ConcurrentLinkedQueue<IncomingCall> held) {
        return call -> {
            if (call.xid() == OPENS_WINDOW) {
                echo().handle(call);
            } else {
                held.add(call);
            }
        };
    }

    private static final int OPENS_WINDOW = 0x20;

    /**
     * One answered call first: a new connection's window is 1 credit until the peer's first
     * reply grants more (RFC 8166 §3.3.1), and a peer holding the only credit in an abandoned
     * call is taken for a wedged one after CallSweep.STALL_MILLIS. The late answer must come
     * on the connection the call went out on, however slowly this thread gets to it.
     */
    private static void openWindow(Shape s, Fixture f) throws Exception {
        byte[] args = {7};
        assertArrayEquals(args, s.run(f.caller(), callMsg(OPENS_WINDOW, 1, args), CallOptions.DEFAULT));
    }

    /** Answers the held calls: their late replies are released, the connection's counters come back. */
    private static void answerLate(Fixture f, ConcurrentLinkedQueue<IncomingCall> held) {
        assertTrue(await(() -> !held.isEmpty(), 5000), "the call reached the peer");
        for (IncomingCall c; (c = held.poll()) != null; ) {
            echo().handle(c);
        }
        assertTrue(await(() -> f.connection().outstandingCalls() == 0 && f.connection().abandonedCalls() == 0, 5000),
                () -> "outstanding " + f.connection().outstandingCalls() + ", abandoned "
                        + f.connection().abandonedCalls());
    }
}
