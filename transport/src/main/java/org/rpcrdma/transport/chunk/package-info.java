/**
 * Chunks (RFC 8166 §3.4, §3.5), internal: what a call or reply moves by RDMA instead of
 * inline, and the memory the peer reaches.
 *
 * <ul>
 * <li>Marshalling: {@link org.rpcrdma.transport.chunk.ChunkMarshal} decides a call's chunks
 *     (long call, DDP argument, Write and Reply chunks; {@link org.rpcrdma.transport.chunk.DdpLayout},
 *     {@link org.rpcrdma.transport.chunk.ChunkRules}); {@link org.rpcrdma.transport.chunk.CallChunks}
 *     are the chunks of a received call.
 * <li>Exposure: {@link org.rpcrdma.transport.chunk.CallExposure} (a call's rkeys, withdrawn
 *     before it completes, §3.4.4), {@link org.rpcrdma.transport.chunk.WindowPool} (memory
 *     windows), {@link org.rpcrdma.transport.chunk.InvalidationPromise} and
 *     {@link org.rpcrdma.transport.chunk.RkeyTags} (RFC 8797 §4.3 remote invalidation).
 * <li>Memory: {@link org.rpcrdma.transport.chunk.ChunkMemory} and
 *     {@link org.rpcrdma.transport.chunk.ChunkPool} (registered chunk memory),
 *     {@link org.rpcrdma.transport.chunk.RegisteredMemory},
 *     {@link org.rpcrdma.transport.chunk.CallerBuffers} and
 *     {@link org.rpcrdma.transport.chunk.RegistrationCache} (the caller's memory, zero copy).
 * <li>RDMA Reads and Writes: {@link org.rpcrdma.transport.chunk.RdmaQueue} (within the
 *     agreed depth), {@link org.rpcrdma.transport.chunk.ReadChunkPuller} (a call's Read
 *     chunks), {@link org.rpcrdma.transport.chunk.ReplyWriter} (Write and Reply chunks of a
 *     reply).
 * </ul>
 */
package org.rpcrdma.transport.chunk;
