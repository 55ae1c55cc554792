package org.rpcrdma.transport;

/**
 * A post (Send or receives) reached a link that is being or has been destroyed: it was
 * refused before touching any verbs object, which may already be freed. The connection
 * treats it as a loss, so calls see {@link ConnectionLostException} with this as the cause.
 */
public final class LinkClosedException extends RpcRdmaException {
    private static final long serialVersionUID = 1L;

    public LinkClosedException(String message) {
        super(message);
    }

    public LinkClosedException(String message, Throwable cause) {
        super(message, cause);
    }
}
