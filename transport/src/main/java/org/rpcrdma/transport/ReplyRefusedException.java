package org.rpcrdma.transport;

/**
 * A handler's reply could not be sent as given: larger than the negotiated inline
 * threshold with no Reply chunk to carry it, or not a reply to this call. The requester was
 * answered RDMA_ERROR / ERR_CHUNK for the call's XID instead (RFC 8166 §4.5.2), so its call
 * fails at once rather than waiting; the call counts as answered.
 */
public final class ReplyRefusedException extends RpcRdmaException {
    private static final long serialVersionUID = 1L;

    public ReplyRefusedException(String message) {
        super(message);
    }
}
