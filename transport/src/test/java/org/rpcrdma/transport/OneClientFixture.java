package org.rpcrdma.transport;

import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.EndpointVerbsTest.closeAndCheckNothingLeft;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.AfterEach;

/**
 * The set-up of a verbs test about what one client costs: an echo server on the test
 * device and one client connected to it ({@link #connect}), both closed after each test
 * with a check that nothing of either is left open.
 */
abstract class OneClientFixture {
    RpcRdmaServer server;
    RpcRdmaClient client;

    /** An echo server listening on the device, and {@link #client} connected to it, both with {@code o}. */
    void connect(RpcRdmaOptions o) throws Exception {
        InetAddress ip = EndpointVerbsTest.deviceAddress();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, echo(), null);
        client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
    }

    @AfterEach
    void tearDown() throws Exception {
        closeAndCheckNothingLeft(client, server);
    }
}
