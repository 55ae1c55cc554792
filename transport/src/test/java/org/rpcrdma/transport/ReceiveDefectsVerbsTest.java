package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;
import static org.rpcrdma.transport.EndpointDefectsVerbsTest.waitFor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.rpc.CallFuture;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.transport.wire.WriteList;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * The receive side on real verbs (Soft-RoCE guest): a handler that throws an {@link Error}
 * is answered SYSTEM_ERR while the server's poller thread lives on (before, it ended and
 * the connection stayed open with nobody taking its completions), and a reply that echoes
 * the offered write chunk without writing it leaves in the receptacle nothing another
 * call's RDMA Write left in the client's chunk memory.
 */
@Tag("verbs")
class ReceiveDefectsVerbsTest {
    private RpcRdmaServer server;
    private RpcRdmaClient client;

    @AfterEach
    void tearDown() throws Exception {
        EndpointVerbsTest.closeAndCheckNothingLeft(client, server);
    }

    private Connection start(RpcRdmaOptions o, CallHandler h) throws Exception {
        InetAddress ip = EndpointVerbsTest.deviceAddress();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, h, null);
        client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o.withReconnectAttempts(0));
        return client.connection();
    }

    private static ReceivedMessage get(CompletableFuture<ReceivedMessage> f) throws Exception {
        try {
            return f.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError("the call failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new AssertionError("no reply within 30 s", e);
        }
    }

    private static MemorySegment reply(int xid, int acceptStat, int... body) {
        MemorySegment r = MemorySegment.ofArray(new byte[24 + 4 * body.length]);
        int[] w = {xid, OncRpc.REPLY, OncRpc.MSG_ACCEPTED, OncRpc.AUTH_NONE, 0, acceptStat};
        for (int i = 0; i < w.length; i++) {
            Xdr.putInt(r, i * 4L, w[i]);
        }
        for (int i = 0; i < body.length; i++) {
            Xdr.putInt(r, 24 + i * 4L, body[i]);
        }
        return r;
    }

    private static final CallHandler THROWS_ASSERTION_ERROR = c -> {
        if (c.xid() == 0x30) {
            throw new AssertionError("test: a handler's assertion failed");
        }
        echo().handle(c);
    };

    private void errorAnsweredAndPollerLives(RpcRdmaOptions o, CallHandler h) throws Exception {
        Connection c = start(o, h);
        assertArrayEquals(new byte[] {1}, results(get(c.call(callMsg(0x2f, 1, new byte[] {1})))));
        ReceivedMessage m = get(c.call(callMsg(0x30, 1, new byte[4])));
        assertEquals(OncRpc.SYSTEM_ERR, Xdr.getInt(m.bytes(), 20), "answered SYSTEM_ERR for the handler");
        m.release();
        for (int i = 0; i < 20; i++) {
            byte[] a = {(byte) i, 2, 3};
            assertArrayEquals(a, results(get(c.call(callMsg(0x31 + i, 1, a)))), "call " + i + " after the error");
        }
        assertEquals(1, server.stats().handlerFailures());
        assertTrue(c.isOpen());
        assertEquals(0, server.stats().connectionsLost());
    }

    @Test
    void aHandlerThatThrowsAnErrorIsAnsweredAndThePollerLivesOn() throws Exception {
        errorAnsweredAndPollerLives(EndpointVerbsTest.OPTS, THROWS_ASSERTION_ERROR);
    }

    @Test
    void anImmediateHandlerThatThrowsAnErrorIsAnsweredAndTheBusyPollerLivesOn() throws Exception {
        errorAnsweredAndPollerLives(EndpointVerbsTest.OPTS.withBusyPoll(true),
                CallHandler.immediate(THROWS_ASSERTION_ERROR));
    }

    @Test
    void anEchoedWriteChunkLeavesNothingOfAnotherCallInTheReceptacle() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        byte[] secret = new byte[256];
        Arrays.fill(secret, (byte) 0x3c);
        CallHandler h = c -> {
            if (c.xid() == 1) {
                c.reply(reply(1, OncRpc.SUCCESS, secret.length), MemorySegment.ofArray(secret)); // RDMA Write
            } else {
                held.add(c);
            }
        };
        // no R: the test answers the held call after its raw reply, and that second answer must
        // not be a Send with Invalidate of an rkey the client already withdrew (rxe panics on it)
        Connection c = start(EndpointVerbsTest.OPTS.withRemoteInvalidation(false), h);
        // heap receptacles go through the client's chunk memory: the first leaves its result there
        MemorySegment first = MemorySegment.ofArray(new byte[256]);
        ReceivedMessage m = get(c.call(callMsg(1, 1, new byte[0]),
                CallOptions.DEFAULT.withReceptacle(first)));
        assertEquals(256, m.placedBytes());
        m.release();
        assertArrayEquals(secret, first.toArray(ValueLayout.JAVA_BYTE));
        byte[] mine = new byte[256];
        Arrays.fill(mine, (byte) 0x55);
        MemorySegment receptacle = MemorySegment.ofArray(mine.clone());
        CompletableFuture<ReceivedMessage> f = c.call(callMsg(2, 1, new byte[0]),
                CallOptions.DEFAULT.withReceptacle(receptacle));
        assertTrue(waitFor(() -> held.size() == 1, 30_000), "the server holds the call");
        IncomingCall call = held.poll();
        // the reply echoes the offered chunk, full length, nothing written (a failed NFS READ, as deployed servers answer it)
        WriteList offered = ((CallFuture) f).request().exposure().header().writeList();
        RpcRdmaHeader rh = new RpcRdmaHeader(1, 1, 1, 1).clear().xid(2).credit(8).proc(RpcRdma.RDMA_MSG);
        rh.writeList().beginChunk();
        rh.writeList().addSegment(offered.handle(0, 0), offered.length(0, 0), offered.offset(0, 0));
        RawAccess.send(call.connection(), ChunkTest.raw(rh, reply(2, OncRpc.SUCCESS, 5)));
        m = get(f);
        assertEquals(5, Xdr.getInt(m.bytes(), 24), "the upper layer's status reached the caller");
        m.release();
        assertArrayEquals(mine, receptacle.toArray(ValueLayout.JAVA_BYTE),
                "the receptacle holds bytes the responder never wrote (another call's chunk memory)");
        call.reply(reply(2, OncRpc.SUCCESS)); // answered for the server's count (a stray reply to the client)
        assertTrue(waitFor(() -> server.connections().stream().allMatch(s -> s.peerOutstandingCalls() == 0), 30_000));
        assertTrue(c.isOpen());
        assertEquals(0, c.outstandingCalls());
    }
}
