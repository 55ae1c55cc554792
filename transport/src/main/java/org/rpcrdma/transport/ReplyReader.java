package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;

/**
 * Reads a reply in place ({@link RpcCaller#callAndRead}): the bytes, from the reply's XID,
 * are valid only until {@link #read} returns, so copy what must outlive it.
 */
@FunctionalInterface
public interface ReplyReader<T> {
    T read(MemorySegment reply);
}
