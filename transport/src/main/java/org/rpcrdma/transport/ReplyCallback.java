package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;

/**
 * How a callback call ({@link RpcCaller#call(MemorySegment, CallOptions, ReplyCallback)}) ends: exactly
 * one of the two methods runs, once. Both run on the thread that took the completion (a
 * poller, or a blocking caller on its way): they must not block. One instance may serve
 * any number of calls (the XID is in the reply's first word).
 */
public interface ReplyCallback {
    /** The reply, from its XID; valid only until this returns (its receive buffer then goes back). */
    void onReply(MemorySegment reply);

    /**
     * The call failed: {@link RdmaErrorException}, {@link MalformedReplyException},
     * {@link ConnectionLostException}, {@link CallTimeoutException} (the call's
     * timeout; the call is abandoned), or another {@link RpcRdmaException}.
     */
    void onFailure(Throwable cause);
}
