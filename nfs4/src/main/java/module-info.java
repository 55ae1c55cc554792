/**
 * A minimal NFSv4.1 client (RFC 8881; XDR by hand from RFC 5662) on the typed ONC RPC
 * layer: a session whose back channel is the client's RPC-over-RDMA connection (RFC 8167),
 * delegations and their recall; and a small NFSv4.1 server of one directory
 * ({@code org.rpcrdma.nfs4.server}) that the Linux kernel's client mounts over RDMA.
 */
module org.rpcrdma.nfs4 {
    requires transitive org.rpcrdma.oncrpc;
    exports org.rpcrdma.nfs4;
    exports org.rpcrdma.nfs4.server;
}
