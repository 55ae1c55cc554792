/**
 * Typed ONC RPC (RFC 5531) over the RPC-over-RDMA transport: XDR codecs for user types
 * (RFC 4506), a client with AUTH_NONE / AUTH_SYS and typed reply errors, and a server
 * dispatcher that serves forward calls and, on a client, backward calls (RFC 8167).
 */
module org.rpcrdma.oncrpc {
    requires transitive org.rpcrdma.transport;
    exports org.rpcrdma.oncrpc;
}
