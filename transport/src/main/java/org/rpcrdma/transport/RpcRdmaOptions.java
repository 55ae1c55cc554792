package org.rpcrdma.transport;

import org.rpcrdma.transport.wire.ConnectPrivate;

/**
 * Endpoint options; every value is validated when set, with an error naming the option.
 *
 * @param port              TCP-style port for rdma_cm (RFC 8166 §9: 20049 is only the default)
 * @param inlineThreshold   our send and receive inline sizes, advertised in RFC 8797 private
 *                          data; the connection uses the negotiated minimum
 * @param credits           calls the server lets a client have outstanding (forward credits)
 * @param backwardCredits   calls the client lets the server have outstanding (RFC 8167);
 *                          0 disables the backchannel
 * @param busyPoll          poll the CQ continuously (lowest latency, burns a core) instead of
 *                          waiting on the completion channel
 * @param connectTimeoutMillis address/route resolution and connect timeout
 * @param receiveBatch      receives are reposted at least this many at a time
 * @param signalEvery       signal one Send in this many (selective signalling)
 * @param backchannelWaitMillis how long a server's pending backward calls wait for the
 *                          client to come back after a disconnect (RFC 8167 §5.4)
 * @param reconnectAttempts how many times a client tries to connect again after losing its
 *                          connection, when it has calls to resend or a backchannel to keep
 *                          (0: never; pending calls then fail with ConnectionLostException)
 */
public record RpcRdmaOptions(int port, int inlineThreshold, int credits, int backwardCredits, boolean busyPoll,
        int connectTimeoutMillis, int receiveBatch, int signalEvery, long backchannelWaitMillis, int reconnectAttempts) {

    public static final int DEFAULT_PORT = 20049;
    /** Linux's default inline size (xprt_rdma_max_inline_read/write). */
    public static final int DEFAULT_INLINE = 4096;
    public static final int DEFAULT_CREDITS = 32;
    public static final int MAX_CREDITS = 1024;

    public RpcRdmaOptions {
        check("port", port, 1, 65535);
        check("inlineThreshold", inlineThreshold, ConnectPrivate.MIN_SIZE, ConnectPrivate.MAX_SIZE);
        check("credits", credits, 1, MAX_CREDITS);
        check("backwardCredits", backwardCredits, 0, MAX_CREDITS);
        check("connectTimeoutMillis", connectTimeoutMillis, 1, 600_000);
        check("receiveBatch", receiveBatch, 1, 256);
        check("signalEvery", signalEvery, 1, 256);
        check("reconnectAttempts", reconnectAttempts, 0, 1000);
        if (backchannelWaitMillis < 0) {
            throw new IllegalArgumentException("backchannelWaitMillis must be >= 0, got " + backchannelWaitMillis);
        }
        if (inlineThreshold % 4 != 0) {
            throw new IllegalArgumentException("inlineThreshold must be a multiple of 4 (XDR), got " + inlineThreshold);
        }
    }

    private static void check(String name, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " must be in [" + min + ", " + max + "], got " + v);
        }
    }

    /**
     * Defaults: port 20049, 4 KiB inline, 32 credits, backchannel off, event-mode polling,
     * 5 s connect timeout, backward calls wait 30 s for a reconnect, 3 reconnect attempts.
     */
    public static RpcRdmaOptions defaults() {
        return new RpcRdmaOptions(DEFAULT_PORT, DEFAULT_INLINE, DEFAULT_CREDITS, 0, false, 5000, 8, 8, 30_000, 3);
    }

    public RpcRdmaOptions withBackchannelWaitMillis(long ms) {
        return new RpcRdmaOptions(port, inlineThreshold, credits, backwardCredits, busyPoll, connectTimeoutMillis,
                receiveBatch, signalEvery, ms, reconnectAttempts);
    }

    public RpcRdmaOptions withReconnectAttempts(int n) {
        return new RpcRdmaOptions(port, inlineThreshold, credits, backwardCredits, busyPoll, connectTimeoutMillis,
                receiveBatch, signalEvery, backchannelWaitMillis, n);
    }

    public RpcRdmaOptions withPort(int p) {
        return new RpcRdmaOptions(p, inlineThreshold, credits, backwardCredits, busyPoll, connectTimeoutMillis,
                receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts);
    }

    public RpcRdmaOptions withInlineThreshold(int t) {
        return new RpcRdmaOptions(port, t, credits, backwardCredits, busyPoll, connectTimeoutMillis,
                receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts);
    }

    public RpcRdmaOptions withCredits(int c) {
        return new RpcRdmaOptions(port, inlineThreshold, c, backwardCredits, busyPoll, connectTimeoutMillis,
                receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts);
    }

    public RpcRdmaOptions withBackwardCredits(int c) {
        return new RpcRdmaOptions(port, inlineThreshold, credits, c, busyPoll, connectTimeoutMillis,
                receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts);
    }

    public RpcRdmaOptions withConnectTimeoutMillis(int ms) {
        return new RpcRdmaOptions(port, inlineThreshold, credits, backwardCredits, busyPoll, ms,
                receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts);
    }

    public RpcRdmaOptions withBusyPoll(boolean b) {
        return new RpcRdmaOptions(port, inlineThreshold, credits, backwardCredits, b, connectTimeoutMillis,
                receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts);
    }

    /** Send contexts: enough for every call and reply that can be in flight at once. */
    int sendContexts() {
        return credits + backwardCredits + 4;
    }

    /** Receive buffers: what must be posted plus headroom for messages being processed. */
    int receiveBuffers() {
        return 2 * (credits + backwardCredits) + 2 * receiveBatch;
    }
}
