package org.rpcrdma.transport;

/**
 * A server tried a backward call on a connection whose client has not enabled its
 * backchannel (RFC 8167 §6: an upper layer must not make backward calls until the peer said it
 * is prepared for them, or the peer may drop the connection). Thrown at once; nothing is sent.
 */
public final class BackchannelNotEnabledException extends RpcRdmaException {
    private static final long serialVersionUID = 1L;

    public BackchannelNotEnabledException(String message) {
        super(message);
    }
}
