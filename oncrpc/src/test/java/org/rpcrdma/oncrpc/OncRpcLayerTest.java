package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.oncrpc.TestProgram.PROG;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.CallTimeoutException;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.ConnectionLostException;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RdmaErrorException;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.xdr.AuthSys;
import org.rpcrdma.xdr.OncRpc;

/** The client and the dispatcher together over the transport joined in memory. */
class OncRpcLayerTest {
    private static final RpcRdmaOptions OPTS = RpcRdmaOptions.builder().backwardCredits(4).build();
    private static final RpcProcedure<Integer, Integer> HELD = new RpcProcedure<>(20, Codecs.INT, Codecs.INT);
    private static final RpcProcedure<Integer, Integer> THROWS = new RpcProcedure<>(21, Codecs.INT, Codecs.INT);
    private static final RpcProcedure<Integer, Integer> TWICE = new RpcProcedure<>(22, Codecs.INT, Codecs.INT);

    private final LinkedBlockingQueue<RpcServerCall<Integer>> held = new LinkedBlockingQueue<>();
    private final ExecutorService pool = Executors.newSingleThreadExecutor();
    private InMemoryPair pair;

    /** The test program plus: HELD keeps its calls for the test to answer, THROWS throws, TWICE answers twice. */
    private RpcDispatcher dispatcher() {
        RpcDispatcher d = TestProgram.dispatcher();
        d.program(PROG, 2).procedure(HELD, (x, call) -> held.add(call))
                .procedure(THROWS, (x, call) -> {
                    throw new IllegalStateException("handler bug");
                })
                .procedure(TWICE, (x, call) -> {
                    call.reply(x);
                    call.reply(x);
                });
        return d;
    }

    @AfterEach
    void close() {
        pool.shutdownNow();
        if (pair != null) {
            pair.close();
        }
    }

    /**
     * A pair whose client holds the server's full credit grant: a client starts with one
     * credit until a reply grants more (RFC 8166 §3.3.3), and a call holding the only
     * credit would make the transport reset an unanswering connection.
     */
    private void openGranted() throws Exception {
        pair = InMemoryPair.open(OPTS, dispatcher());
        forward(2).nullCall();
    }

    private OncRpcClient forward(int vers) {
        return new OncRpcClient(pair.client(), PROG, vers);
    }

    @Test
    void typedCallsBothWaysAndTheCallersCredential() throws Exception {
        pair = InMemoryPair.open(OPTS, dispatcher());
        OncRpcClient v2 = forward(2);
        v2.nullCall();
        assertArrayEquals(new int[] {Integer.MIN_VALUE, -1}, v2.call(TestProgram.ECHO_ARRAY4, new int[] {Integer.MIN_VALUE, -1}));
        assertEquals(TestProgram.Color.GREEN, v2.callAsync(TestProgram.ECHO_ENUM, TestProgram.Color.GREEN).get(5, TimeUnit.SECONDS));
        assertEquals(-1, v2.call(TestProgram.WHO_AM_I, null), "AUTH_NONE: the handler sees no AUTH_SYS");
        assertEquals("hi", v2.call(4, "hi", Codecs.string(16), Codecs.STRING), "procedure number and codecs given");
        assertEquals(Boolean.FALSE, v2.callAsync(1, false, Codecs.BOOL, Codecs.BOOL).get(5, TimeUnit.SECONDS));
        AuthSys me = new AuthSys(3, "client", 4242, 42, new int[] {1, 2, 3});
        assertEquals(4242, v2.withAuthSys(me).call(TestProgram.WHO_AM_I, null));
    }

    @Test
    void everyReplyErrorIsItsOwnException() throws Exception {
        pair = InMemoryPair.open(OPTS, dispatcher());
        assertThrows(RpcReplyException.ProgUnavail.class,
                () -> new OncRpcClient(pair.client(), PROG + 1, 1).nullCall());
        RpcReplyException.ProgMismatch m = assertThrows(RpcReplyException.ProgMismatch.class, () -> forward(4).nullCall());
        assertEquals(2, m.low());
        assertEquals(5, m.high());
        assertThrows(RpcReplyException.ProcUnavail.class, () -> forward(5).call(TestProgram.ECHO_ENUM, TestProgram.Color.RED));
        RpcReplyException.AuthError a = assertThrows(RpcReplyException.AuthError.class,
                () -> forward(2).withCredential(new org.rpcrdma.xdr.OpaqueAuth(77, new byte[0])).nullCall());
        assertEquals(OncRpc.AUTH_BADCRED, a.authStat());
        // a value the encoder refuses fails the call before anything is sent
        CompletableFuture<byte[]> bad = forward(2).callAsync(TestProgram.ECHO_OPAQUE16, new byte[17]);
        ExecutionException e = assertThrows(ExecutionException.class, () -> bad.get(5, TimeUnit.SECONDS));
        assertInstanceOf(IllegalArgumentException.class, e.getCause());
    }

    @Test
    void handlerRepliesLaterFromAnotherThreadHoldingNoReceiveBuffer() throws Exception {
        pair = InMemoryPair.open(OPTS, dispatcher());
        CompletableFuture<Integer> f = forward(2).callAsync(HELD, 7);
        RpcServerCall<Integer> call = held.poll(5, TimeUnit.SECONDS);
        assertFalse(f.isDone());
        assertEquals(0, pair.server().heldReceives(), "arguments decoded: the receive buffer is back in the pool");
        assertEquals(1, pair.server().peerOutstandingCalls());
        pool.submit(() -> call.reply(70)).get(5, TimeUnit.SECONDS);
        assertEquals(70, f.get(5, TimeUnit.SECONDS));
        assertTrue(call.isAnswered());
        assertThrows(IllegalStateException.class, () -> call.reply(1), "a second answer");
    }

    @Test
    void handlerThatThrowsIsAnsweredSystemErrAndASecondReplyThrows() throws Exception {
        pair = InMemoryPair.open(OPTS, dispatcher());
        assertThrows(RpcReplyException.SystemErr.class, () -> forward(2).call(THROWS, 1));
        // TWICE: the first reply goes, the second throws in the handler, which was answered already
        assertEquals(5, forward(2).call(TWICE, 5));
        assertEquals(0, pair.server().peerOutstandingCalls());
    }

    @Test
    void timeoutsAreTheTransports() throws Exception {
        openGranted();
        long t0 = System.nanoTime();
        assertThrows(CallTimeoutException.class, () -> forward(2).call(HELD, 1, 100, TimeUnit.MILLISECONDS));
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5));
        CompletableFuture<Integer> f = forward(2).callAsync(HELD, 2, 100, TimeUnit.MILLISECONDS);
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
        assertInstanceOf(CallTimeoutException.class, e.getCause());
        assertThrows(IllegalArgumentException.class, () -> forward(2).callAsync(HELD, 3, -1, TimeUnit.SECONDS));
    }

    @Test
    void aLostConnectionCompletesEveryPendingCall() throws Exception {
        openGranted();
        List<CompletableFuture<Integer>> pending = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            pending.add(forward(2).callAsync(HELD, i, 0, TimeUnit.SECONDS)); // no deadline: only the loss ends them
        }
        assertTrue(await(() -> held.size() == 6), "all six reached the server (" + held.size() + ")");
        pair.server().close(0, TimeUnit.MILLISECONDS);
        for (CompletableFuture<Integer> f : pending) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
            assertInstanceOf(ConnectionLostException.class, e.getCause());
        }
        // and a blocking call made now fails the same way, at once
        assertThrows(RpcRdmaException.class, () -> forward(2).call(TestProgram.ECHO_BOOL, true));
    }

    @Test
    void theSameDispatcherServesBackwardCallsAndTheSameClientMakesThem() throws Exception {
        pair = InMemoryPair.open(OPTS, dispatcher());
        AtomicReference<Connection> seenOn = new AtomicReference<>();
        RpcDispatcher onClient = TestProgram.dispatcher();
        RpcProcedure<Void, Integer> where = new RpcProcedure<>(30, Codecs.VOID, Codecs.INT);
        onClient.program(PROG, 2).procedure(where, (v, call) -> {
            seenOn.set(call.connection());
            call.reply(30);
        });
        pair.client().enableBackchannel(onClient).get(5, TimeUnit.SECONDS);
        OncRpcClient backward = new OncRpcClient(pair.server(), PROG, 2);
        backward.nullCall();
        assertEquals(Boolean.TRUE, backward.call(TestProgram.ECHO_BOOL, true));
        assertEquals(30, backward.call(where, null));
        assertSame(pair.client(), seenOn.get());
        RpcReplyException.ProgMismatch m = assertThrows(RpcReplyException.ProgMismatch.class,
                () -> new OncRpcClient(pair.server(), PROG, 9).nullCall());
        assertEquals(5, m.high());
        assertThrows(RpcReplyException.ProgUnavail.class,
                () -> new OncRpcClient(pair.server(), PROG + 7, 1).nullCall());
    }

    @Test
    void aForwardHandlerCallsItsCallerBackOnTheConnectionTheCallCameOn() throws Exception {
        RpcProcedure<Integer, Integer> ask = new RpcProcedure<>(31, Codecs.INT, Codecs.INT);
        RpcDispatcher server = TestProgram.dispatcher();
        server.program(PROG, 2).procedure(ask, (x, call) ->
                // reply when the client has answered our backward call; no blocking here
                new OncRpcClient(call.connection(), PROG, 2)
                        .callAsync(TestProgram.ECHO_OPTIONAL, java.util.Optional.of(x))
                        .whenComplete((o, err) -> {
                            if (err != null) {
                                call.replySystemErr();
                            } else {
                                call.reply(o.orElseThrow() + 1);
                            }
                        }));
        pair = InMemoryPair.open(OPTS, server);
        pair.client().enableBackchannel(TestProgram.dispatcher()).get(5, TimeUnit.SECONDS);
        assertEquals(42, forward(2).call(ask, 41));
    }

    @Test
    void aReplyTooLargeToSendInlineReachesTheCallerAsRdmaError() throws Exception {
        RpcProcedure<Integer, byte[]> big = new RpcProcedure<>(32, Codecs.INT, Codecs.OPAQUE);
        RpcDispatcher d = dispatcher();
        AtomicReference<Throwable> handlerSaw = new AtomicReference<>();
        d.program(PROG, 2).procedure(big, (n, call) -> {
            try {
                call.reply(new byte[n]);
            } catch (RuntimeException e) {
                handlerSaw.set(e);
            }
        });
        pair = InMemoryPair.open(OPTS, d);
        assertEquals(100, forward(2).call(big, 100).length);
        // replies limited to what fits inline (no Reply chunk offered)
        assertThrows(org.rpcrdma.transport.RdmaErrorException.class,
                () -> forward(2).withMaxReplyBytes(0).call(big, OPTS.inlineThreshold()));
        assertTrue(await(() -> handlerSaw.get() != null), "the handler's reply was refused"); // after the error went
        assertInstanceOf(org.rpcrdma.transport.ReplyRefusedException.class, handlerSaw.get());
    }

    /** Waits up to 5 s for {@code c} (the pair delivers on its own threads, as a NIC); its final value. */
    private static boolean await(java.util.function.BooleanSupplier c) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!c.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                return c.getAsBoolean();
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
        return true;
    }

    @Test
    void aBackwardCallBeforeTheClientEnabledItFailsTheFuture() {
        pair = InMemoryPair.open(OPTS, TestProgram.dispatcher());
        CompletableFuture<Boolean> f = new OncRpcClient(pair.server(), PROG, 2)
                .callAsync(TestProgram.ECHO_BOOL, true);
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
        assertInstanceOf(org.rpcrdma.transport.BackchannelNotEnabledException.class, e.getCause());
    }

    @Test
    void aCallLargerThanTheInlineThresholdGoesAsALongCallAndItsEchoThroughTheReplyChunk() throws Exception {
        // The transport sends the call through a Position-Zero Read chunk; the layer offers a
        // Reply chunk (the result codec has no bound), so the echo comes back through it.
        pair = InMemoryPair.open(OPTS, dispatcher());
        byte[] big = new byte[OPTS.inlineThreshold()];
        big[big.length - 1] = 9;
        assertArrayEquals(big, forward(2).callAsync(TestProgram.ECHO_OPAQUE, big).get(5, TimeUnit.SECONDS));
        assertEquals(1, pair.client().stats().longCallsSent());
        assertEquals(1, pair.server().stats().chunkedCallsReceived(), "the server pulled the call");
        assertEquals(1, pair.client().stats().repliesThroughReplyChunk());
        assertEquals(0, pair.server().stats().errChunkSent());
        assertNull(held.peek());
        // replies limited to inline: the echo cannot come back, and the error says why
        CompletableFuture<byte[]> f = forward(2).withMaxReplyBytes(0).callAsync(TestProgram.ECHO_OPAQUE, big);
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
        assertInstanceOf(RdmaErrorException.class, e.getCause());
        assertEquals(RdmaErrorException.ERR_CHUNK, ((RdmaErrorException) e.getCause()).errorCode());
        assertThrows(CompletionException.class, f::join);
    }
}
