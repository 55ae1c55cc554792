/**
 * A minimal NFSv4.1 client (RFC 8881; XDR by hand from RFC 5662) on the typed ONC RPC
 * layer: a session whose back channel is the client's RPC-over-RDMA connection (RFC 8167),
 * delegations and their recall.
 */
module org.rpcrdma.nfs4 {
    requires transitive org.rpcrdma.oncrpc;
    exports org.rpcrdma.nfs4;
}
