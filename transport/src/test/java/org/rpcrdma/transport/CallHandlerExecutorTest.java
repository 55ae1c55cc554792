package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/** {@link CallHandler#onExecutor}: handlers off the completion thread, failures still answered. */
class CallHandlerExecutorTest {
    @Test
    void handlerRunsOnTheExecutorAndReplies() throws Exception {
        ExecutorService ex = Executors.newSingleThreadExecutor(r -> new Thread(r, "handler-pool"));
        AtomicReference<String> thread = new AtomicReference<>();
        CallHandler echo = echo();
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), CallHandler.onExecutor(ex, call -> {
            thread.set(Thread.currentThread().getName());
            echo.handle(call);
        }))) {
            byte[] a = {1, 2, 3, 4};
            assertArrayEquals(a, results(p.client().call(callMsg(7, 1, a)).get(10, TimeUnit.SECONDS)));
            assertEquals("handler-pool", thread.get());
        } finally {
            ex.shutdownNow();
        }
    }

    @Test
    void aHandlerThatThrowsOnTheExecutorIsAnsweredSystemErr() throws Exception {
        ExecutorService ex = Executors.newSingleThreadExecutor();
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), CallHandler.onExecutor(ex, call -> {
            throw new IllegalStateException("boom");
        }))) {
            assertSystemErr(p, 8);
            assertEquals(1, RawAccess.settled(p).server().stats().handlerFailures());
        } finally {
            ex.shutdownNow();
        }
    }

    @Test
    void aRejectingExecutorGetsTheCallAnsweredSystemErr() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), CallHandler.onExecutor(task -> {
            throw new RejectedExecutionException("full");
        }, echo()))) {
            assertSystemErr(p, 9);
            assertNotEquals(0, RawAccess.settled(p).server().stats().handlerFailures());
        }
    }

    private static void assertSystemErr(InMemoryPair p, int xid) throws Exception {
        try (ReceivedMessage m = p.client().call(callMsg(xid, 1, new byte[4])).get(10, TimeUnit.SECONDS)) {
            MemorySegment r = m.bytes();
            assertEquals(xid, Xdr.getInt(r, 0));
            assertEquals(OncRpc.MSG_ACCEPTED, Xdr.getInt(r, 8));
            assertEquals(OncRpc.SYSTEM_ERR, Xdr.getInt(r, 20));
        }
    }
}
