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
 * @param backchannelWaitMillis how long a backchannel outlives a lost connection: a server's
 *                          pending backward calls wait this long for the client to come
 *                          back, a client with a backchannel keeps reconnecting this long
 *                          (past reconnectAttempts, the pause doubling up to 30 s); 0: no
 *                          limit, the default (RFC 8167 §5.4: backward requesters wait
 *                          indefinitely, a client keeps its connection while callbacks are
 *                          possible). Each call still has its own timeout
 * @param reconnectAttempts how many times a client tries to connect again after losing its
 *                          connection, when it has calls to resend or a backchannel to keep
 *                          (0: never; pending calls then fail with ConnectionLostException);
 *                          with a backchannel, at least this many (see backchannelWaitMillis)
 * @param maxChunkBytes     the largest RPC message that travels through chunks, either way
 *                          (a long call pulled by RDMA Read, a reply written into a Reply
 *                          chunk); a peer's chunk lists claiming more are answered ERR_CHUNK
 *                          before anything is allocated (RFC 8166 §4.5.2)
 * @param maxChunkSegments  the most RDMA segments over all chunks of one message we accept
 *                          (more: ERR_CHUNK) or send
 * @param chunkMemoryBytes  registered memory per connection for chunk data, allocated once;
 *                          a message that finds it full gets memory registered for itself
 * @param rdmaDepth         the most RDMA Reads and Writes one connection has outstanding (also
 *                          bounded by the device and by what the peer offered at connect)
 * @param memoryWindows     expose chunk memory to the peer through a type-2 memory window
 *                          bound per RPC over memory registered once (RFC 8166 §4.4; Linux's
 *                          FRWR); false, or a device without windows: a registration per RPC
 * @param remoteInvalidation set R in our private data (RFC 8797 §4.1): as requester we take
 *                          the peer's Send with Invalidate in place of our own LOCAL_INV; as
 *                          responder we answer with one when the peer set R and the call
 *                          exposed exactly one rkey. False: R clear, we never send one (a
 *                          peer's invalidating Send is still recognised and counted)
 * @param backwardChunks    client with backward credits: take backward calls with chunks
 *                          (RFC 8167 §5.3) and say so in the backchannel-enable call, so a
 *                          server of ours may send them (the client then connects with an
 *                          RDMA Read depth of its own); false: such calls are answered
 *                          ERR_CHUNK. A server sends chunks in backward calls only to a
 *                          client that said it takes them
 * @param registrationCacheBytes the most bytes of ordinary caller memory (native segments
 *                          of an arena, not from {@link RpcRdmaClient#allocateRegistered})
 *                          an endpoint keeps registered so that calls expose it in place
 *                          instead of copying it ({@link RegistrationCache}); least recently
 *                          used entries go first; 0: no cache, such memory is copied
 */
public record RpcRdmaOptions(int inlineThreshold, int credits, int backwardCredits, int backwardCallLimit,
        boolean busyPoll, int pollSpinMicros, int connectTimeoutMillis, long callTimeoutMillis, int receiveBatch, int signalEvery,
        long backchannelWaitMillis, int reconnectAttempts, int maxChunkBytes, int maxChunkSegments,
        long chunkMemoryBytes, int rdmaDepth, boolean memoryWindows, boolean remoteInvalidation, boolean backwardChunks,
        long registrationCacheBytes) {

    /** The port RFC 8166 §9 registers for NFS over RPC-over-RDMA. */
    public static final int DEFAULT_PORT = 20049;
    /** Linux's default inline size (xprt_rdma_max_inline_read/write). */
    public static final int DEFAULT_INLINE = 4096;
    public static final int DEFAULT_CREDITS = 32;
    public static final int DEFAULT_BACKWARD_CALL_LIMIT = 16;
    public static final long DEFAULT_CALL_TIMEOUT_MILLIS = 60_000;
    public static final int MAX_CREDITS = 1024;
    /** 1 MiB of NFS READ/WRITE payload plus its headers. */
    public static final int DEFAULT_MAX_CHUNK_BYTES = (1 << 20) + 64 * 1024;
    public static final int DEFAULT_MAX_CHUNK_SEGMENTS = 64;
    public static final long DEFAULT_CHUNK_MEMORY_BYTES = 4L << 20;
    /** Like Linux nfsd's default initiator depth offer of 8, doubled: rxe and most HCAs allow 16 and more. */
    public static final int DEFAULT_RDMA_DEPTH = 16;
    /** Caller memory kept registered for zero copy: 64 MiB pinned at most (RegistrationCache). */
    public static final long DEFAULT_REGISTRATION_CACHE_BYTES = 64L << 20;

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
        check("maxChunkBytes", maxChunkBytes, inlineThreshold, 1L << 30);
        check("maxChunkSegments", maxChunkSegments, 1, 4096);
        check("chunkMemoryBytes", chunkMemoryBytes, 0, 1L << 34);
        check("rdmaDepth", rdmaDepth, 1, 255);
        check("registrationCacheBytes", registrationCacheBytes, 0, 1L << 40);
    }

    private static void check(String name, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " must be in [" + min + ", " + max + "], got " + v);
        }
    }

    /**
     * Defaults: 4 KiB inline, 32 credits, backchannel off (a server keeps at most 16
     * backward calls outstanding), event-mode polling, 5 s connect timeout, calls time out
     * after 60 s, 3 reconnect attempts, and a backchannel kept across a lost connection
     * without limit (a client with one keeps reconnecting, backward calls wait); chunked
     * messages up to 1 MiB + 64 KiB in at most 64 segments, 4 MiB of chunk memory per
     * connection, 16 RDMA Reads/Writes outstanding; memory windows, remote invalidation and chunked backward calls on;
     * a 64 MiB registration cache for caller memory.
     */
    public static RpcRdmaOptions defaults() {
        return new RpcRdmaOptions(DEFAULT_INLINE, DEFAULT_CREDITS, 0, DEFAULT_BACKWARD_CALL_LIMIT, false, 0, 5000,
                DEFAULT_CALL_TIMEOUT_MILLIS, 8, 8, 0, 3, DEFAULT_MAX_CHUNK_BYTES, DEFAULT_MAX_CHUNK_SEGMENTS,
                DEFAULT_CHUNK_MEMORY_BYTES, DEFAULT_RDMA_DEPTH, true, true, true, DEFAULT_REGISTRATION_CACHE_BYTES);
    }

    public RpcRdmaOptions withInlineThreshold(int v) {
        return new RpcRdmaOptions(v, credits, backwardCredits, backwardCallLimit, busyPoll, pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts, maxChunkBytes, maxChunkSegments, chunkMemoryBytes, rdmaDepth, memoryWindows, remoteInvalidation, backwardChunks, registrationCacheBytes);
    }

    public RpcRdmaOptions withCredits(int v) {
        return new RpcRdmaOptions(inlineThreshold, v, backwardCredits, backwardCallLimit, busyPoll, pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts, maxChunkBytes, maxChunkSegments, chunkMemoryBytes, rdmaDepth, memoryWindows, remoteInvalidation, backwardChunks, registrationCacheBytes);
    }

    public RpcRdmaOptions withBackwardCredits(int v) {
        return new RpcRdmaOptions(inlineThreshold, credits, v, backwardCallLimit, busyPoll, pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts, maxChunkBytes, maxChunkSegments, chunkMemoryBytes, rdmaDepth, memoryWindows, remoteInvalidation, backwardChunks, registrationCacheBytes);
    }

    public RpcRdmaOptions withBackwardCallLimit(int v) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, v, busyPoll, pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts, maxChunkBytes, maxChunkSegments, chunkMemoryBytes, rdmaDepth, memoryWindows, remoteInvalidation, backwardChunks, registrationCacheBytes);
    }

    public RpcRdmaOptions withBusyPoll(boolean v) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, v, pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts, maxChunkBytes, maxChunkSegments, chunkMemoryBytes, rdmaDepth, memoryWindows, remoteInvalidation, backwardChunks, registrationCacheBytes);
    }

    public RpcRdmaOptions withPollSpinMicros(int v) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll, v, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts, maxChunkBytes, maxChunkSegments, chunkMemoryBytes, rdmaDepth, memoryWindows, remoteInvalidation, backwardChunks, registrationCacheBytes);
    }

    public RpcRdmaOptions withConnectTimeoutMillis(int v) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll, pollSpinMicros, v, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts, maxChunkBytes, maxChunkSegments, chunkMemoryBytes, rdmaDepth, memoryWindows, remoteInvalidation, backwardChunks, registrationCacheBytes);
    }

    public RpcRdmaOptions withCallTimeoutMillis(long v) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll, pollSpinMicros, connectTimeoutMillis, v, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts, maxChunkBytes, maxChunkSegments, chunkMemoryBytes, rdmaDepth, memoryWindows, remoteInvalidation, backwardChunks, registrationCacheBytes);
    }

    public RpcRdmaOptions withBackchannelWaitMillis(long v) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll, pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, v, reconnectAttempts, maxChunkBytes, maxChunkSegments, chunkMemoryBytes, rdmaDepth, memoryWindows, remoteInvalidation, backwardChunks, registrationCacheBytes);
    }

    public RpcRdmaOptions withReconnectAttempts(int v) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll, pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, v, maxChunkBytes, maxChunkSegments, chunkMemoryBytes, rdmaDepth, memoryWindows, remoteInvalidation, backwardChunks, registrationCacheBytes);
    }

    public RpcRdmaOptions withMaxChunkBytes(int v) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll, pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts, v, maxChunkSegments, chunkMemoryBytes, rdmaDepth, memoryWindows, remoteInvalidation, backwardChunks, registrationCacheBytes);
    }

    public RpcRdmaOptions withMaxChunkSegments(int v) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll, pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts, maxChunkBytes, v, chunkMemoryBytes, rdmaDepth, memoryWindows, remoteInvalidation, backwardChunks, registrationCacheBytes);
    }

    public RpcRdmaOptions withChunkMemoryBytes(long v) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll, pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts, maxChunkBytes, maxChunkSegments, v, rdmaDepth, memoryWindows, remoteInvalidation, backwardChunks, registrationCacheBytes);
    }

    public RpcRdmaOptions withRdmaDepth(int v) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll, pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts, maxChunkBytes, maxChunkSegments, chunkMemoryBytes, v, memoryWindows, remoteInvalidation, backwardChunks, registrationCacheBytes);
    }

    public RpcRdmaOptions withMemoryWindows(boolean v) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll, pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts, maxChunkBytes, maxChunkSegments, chunkMemoryBytes, rdmaDepth, v, remoteInvalidation, backwardChunks, registrationCacheBytes);
    }

    public RpcRdmaOptions withRemoteInvalidation(boolean v) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll, pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts, maxChunkBytes, maxChunkSegments, chunkMemoryBytes, rdmaDepth, memoryWindows, v, backwardChunks, registrationCacheBytes);
    }

    public RpcRdmaOptions withBackwardChunks(boolean v) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll, pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts, maxChunkBytes, maxChunkSegments, chunkMemoryBytes, rdmaDepth, memoryWindows, remoteInvalidation, v, registrationCacheBytes);
    }

    public RpcRdmaOptions withRegistrationCacheBytes(long v) {
        return new RpcRdmaOptions(inlineThreshold, credits, backwardCredits, backwardCallLimit, busyPoll, pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery, backchannelWaitMillis, reconnectAttempts, maxChunkBytes, maxChunkSegments, chunkMemoryBytes, rdmaDepth, memoryWindows, remoteInvalidation, backwardChunks, v);
    }

    /**
     * Client: whether it takes chunked backward calls, doing RDMA Reads and Writes for them
     * (a backchannel with backward chunks on).
     */
    boolean clientTakesBackwardChunks() {
        return backwardChunks && backwardCredits > 0;
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
