package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;
import static org.rpcrdma.transport.EndpointVerbsTest.OPTS;
import static org.rpcrdma.transport.EndpointVerbsTest.deviceAddress;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The server's user callbacks run on its connection-manager thread: whatever they throw, an
 * {@link Error} too, refuses that one connection request and the server goes on accepting
 * (else the thread ends and no client can ever connect again).
 */
@Tag("verbs")
class ServerCallbackVerbsTest {
    @Test
    void anOnConnectThatThrowsAnErrorRefusesThatClientOnlyAndTheServerAcceptsTheNext() throws Exception {
        InetAddress ip = deviceAddress();
        RpcRdmaOptions o = OPTS.toBuilder().reconnectAttempts(0).connectTimeoutMillis(10_000).build();
        AtomicInteger requests = new AtomicInteger();
        try (RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, echo(), c -> {
            if (requests.incrementAndGet() == 1) {
                throw new AssertionError("test: onConnect fails on the first connection");
            }
        })) {
            InetSocketAddress at = new InetSocketAddress(ip, server.port());
            assertThrows(RuntimeException.class, () -> RpcRdmaClient.connect(at, o).close(),
                    "the first client is refused");
            try (RpcRdmaClient second = RpcRdmaClient.connect(at, o)) {
                byte[] args = {1, 2, 3, 4};
                assertArrayEquals(args, results(second.call(callMsg(0x71, 1, args)).get(30, TimeUnit.SECONDS)));
            }
            assertTrue(requests.get() >= 2, "onConnect saw the second client");
        }
    }
}
