/**
 * The RPC-over-RDMA Version 1 wire protocol, in pure Java over
 * {@link java.lang.foreign.MemorySegment}: no verbs, no I/O. Internal to the transport
 * (the XDR it is written in is {@link org.rpcrdma.xdr}).
 *
 * <ul>
 * <li>Transport header (RFC 8166 §4): {@link org.rpcrdma.transport.wire.RpcRdmaHeader}, filled by
 *     {@link org.rpcrdma.transport.wire.RpcRdmaDecoder} and written by
 *     {@link org.rpcrdma.transport.wire.RpcRdmaEncoder}. A malformed message is one
 *     {@link org.rpcrdma.transport.wire.RpcRdmaProtocolException} naming the
 *     {@link org.rpcrdma.transport.wire.ProtocolViolation} and the
 *     {@link org.rpcrdma.transport.wire.ErrorResponse} (ERR_VERS, ERR_CHUNK, drop).
 * <li>Chunk arithmetic (RFC 8166 §3.4): {@link org.rpcrdma.transport.wire.ReadList},
 *     {@link org.rpcrdma.transport.wire.WriteList}, {@link org.rpcrdma.transport.wire.StreamReduction}.
 * <li>CM private data (RFC 8797): {@link org.rpcrdma.transport.wire.ConnectPrivate},
 *     {@link org.rpcrdma.transport.wire.ConnectSettings}.
 * <li>The direction of a message the decoder refused (RFC 8167 §2.4.1):
 *     {@link org.rpcrdma.transport.wire.MessageDirection}.
 * </ul>
 *
 * <p>The receive path in one place:
 * {@snippet :
 * RpcRdmaHeader hdr = RpcRdmaHeader.forInlineThreshold(settings.clientToServer()); // once
 * try {
 *     RpcRdmaDecoder.decode(recvBuf, 0, byteLen, hdr);       // allocates nothing
 *     if (hdr.proc() == RpcRdma.RDMA_MSG && hdr.rpcMsgType() == RpcRdma.RPC_CALL) {
 *         // backward call (client) or forward call (server) at hdr.messageOffset()
 *     }
 * } catch (RpcRdmaProtocolException e) {
 *     switch (e.response()) {
 *         case ERR_VERS, ERR_CHUNK -> len = RpcRdmaEncoder.encodeError(sendBuf, 0, e, credits);
 *         case DROP_CONNECTION -> disconnect();
 *     }
 * }
 * }
 *
 * <p>Objects here are mutable, caller-owned and not thread-safe unless they are records.
 */
package org.rpcrdma.transport.wire;
