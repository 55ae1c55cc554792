/**
 * Bidirectional RPC-over-RDMA Version 1 (RFC 8166, RFC 8167, RFC 8797).
 *
 * <p>The API is {@code org.rpcrdma.transport} (endpoints, calls, options, errors) and
 * {@code org.rpcrdma.xdr} (XDR and ONC RPC headers for the layers above). Every other
 * package is internal, one per layer: {@code rpc} (the engine of a connection),
 * {@code chunk} (chunks and their memory), {@code link} (queue pair, completions, the
 * in-memory link), {@code endpoint} (connect, accept, reconnect), {@code wire} (the codec)
 * and {@code verbs} (the owned verbs objects). The NFSv4.1 client sizes its back channel
 * from the codec's header length (RFC 8167 §5.3); the bench runs on the class path, and
 * tests of other modules get {@code --add-exports} from their build.
 */
module org.rpcrdma.transport {
    requires org.rpcrdma.bindings;
    requires jdk.jfr;
    exports org.rpcrdma.transport;
    exports org.rpcrdma.xdr;
    exports org.rpcrdma.transport.wire to org.rpcrdma.nfs4;
}
