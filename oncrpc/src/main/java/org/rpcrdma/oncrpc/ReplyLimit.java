package org.rpcrdma.oncrpc;

import java.util.concurrent.CompletionException;
import org.rpcrdma.transport.RdmaErrorException;

/**
 * What a typed caller can change when its call is answered ERR_CHUNK. The responder only
 * says that it could not process the chunk lists (RFC 8166 §4.5); the usual cause at this
 * layer is a result larger than the Reply chunk the call offered (§3.5.4), which the
 * responder may not send inline instead.
 */
final class ReplyLimit {
    private ReplyLimit() {}

    /**
     * {@code failure} itself, or for ERR_CHUNK the same error with the advice added.
     *
     * @param allowed  the largest reply the call allowed (0: none beyond inline)
     * @param given    whether the caller passed it ({@code maxReplyBytes}) or the client derived it
     * @param limit    the transport's largest ({@link org.rpcrdma.transport.RpcCaller#maxReplyBytes()})
     */
    static Throwable explain(Throwable failure, int allowed, boolean given, int limit) {
        Throwable c = failure instanceof CompletionException ce && ce.getCause() != null ? ce.getCause() : failure;
        if (!(c instanceof RdmaErrorException e) || e.errorCode() != RdmaErrorException.ERR_CHUNK) {
            return failure;
        }
        String offered = allowed == 0 ? "the call offered no Reply chunk (its reply had to fit inline)"
                : "the call offered no Reply chunk large enough for a reply over " + allowed + " bytes";
        String change = limit == 0 ? "this transport sends no chunks, so replies must fit inline"
                : given ? "if the reply can be larger, pass a larger maxReplyBytes (at most " + limit
                        + ", maxChunkBytes)"
                : "if the result can be larger, allow it with OncRpcClient.withMaxReplyBytes (at most " + limit
                        + ", maxChunkBytes) or give the result codec its bound (XdrCodec.withMaxEncodedSize)";
        return e.explained("probably " + offered + ": " + change + "; else the server's log says which chunk it"
                + " refused");
    }
}
