package org.rpcrdma.transport;

import static org.rpcrdma.transport.EndpointVerbsTest.closeAndCheckNothingLeft;
import static org.rpcrdma.transport.EndpointVerbsTest.deviceAddress;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Tag;

/** The {@link RpcCaller} contract for the reconnecting client over real verbs (rxe). */
@Tag("verbs")
class RpcCallerContractVerbsTest extends RpcCallerContract {
    @Override
    long defaultTimeoutMillis() {
        return 3000; // the first calls of a fresh JVM under TCG take hundreds of ms
    }

    @Override
    RpcRdmaOptions options() {
        return super.options().toBuilder().connectTimeoutMillis(30_000).build();
    }

    @Override
    Fixture open(RpcRdmaOptions options, CallHandler peer) throws Exception {
        InetAddress ip = deviceAddress();
        RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), options, peer, null);
        RpcRdmaClient client;
        try {
            client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), options);
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        return new Fixture() {
            @Override
            public RpcCaller caller() {
                return client;
            }

            @Override
            public Connection connection() {
                return client.connection();
            }

            @Override
            public int exposedChunks() {
                return -1; // closeAndCheckNothingLeft: no window or registration left open
            }

            @Override
            public void close() throws Exception {
                closeAndCheckNothingLeft(client, server);
            }
        };
    }
}
