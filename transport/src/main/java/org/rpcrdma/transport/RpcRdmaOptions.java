package org.rpcrdma.transport;

import org.rpcrdma.transport.wire.ConnectPrivate;

/**
 * Endpoint options; every value is validated when the options are built, with an error
 * naming the option and the rule. The port is not an option: it is part of the address
 * given to {@link RpcRdmaClient#connect} or {@link RpcRdmaServer#listen}
 * ({@link #DEFAULT_PORT} is the usual one, RFC 8166 §9).
 *
 * @param inlineThreshold   our send and receive inline sizes, advertised in RFC 8797 private
 *                          data (a multiple of 1024 from 1024 to 262144, the sizes its
 *                          encoding can carry, RFC 8797 §4.2); a connection uses the
 *                          negotiated minimum
 * @param credits           calls the server lets a client have outstanding (forward credits)
 * @param backwardCredits   client: calls the client lets the server have outstanding on its
 *                          backchannel (RFC 8167 §4); 0 disables the backchannel
 * @param backwardCallLimit server: the most backward calls it keeps outstanding on one
 *                          connection; its window is the client's grant clamped to this
 * @param busyPoll          poll the CQ continuously (lowest latency, burns a core) instead of
 *                          waiting on the completion channel
 * @param pollSpinMicros    without busyPoll: after each completion the poller keeps polling
 *                          this long before it arms the completion channel and sleeps
 *                          (adaptive: a conversation stays hot, an idle connection sleeps;
 *                          0: pure events)
 * @param connectTimeoutMillis address/route resolution and connect timeout
 * @param callTimeoutMillis default time a call waits for its reply before it fails with
 *                          {@link CallTimeoutException} (0: no default timeout)
 * @param receiveBatch      receives are reposted at least this many at a time
 * @param signalEvery       signal one Send in this many (selective signalling)
 * @param backchannelWaitMillis how long a server's pending backward calls wait for the
 *                          client to come back after a disconnect (RFC 8167 §5.4)
 * @param reconnectAttempts how many times a client tries to connect again after losing its
 *                          connection, when it has calls to resend or a backchannel to keep
 *                          (0: never; pending calls then fail with ConnectionLostException)
 */
public record RpcRdmaOptions(int inlineThreshold, int credits, int backwardCredits, int backwardCallLimit,
        boolean busyPoll, int pollSpinMicros, int connectTimeoutMillis, long callTimeoutMillis, int receiveBatch, int signalEvery,
        long backchannelWaitMillis, int reconnectAttempts) {

    /** The port RFC 8166 §9 registers for NFS over RPC-over-RDMA. */
    public static final int DEFAULT_PORT = 20049;
    /** Linux's default inline size (xprt_rdma_max_inline_read/write). */
    public static final int DEFAULT_INLINE = 4096;
    public static final int DEFAULT_CREDITS = 32;
    public static final int DEFAULT_BACKWARD_CALL_LIMIT = 16;
    public static final long DEFAULT_CALL_TIMEOUT_MILLIS = 60_000;
    public static final int MAX_CREDITS = 1024;

    public RpcRdmaOptions {
        check("inlineThreshold", inlineThreshold, ConnectPrivate.MIN_SIZE, ConnectPrivate.MAX_SIZE);
        if (inlineThreshold % 1024 != 0) {
            throw new IllegalArgumentException("inlineThreshold must be a multiple of 1024 (RFC 8797 §4.2 encodes"
                    + " sizes as KiB - 1), got " + inlineThreshold);
        }
        check("credits", credits, 1, MAX_CREDITS);
        check("backwardCredits", backwardCredits, 0, MAX_CREDITS);
        check("backwardCallLimit", backwardCallLimit, 1, MAX_CREDITS);
        check("pollSpinMicros", pollSpinMicros, 0, 1_000_000);
        check("connectTimeoutMillis", connectTimeoutMillis, 1, 600_000);
        check("callTimeoutMillis", callTimeoutMillis, 0, Long.MAX_VALUE / 2);
        check("receiveBatch", receiveBatch, 1, 256);
        check("signalEvery", signalEvery, 1, 256);
        check("reconnectAttempts", reconnectAttempts, 0, 1000);
        check("backchannelWaitMillis", backchannelWaitMillis, 0, Long.MAX_VALUE / 2);
    }

    private static void check(String name, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " must be in [" + min + ", " + max + "], got " + v);
        }
    }

    /**
     * Defaults: 4 KiB inline, 32 credits, backchannel off (a server keeps at most 16
     * backward calls outstanding), event-mode polling, 5 s connect timeout, calls time out
     * after 60 s, backward calls wait 30 s for a reconnect, 3 reconnect attempts.
     */
    public static RpcRdmaOptions defaults() {
        return new RpcRdmaOptions(DEFAULT_INLINE, DEFAULT_CREDITS, 0, DEFAULT_BACKWARD_CALL_LIMIT, false, 0, 5000,
                DEFAULT_CALL_TIMEOUT_MILLIS, 8, 8, 30_000, 3);
    }

    public RpcRdmaOptions withInlineThreshold(int t) {
        return new RpcRdmaOptions(t, credits, backwardCredits, backwardCallLimit, busyPoll, pollSpinMicros, connectTimeoutMillis,
                callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts);
    }

    public RpcRdmaOptions withCredits(int c) {
        return new RpcRdmaOptions(inlineThreshold, c, backwardCredits, backwardCallLimit, busyPoll,
                pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis,
                reconnectAttempts);
    }

    public RpcRdmaOptions withBackwardCredits(int c) {
        return new RpcRdmaOptions(inlineThreshold, credits, c, backwardCallLimit, busyPoll, pollSpinMicros, connectTimeoutMillis,
                callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts);
    }

    public RpcRdmaOptions withBackwardCallLimit(int n) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, n, busyPoll, pollSpinMicros, connectTimeoutMillis,
                callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts);
    }

    public RpcRdmaOptions withBusyPoll(boolean b) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, b,
                pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis,
                reconnectAttempts);
    }

    public RpcRdmaOptions withPollSpinMicros(int us) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll, us,
                connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis,
                reconnectAttempts);
    }

    public RpcRdmaOptions withConnectTimeoutMillis(int ms) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll, pollSpinMicros, ms,
                callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts);
    }

    public RpcRdmaOptions withCallTimeoutMillis(long ms) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll,
                pollSpinMicros, connectTimeoutMillis, ms, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts);
    }

    public RpcRdmaOptions withBackchannelWaitMillis(long ms) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll,
                pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, ms, reconnectAttempts);
    }

    public RpcRdmaOptions withReconnectAttempts(int n) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll,
                pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, n);
    }

    /** Calls this side may have outstanding in its own direction: forward on a client, backward on a server. */
    int ownCalls(boolean client) {
        return client ? credits : backwardCallLimit;
    }

    /** Credits this side grants the peer: backward on a client, forward on a server. */
    int peerCalls(boolean client) {
        return client ? backwardCredits : credits;
    }

    /** Send contexts: enough for every call and reply that can be in flight at once. */
    int sendContexts(boolean client) {
        return ownCalls(client) + peerCalls(client) + 4;
    }

    /** Receive buffers: what must be posted plus headroom for messages being processed. */
    int receiveBuffers(boolean client) {
        return 2 * (ownCalls(client) + peerCalls(client)) + 2 * receiveBatch;
    }
}
