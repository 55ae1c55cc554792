/**
 * The RPC-over-RDMA engine of one connection (RFC 8166 §3.3 credits, §4 message handling;
 * RFC 8167 bidirectional operation), internal: {@link org.rpcrdma.transport.rpc.ConnectionEngine}
 * behind each {@link org.rpcrdma.transport.Connection}.
 *
 * <ul>
 * <li>Our calls: {@link org.rpcrdma.transport.rpc.CallSubmit} takes them in,
 *     {@link org.rpcrdma.transport.rpc.Requester} holds their credits
 *     ({@link org.rpcrdma.transport.rpc.CreditAccount}) and XIDs
 *     ({@link org.rpcrdma.transport.rpc.XidTable}), {@link org.rpcrdma.transport.rpc.CallBacklog}
 *     those waiting for a credit, {@link org.rpcrdma.transport.rpc.CallRequest} is one call,
 *     {@link org.rpcrdma.transport.rpc.CallTimer} and {@link org.rpcrdma.transport.rpc.CallSweep}
 *     end the late ones, {@link org.rpcrdma.transport.rpc.ParkedCalls} wait for a connection.
 * <li>The peer's calls: {@link org.rpcrdma.transport.rpc.Responder} and
 *     {@link org.rpcrdma.transport.rpc.PeerCall}.
 * <li>Messages: {@link org.rpcrdma.transport.rpc.Marshal} (how a call travels),
 *     {@link org.rpcrdma.transport.rpc.SendQueue} (Sends and their contexts),
 *     {@link org.rpcrdma.transport.rpc.ReceivePool} and
 *     {@link org.rpcrdma.transport.rpc.ReceiveDemand} (posted receives, RFC 8167 §4.3),
 *     {@link org.rpcrdma.transport.rpc.Arrivals} and {@link org.rpcrdma.transport.rpc.Unmarshal}
 *     (what the completion thread hands over).
 * <li>Life: {@link org.rpcrdma.transport.rpc.ConnectionLife} (open, drain, loss once).
 * </ul>
 *
 * <p>Public classes here are public for the other internal packages; the module does not
 * export this package. {@link org.rpcrdma.transport.rpc.ApiBridge} is how the engine makes
 * the API's objects without the API publishing engine-only members.
 */
package org.rpcrdma.transport.rpc;
