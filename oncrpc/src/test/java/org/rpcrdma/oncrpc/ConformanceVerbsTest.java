package org.rpcrdma.oncrpc;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;
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

    @TestFactory
    Stream<DynamicTest> client() throws Exception {
        start(ClientConformance.cannedServer());
        return Conformance.client(RpcTransport.of(client));
    }
}
