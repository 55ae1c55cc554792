package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.ReplyCallback;

/**
 * How the end of a {@link CallRequest} reaches its caller: a {@link CallFuture}, a
 * {@link ReplyCallback} ({@link CallbackCompletion}), or a blocking caller that reads the
 * reply in place ({@link ReadInPlace}). The request calls exactly one of these, once, after
 * it won its outcome; none is called under a transport lock.
 */
interface Completion {
    /**
     * The reply, inline in receive buffer {@code slot} of {@code conn}. Returns true if the
     * buffer was taken (released by whoever reads the reply, or already), false if the
     * caller is gone (the transport releases it as a late reply).
     */
    boolean inline(CallRequest r, ConnectionEngine conn, int slot, MemorySegment view);

    /** The reply as a message of its own (reassembled, or with placed data); false: the caller is gone. */
    boolean message(CallRequest r, ReceivedMessage reply);

    /** The transport failed the call. */
    void failed(CallRequest r, Throwable t);

    /** The call was abandoned by its timeout or its caller's interrupt ({@code cause}). */
    void abandoned(CallRequest r, Throwable cause);
}
