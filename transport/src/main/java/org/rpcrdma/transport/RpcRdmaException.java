package org.rpcrdma.transport;

/** Root of the exceptions panama-rpcrdma raises for transport-level failures. */
public class RpcRdmaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public RpcRdmaException(String message) {
        super(message);
    }

    public RpcRdmaException(String message, Throwable cause) {
        super(message, cause);
    }
}
