package org.rpcrdma.transport;

/**
 * The responder answered a call with a message this requester cannot accept (a header that
 * does not decode, an XID mismatch between the transport and RPC headers, chunks that were
 * never offered). The call fails; a requester never answers a reply with RDMA_ERROR
 * (RFC 8166 §4.5: only a responder sends it).
 */
public final class MalformedReplyException extends RpcRdmaException {
    private static final long serialVersionUID = 1L;

    public MalformedReplyException(String message, Throwable cause) {
        super(message, cause);
    }
}
