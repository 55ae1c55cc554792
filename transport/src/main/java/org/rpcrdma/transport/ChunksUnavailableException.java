package org.rpcrdma.transport;

/**
 * A call needs chunks (it, or the reply it allows, is over the negotiated inline
 * thresholds) and cannot have them on this connection: a backward call to a client that
 * did not say it takes chunked backward calls (RFC 8167 §5.3), a connection without chunk
 * memory, a size over {@code maxChunkBytes}, or memory that cannot be exposed (a closed
 * {@link RegisteredBuffer}: the cause says so). The call failed at once; nothing was sent.
 */
public final class ChunksUnavailableException extends RpcRdmaException {
    private static final long serialVersionUID = 1L;

    public ChunksUnavailableException(String message) {
        super(message);
    }

    public ChunksUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
