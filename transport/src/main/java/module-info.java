/** Bidirectional RPC-over-RDMA Version 1 (RFC 8166, RFC 8167, RFC 8797). */
module org.rpcrdma.transport {
    requires org.rpcrdma.bindings;
    requires jdk.jfr;
    exports org.rpcrdma.transport;
    exports org.rpcrdma.transport.verbs;
    exports org.rpcrdma.transport.wire;
}
