/**
 * The API of panama-rpcrdma: endpoints ({@link org.rpcrdma.transport.RpcRdmaClient},
 * {@link org.rpcrdma.transport.RpcRdmaServer}, {@link org.rpcrdma.transport.InMemoryPair}),
 * a connection ({@link org.rpcrdma.transport.Connection}) and a server's backchannel to one
 * client ({@link org.rpcrdma.transport.Backchannel}); the calling interface
 * ({@link org.rpcrdma.transport.RpcCaller}, {@link org.rpcrdma.transport.CallOptions}, the
 * reply shapes); handlers of the peer's calls ({@link org.rpcrdma.transport.CallHandler});
 * registered memory for zero-copy chunks; options, a statistics snapshot and the exceptions.
 *
 * <p>The work is done by internal packages, one per layer (as Linux splits xprtrdma):
 * {@code rpc} (the RPC-over-RDMA engine of one connection, RFC 8166 §3.3, §4; RFC 8167),
 * {@code chunk} (chunks and the memory they expose, RFC 8166 §3.4-§3.5), {@code link} (the
 * queue pair or its in-memory twin, and completions), {@code endpoint} (connect, accept,
 * reconnect), {@code wire} (the codec, RFC 8166 §4, RFC 8797) and {@code verbs} (the owned
 * verbs objects).
 */
package org.rpcrdma.transport;
