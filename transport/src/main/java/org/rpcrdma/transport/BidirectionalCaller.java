package org.rpcrdma.transport;

import java.util.function.Consumer;

/**
 * A client's side of a connection that makes forward calls and serves the server's
 * backward calls (RFC 8167): a {@link Connection} of a client, or an {@link RpcRdmaClient},
 * which keeps doing both across reconnects. What an upper layer with a back channel of
 * its own (NFSv4.1: CREATE_SESSION, BIND_CONN_TO_SESSION) needs beyond calling.
 */
public interface BidirectionalCaller extends RpcCaller {
    /**
     * Serves backward calls with {@code handler} without telling the server (the upper
     * layer announces the back channel), on the current connection and every later one.
     */
    void serveBackwardCalls(CallHandler handler);

    /** The connection calls go on now (after a reconnect, the new one): its inline thresholds bound backward calls. */
    Connection connection();

    /**
     * Tells {@code listener} of each new connection after a reconnect, once it serves
     * backward calls again (RFC 8167 §6: an NFSv4.1 client binds it to its session then).
     * One connection never reconnects: by default nothing is told.
     */
    default void onReconnect(Consumer<Connection> listener) {
    }
}
