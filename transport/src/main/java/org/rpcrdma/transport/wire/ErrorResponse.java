package org.rpcrdma.transport.wire;

/**
 * What a receiver does about a malformed RPC-over-RDMA message (RFC 8166 §4.5).
 *
 * <p>The first two are the answers a <em>responder</em> gives to a Call. A requester never
 * sends RDMA_ERROR: a Reply with such a fault (an XDR error in its header, RFC 8166 §4.5.2)
 * fails only the call whose XID it carries, with an XDR error to the RPC consumer, and the
 * connection stays (the Reply used up its credit as any Reply does). Only a message that
 * carries no XID or version to act on ends the connection.
 */
public enum ErrorResponse {
    /** Reply RDMA_ERROR / ERR_VERS with vers_low = vers_high = 1 (RFC 8166 §4.5.1). */
    ERR_VERS,
    /** Reply RDMA_ERROR / ERR_CHUNK for the message's rdma_xid (RFC 8166 §4.5.2). */
    ERR_CHUNK,
    /**
     * No reply is possible or allowed (no XID to answer, or the bad message is itself an
     * RDMA_ERROR or a Reply): discard it and close the connection.
     */
    DROP_CONNECTION
}
