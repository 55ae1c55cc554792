package org.rpcrdma.transport.wire;

/**
 * What a connection runs with once both peers' private data is known (RFC 8797 §4.1,
 * §4.2). Settings are per connection: compute them again on every reconnect.
 *
 * @param clientToServer     inline threshold for messages the client sends:
 *                           min(client send size, server receive size)
 * @param serverToClient     inline threshold for messages the server sends:
 *                           min(server send size, client receive size)
 * @param remoteInvalidation whether the responder may use Send with Invalidate: only
 *                           when both peers set R
 */
public record ConnectSettings(int clientToServer, int serverToClient, boolean remoteInvalidation) {

    /**
     * Combines both sides' settings. Pass {@link ConnectPrivate#DEFAULT} for a peer that
     * sent none (what {@link ConnectPrivate#decode} returns then).
     */
    public static ConnectSettings negotiate(ConnectPrivate client, ConnectPrivate server) {
        return new ConnectSettings(
                Math.min(client.sendSize(), server.receiveSize()),
                Math.min(server.sendSize(), client.receiveSize()),
                client.remoteInvalidation() && server.remoteInvalidation());
    }
}
