package org.rpcrdma.transport;

import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;

import org.junit.jupiter.api.Nested;

/** The {@link RpcCaller} contract over the in-memory pair: a connection, and a server's backchannel. */
class RpcCallerContractTest {
    /** A client's connection making forward calls. */
    @Nested
    class ConnectionCaller extends RpcCallerContract {
        @Override
        Fixture open(RpcRdmaOptions options, CallHandler peer) {
            InMemoryPair p = InMemoryPair.open(options, peer);
            return new Fixture() {
                @Override
                public RpcCaller caller() {
                    return p.client();
                }

                @Override
                public Connection connection() {
                    return p.client();
                }

                @Override
                public int exposedChunks() {
                    return p.exposedCount();
                }

                @Override
                public void close() {
                    p.close();
                }
            };
        }
    }

    /** A server's backchannel to one client, making backward calls (RFC 8167). */
    @Nested
    class BackchannelCaller extends RpcCallerContract {
        @Override
        Fixture open(RpcRdmaOptions options, CallHandler peer) {
            InMemoryPair p = InMemoryPair.open(options, echo());
            p.client().enableBackchannel(peer).join();
            Backchannel b = new Backchannel(7, options, (forgotten, close) -> close.getAsBoolean());
            b.bind(p.server());
            return new Fixture() {
                @Override
                public RpcCaller caller() {
                    return b;
                }

                @Override
                public Connection connection() {
                    return p.server();
                }

                @Override
                public int exposedChunks() {
                    return p.exposedCount();
                }

                @Override
                public void close() {
                    b.close();
                    p.close();
                }
            };
        }
    }
}
