package org.rpcrdma.transport.rpc;

import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * What one side of a connection needs of the options: calls each way (RFC 8166 §3.3.1
 * credits; RFC 8167 §4.1 backward credits), send contexts and receive buffers to post.
 */
public final class ConnectionSizing {
    private ConnectionSizing() {
    }

    /**
     * Client: whether it takes chunked backward calls, doing RDMA Reads and Writes for them
     * (a backchannel with backward chunks on).
     */
    public static boolean clientTakesBackwardChunks(RpcRdmaOptions o) {
        return o.backwardChunks() && o.backwardCredits() > 0;
    }

    /** Calls this side may have outstanding in its own direction: forward on a client, backward on a server. */
    public static int ownCalls(RpcRdmaOptions o, boolean client) {
        return client ? o.credits() : o.backwardCallLimit();
    }

    /** Credits this side grants the peer: backward on a client, forward on a server. */
    public static int peerCalls(RpcRdmaOptions o, boolean client) {
        return client ? o.backwardCredits() : o.credits();
    }

    /** Send contexts: enough for every call and reply that can be in flight at once. */
    public static int sendContexts(RpcRdmaOptions o, boolean client) {
        return ownCalls(o, client) + peerCalls(o, client) + 4;
    }

    /** Receive buffers: what must be posted plus headroom for messages being processed. */
    public static int receiveBuffers(RpcRdmaOptions o, boolean client) {
        return 2 * (ownCalls(o, client) + peerCalls(o, client)) + 2 * o.receiveBatch();
    }

    /**
     * A server's shared receive queue of {@code o.sharedReceives()} buffers: an eighth for the
     * replies to backward calls, the watermark's worth never counted (free, not yet posted),
     * the rest backing forward credits, for up to half as many connections.
     */
    public static SharedCredits sharedCredits(RpcRdmaOptions o) {
        int n = o.sharedReceives();
        int own = n / 8;
        int forward = n - own - o.receiveBatch();
        return new SharedCredits(forward, o.credits(), forward / 2, own);
    }
}
