/**
 * XDR (RFC 4506) and the ONC RPC message headers (RFC 5531), in pure Java over
 * {@link java.lang.foreign.MemorySegment}: the record layer that the transport reads to
 * route a message (XID, CALL or REPLY, the backchannel's program) and that the typed
 * layer and its users write their arguments and results in.
 *
 * <ul>
 * <li>XDR primitives: {@link org.rpcrdma.xdr.Xdr}, {@link org.rpcrdma.xdr.XdrReader},
 *     {@link org.rpcrdma.xdr.XdrWriter}; a short or malformed input is an
 *     {@link org.rpcrdma.xdr.XdrException}, an encoding past the buffer an
 *     {@link org.rpcrdma.xdr.XdrOverflowException}.
 * <li>ONC RPC headers: {@link org.rpcrdma.xdr.RpcMessage} (CALL/REPLY classification),
 *     {@link org.rpcrdma.xdr.RpcCallHeader}, {@link org.rpcrdma.xdr.RpcReplyHeader},
 *     credentials {@link org.rpcrdma.xdr.OpaqueAuth} and {@link org.rpcrdma.xdr.AuthSys},
 *     numbers in {@link org.rpcrdma.xdr.OncRpc}; a malformed header is an
 *     {@link org.rpcrdma.xdr.RpcMessageException}.
 * </ul>
 *
 * <p>A package of its own, named for its layer and not under {@code org.rpcrdma.transport},
 * because it is not the transport: it is the layer above RPC-over-RDMA (RFC 8166 §4 carries
 * an ONC RPC message as opaque payload), exported to users, while the RPC-over-RDMA header
 * codec in {@code org.rpcrdma.transport.wire} is internal. It lives in the transport module
 * because the transport itself reads these headers.
 *
 * <p>Objects here are mutable, caller-owned and not thread-safe unless they are records.
 */
package org.rpcrdma.xdr;
