package org.rpcrdma.transport.rpc;

import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.wire.RpcRdma;

/**
 * The immutable parameters of one {@link ConnectionEngine}, fixed after private-data negotiation
 * (RFC 8797 §4): inline thresholds each way, our call credits and the credits we grant the
 * peer (RFC 8166 §3.3.1), whether the peer takes Send With Invalidate, and the endpoint's
 * options that bound each call (timeout, chunk limits) and the connection's silence
 * ({@link RpcRdmaOptions.Builder#silenceTimeoutMillis}, 0: never).
 */
public record ConnectionParams(boolean client, int sendInline, int receiveInline, int ownCallCredits, int grantToPeer,
        boolean remoteInvalidation, int signalEvery, long callTimeoutMillis, int maxChunkBytes,
        int maxChunkSegments, long silenceMillis) {
    /** With the default chunk limits and silence period. */
    public ConnectionParams(boolean client, int sendInline, int receiveInline, int ownCallCredits, int grantToPeer,
            boolean remoteInvalidation, int signalEvery, long callTimeoutMillis) {
        this(client, sendInline, receiveInline, ownCallCredits, grantToPeer, remoteInvalidation, signalEvery,
                callTimeoutMillis, RpcRdmaOptions.DEFAULT_MAX_CHUNK_BYTES, RpcRdmaOptions.DEFAULT_MAX_CHUNK_SEGMENTS,
                RpcRdmaOptions.defaults().silenceTimeoutMillis());
    }

    /** These parameters with another silence period. */
    public ConnectionParams withSilenceMillis(long ms) {
        return new ConnectionParams(client, sendInline, receiveInline, ownCallCredits, grantToPeer, remoteInvalidation,
                signalEvery, callTimeoutMillis, maxChunkBytes, maxChunkSegments, ms);
    }

    public ConnectionParams {
        if (sendInline < RpcRdma.INLINE_MSG_HEADER_BYTES + 8 || receiveInline < RpcRdma.INLINE_MSG_HEADER_BYTES + 8) {
            throw new IllegalArgumentException("inline thresholds too small");
        }
        if (ownCallCredits < 1 || grantToPeer < 0) {
            throw new IllegalArgumentException("credits out of range");
        }
    }
}
