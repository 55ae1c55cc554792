package org.rpcrdma.transport;

/** The connection was lost or closed before the call's reply arrived. */
public final class ConnectionLostException extends RpcRdmaException {
    private static final long serialVersionUID = 1L;

    public ConnectionLostException(String message, Throwable cause) {
        super(message, cause);
    }
}
