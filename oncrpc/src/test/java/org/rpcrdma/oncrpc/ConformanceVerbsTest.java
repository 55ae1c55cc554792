package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.ConnectionLostException;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaServer;

/**
 * The conformance tables of {@link ConformanceTest} over real verbs (Soft-RoCE in the
 * guest): the dispatcher behind an {@link RpcRdmaServer}, the calls from an
 * {@link RpcRdmaClient}, every message through RC Sends. The server runs on its poller
 * thread here, so allocation is measured only on the host.
 */
@Tag("verbs")
class ConformanceVerbsTest {
    private RpcRdmaServer server;
    private RpcRdmaClient client;

    @AfterEach
    void tearDown() throws Exception {
        VerbsEnv.closeAndCheckNothingLeft(client, server);
    }

    private void start(org.rpcrdma.transport.CallHandler h) throws Exception {
        InetAddress ip = VerbsEnv.address();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), VerbsEnv.OPTS, h, null);
        client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), VerbsEnv.OPTS);
    }

    @TestFactory
    Stream<DynamicTest> server() throws Exception {
        start(TestProgram.dispatcher());
        return Conformance.server(m -> {
            try (ReceivedMessage r = client.call(m).get(30, TimeUnit.SECONDS)) {
                return r.toByteArray();
            }
        }, false);
    }

    /** Calls the server holds unanswered until their connection is lost: each one fails, none hangs. */
    @Test
    void aLostConnectionCompletesEveryPendingCall() throws Exception {
        RpcProcedure<Integer, Integer> held = new RpcProcedure<>(20, Codecs.INT, Codecs.INT);
        LinkedBlockingQueue<RpcServerCall<Integer>> holding = new LinkedBlockingQueue<>();
        RpcDispatcher d = TestProgram.dispatcher();
        d.program(TestProgram.PROG, 2).procedure(held, (x, call) -> holding.add(call));
        start(d);
        OncRpcClient rpc = new OncRpcClient(client, TestProgram.PROG, 2);
        rpc.nullCall(); // the server's grant: more than one call may be outstanding
        List<CompletableFuture<Integer>> pending = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            pending.add(rpc.callAsync(held, i, 0, TimeUnit.SECONDS)); // no deadline: only the loss ends them
        }
        assertTrue(VerbsEnv.waitFor(() -> holding.size() == 6, 30_000), "server holds " + holding.size());
        for (Connection c : server.connections()) {
            c.close(0, TimeUnit.MILLISECONDS);
        }
        for (CompletableFuture<Integer> f : pending) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
            assertInstanceOf(ConnectionLostException.class, e.getCause());
        }
    }

    @TestFactory
    Stream<DynamicTest> client() throws Exception {
        start(ClientConformance.cannedServer());
        return Conformance.client(client);
    }
}
