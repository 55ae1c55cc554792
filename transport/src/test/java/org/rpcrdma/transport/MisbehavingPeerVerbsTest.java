package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;
import static org.rpcrdma.transport.EndpointVerbsTest.OPTS;
import static org.rpcrdma.transport.EndpointVerbsTest.deviceAddress;
import static org.rpcrdma.transport.ReconnectVerbsTest.waitFor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.wire.RpcRdmaEncoder;

/**
 * Peers that break the protocol on real verbs: one sends a malformed RPC-over-RDMA header,
 * one sends more calls than the server granted. Each is dropped (RFC 8166 §3.3.1: a
 * requester never exceeds its credits; §4.5: a header that cannot be parsed ends the
 * connection), and a well-behaved client on the same server keeps working throughout.
 */
@Tag("verbs")
class MisbehavingPeerVerbsTest {
    private RpcRdmaServer server;
    private final List<RpcRdmaClient> clients = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        List<AutoCloseable> all = new ArrayList<>(clients);
        all.add(server);
        EndpointVerbsTest.closeAndCheckNothingLeft(all.toArray(AutoCloseable[]::new));
    }

    private RpcRdmaClient connect(RpcRdmaOptions o) {
        RpcRdmaClient c = RpcRdmaClient.connect(new InetSocketAddress(addr, server.port()), o);
        clients.add(c);
        return c;
    }

    private InetAddress addr;

    /** An RDMA_MSG carrying {@code rpc}, with rdma_credit 1, as one Send's bytes. */
    private static MemorySegment rdmaMsg(int xid, MemorySegment rpc) {
        MemorySegment m = MemorySegment.ofArray(new byte[28 + (int) rpc.byteSize()]);
        int h = RpcRdmaEncoder.encodeInlineMsg(m, 0, xid, 1);
        MemorySegment.copy(rpc, 0, m, h, rpc.byteSize());
        return m.asSlice(0, h + rpc.byteSize());
    }

    @Test
    void malformedAndCreditViolatingPeersAreDroppedOthersUnharmed() throws Exception {
        addr = deviceAddress();
        // Calls whose first argument byte is 'H' are held (never answered), the rest echoed.
        CallHandler h = call -> {
            MemorySegment m = call.message().bytes();
            if (m.byteSize() > 40 && m.get(ValueLayout.JAVA_BYTE, 40) == 'H') {
                return;
            }
            echo().handle(call);
        };
        RpcRdmaOptions serverOpts = OPTS.toBuilder().credits(2).build();
        server = RpcRdmaServer.listen(new InetSocketAddress(addr, 0), serverOpts, h, null);
        RpcRdmaOptions noReconnect = OPTS.toBuilder().reconnectAttempts(0).build();
        RpcRdmaClient good = connect(noReconnect);
        RpcRdmaClient malformed = connect(noReconnect);
        RpcRdmaClient greedy = connect(noReconnect);
        byte[] args = {'o', 'k', 0, 0};
        assertArrayEquals(args, results(good.call(callMsg(1, 1, args)).get(30, TimeUnit.SECONDS)));
        assertTrue(waitFor(() -> server.connections().size() == 3));

        // 1. a header too short to hold rdma_vers: the server must drop that connection
        RawAccess.send(malformed.connection(), MemorySegment.ofArray(new byte[] {0, 0, 0, 1, 0, 0}));
        assertTrue(waitFor(() -> !malformed.connection().isOpen()), "malformed peer still connected");
        assertTrue(server.stats().badHeaders() >= 1);

        // 2. three held calls against a grant of 2, sent without waiting for credits
        for (int xid = 100; xid < 103; xid++) {
            RawAccess.send(greedy.connection(), rdmaMsg(xid, callMsg(xid, 1, new byte[] {'H', 0, 0, 0})));
        }
        assertTrue(waitFor(() -> !greedy.connection().isOpen()), "credit-violating peer still connected");
        assertEquals(1, server.stats().creditViolations());
        assertTrue(waitFor(() -> server.connections().size() == 1), "server still holds " + server.connections());

        // the good client never noticed
        assertTrue(good.connection().isOpen());
        List<CompletableFuture<ReceivedMessage>> fs = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            fs.add(good.call(callMsg(200 + i, 1, args)));
        }
        for (var f : fs) {
            assertArrayEquals(args, results(f.get(30, TimeUnit.SECONDS)));
        }
        assertFalse(server.connections().isEmpty());
        assertEquals(0, good.connection().stats().connectionsLost());
    }
}
