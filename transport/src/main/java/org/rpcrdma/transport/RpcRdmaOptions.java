package org.rpcrdma.transport;

import org.rpcrdma.transport.wire.ConnectPrivate;

/**
 * Endpoint options, immutable: made by {@link #builder()} (or {@link #defaults()},
 * {@link #toBuilder()}, a {@code withX} derivation), every value validated by
 * {@link Builder#build()} with an error naming the option and the rule. Each accessor's
 * meaning and range are on the builder's setter of the same name. The port is not an option:
 * it is part of the address given to {@link RpcRdmaClient#connect} or
 * {@link RpcRdmaServer#listen} ({@link #DEFAULT_PORT} is the usual one, RFC 8166 §9).
 *
 * <pre>{@code
 * RpcRdmaOptions o = RpcRdmaOptions.builder().inlineThreshold(8192).backwardCredits(4).build();
 * }</pre>
 */
public final class RpcRdmaOptions {

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

    /** Every option's value: equality, hash and text are the record's. */
    private record Values(int inlineThreshold, int credits, int backwardCredits, int backwardCallLimit,
            boolean busyPoll, int pollSpinMicros, int connectTimeoutMillis, long callTimeoutMillis, int receiveBatch,
            int signalEvery, long backchannelWaitMillis, int reconnectAttempts, int maxChunkBytes,
            int maxChunkSegments, long chunkMemoryBytes, int rdmaDepth, boolean memoryWindows,
            boolean remoteInvalidation, boolean backwardChunks, long registrationCacheBytes, int sharedReceives) {}

    private final Values v;

    private RpcRdmaOptions(Values v) {
        this.v = v;
    }

    /** A builder holding the {@link #defaults()}. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding these options' values. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /**
     * Defaults: 4 KiB inline, 32 credits, backchannel off (a server keeps at most 16
     * backward calls outstanding), event-mode polling, 5 s connect timeout, calls time out
     * after 60 s, 3 reconnect attempts, and a backchannel kept across a lost connection
     * without limit (a client with one keeps reconnecting, backward calls wait); chunked
     * messages up to 1 MiB + 64 KiB in at most 64 segments, 4 MiB of chunk memory per
     * connection, 16 RDMA Reads/Writes outstanding; memory windows, remote invalidation and
     * chunked backward calls on; a 64 MiB registration cache for caller memory.
     */
    public static RpcRdmaOptions defaults() {
        return DEFAULTS;
    }

    private static final RpcRdmaOptions DEFAULTS = new Builder().build();

    /** See {@link Builder#inlineThreshold}. */
    public int inlineThreshold() {
        return v.inlineThreshold();
    }

    /** See {@link Builder#credits}. */
    public int credits() {
        return v.credits();
    }

    /** See {@link Builder#backwardCredits}. */
    public int backwardCredits() {
        return v.backwardCredits();
    }

    /** See {@link Builder#backwardCallLimit}. */
    public int backwardCallLimit() {
        return v.backwardCallLimit();
    }

    /** See {@link Builder#busyPoll}. */
    public boolean busyPoll() {
        return v.busyPoll();
    }

    /** See {@link Builder#pollSpinMicros}. */
    public int pollSpinMicros() {
        return v.pollSpinMicros();
    }

    /** See {@link Builder#connectTimeoutMillis}. */
    public int connectTimeoutMillis() {
        return v.connectTimeoutMillis();
    }

    /** See {@link Builder#callTimeoutMillis}. */
    public long callTimeoutMillis() {
        return v.callTimeoutMillis();
    }

    /** See {@link Builder#receiveBatch}. */
    public int receiveBatch() {
        return v.receiveBatch();
    }

    /** See {@link Builder#sharedReceives}. */
    public int sharedReceives() {
        return v.sharedReceives();
    }

    /** See {@link Builder#signalEvery}. */
    public int signalEvery() {
        return v.signalEvery();
    }

    /** See {@link Builder#backchannelWaitMillis}. */
    public long backchannelWaitMillis() {
        return v.backchannelWaitMillis();
    }

    /** See {@link Builder#reconnectAttempts}. */
    public int reconnectAttempts() {
        return v.reconnectAttempts();
    }

    /** See {@link Builder#maxChunkBytes}. */
    public int maxChunkBytes() {
        return v.maxChunkBytes();
    }

    /** See {@link Builder#maxChunkSegments}. */
    public int maxChunkSegments() {
        return v.maxChunkSegments();
    }

    /** See {@link Builder#chunkMemoryBytes}. */
    public long chunkMemoryBytes() {
        return v.chunkMemoryBytes();
    }

    /** See {@link Builder#rdmaDepth}. */
    public int rdmaDepth() {
        return v.rdmaDepth();
    }

    /** See {@link Builder#memoryWindows}. */
    public boolean memoryWindows() {
        return v.memoryWindows();
    }

    /** See {@link Builder#remoteInvalidation}. */
    public boolean remoteInvalidation() {
        return v.remoteInvalidation();
    }

    /** See {@link Builder#backwardChunks}. */
    public boolean backwardChunks() {
        return v.backwardChunks();
    }

    /** See {@link Builder#registrationCacheBytes}. */
    public long registrationCacheBytes() {
        return v.registrationCacheBytes();
    }

    /** These options with inlineThreshold set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withInlineThreshold(int v) {
        return toBuilder().inlineThreshold(v).build();
    }

    /** These options with credits set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withCredits(int v) {
        return toBuilder().credits(v).build();
    }

    /** These options with backwardCredits set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withBackwardCredits(int v) {
        return toBuilder().backwardCredits(v).build();
    }

    /** These options with backwardCallLimit set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withBackwardCallLimit(int v) {
        return toBuilder().backwardCallLimit(v).build();
    }

    /** These options with busyPoll set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withBusyPoll(boolean v) {
        return toBuilder().busyPoll(v).build();
    }

    /** These options with pollSpinMicros set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withPollSpinMicros(int v) {
        return toBuilder().pollSpinMicros(v).build();
    }

    /** These options with connectTimeoutMillis set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withConnectTimeoutMillis(int v) {
        return toBuilder().connectTimeoutMillis(v).build();
    }

    /** These options with callTimeoutMillis set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withCallTimeoutMillis(long v) {
        return toBuilder().callTimeoutMillis(v).build();
    }

    /** These options with receiveBatch set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withReceiveBatch(int v) {
        return toBuilder().receiveBatch(v).build();
    }

    /** These options with signalEvery set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withSignalEvery(int v) {
        return toBuilder().signalEvery(v).build();
    }

    /** These options with backchannelWaitMillis set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withBackchannelWaitMillis(long v) {
        return toBuilder().backchannelWaitMillis(v).build();
    }

    /** These options with reconnectAttempts set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withReconnectAttempts(int v) {
        return toBuilder().reconnectAttempts(v).build();
    }

    /** These options with maxChunkBytes set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withMaxChunkBytes(int v) {
        return toBuilder().maxChunkBytes(v).build();
    }

    /** These options with maxChunkSegments set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withMaxChunkSegments(int v) {
        return toBuilder().maxChunkSegments(v).build();
    }

    /** These options with chunkMemoryBytes set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withChunkMemoryBytes(long v) {
        return toBuilder().chunkMemoryBytes(v).build();
    }

    /** These options with rdmaDepth set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withRdmaDepth(int v) {
        return toBuilder().rdmaDepth(v).build();
    }

    /** These options with memoryWindows set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withMemoryWindows(boolean v) {
        return toBuilder().memoryWindows(v).build();
    }

    /** These options with remoteInvalidation set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withRemoteInvalidation(boolean v) {
        return toBuilder().remoteInvalidation(v).build();
    }

    /** These options with backwardChunks set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withBackwardChunks(boolean v) {
        return toBuilder().backwardChunks(v).build();
    }

    /** These options with registrationCacheBytes set (validated as by {@link Builder#build()}). */
    public RpcRdmaOptions withRegistrationCacheBytes(long v) {
        return toBuilder().registrationCacheBytes(v).build();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RpcRdmaOptions x && v.equals(x.v);
    }

    @Override
    public int hashCode() {
        return v.hashCode();
    }

    @Override
    public String toString() {
        return "RpcRdmaOptions" + v.toString().substring("Values".length());
    }

    /**
     * Collects option values, starting from the {@link #defaults()}; {@link #build()}
     * validates them all. Not thread-safe; reusable (each {@code build()} makes new options).
     */
    public static final class Builder {
        private int inlineThreshold = DEFAULT_INLINE;
        private int credits = DEFAULT_CREDITS;
        private int backwardCredits = 0;
        private int backwardCallLimit = DEFAULT_BACKWARD_CALL_LIMIT;
        private boolean busyPoll = false;
        private int pollSpinMicros = 0;
        private int connectTimeoutMillis = 5000;
        private long callTimeoutMillis = DEFAULT_CALL_TIMEOUT_MILLIS;
        private int receiveBatch = 8;
        private int signalEvery = 8;
        private long backchannelWaitMillis = 0;
        private int reconnectAttempts = 3;
        private int maxChunkBytes = DEFAULT_MAX_CHUNK_BYTES;
        private int maxChunkSegments = DEFAULT_MAX_CHUNK_SEGMENTS;
        private long chunkMemoryBytes = DEFAULT_CHUNK_MEMORY_BYTES;
        private int rdmaDepth = DEFAULT_RDMA_DEPTH;
        private boolean memoryWindows = true;
        private boolean remoteInvalidation = true;
        private boolean backwardChunks = true;
        private long registrationCacheBytes = DEFAULT_REGISTRATION_CACHE_BYTES;
        private int sharedReceives = 0;

        private Builder() {
        }

        private Builder(RpcRdmaOptions o) {
            inlineThreshold = o.v.inlineThreshold();
            credits = o.v.credits();
            backwardCredits = o.v.backwardCredits();
            backwardCallLimit = o.v.backwardCallLimit();
            busyPoll = o.v.busyPoll();
            pollSpinMicros = o.v.pollSpinMicros();
            connectTimeoutMillis = o.v.connectTimeoutMillis();
            callTimeoutMillis = o.v.callTimeoutMillis();
            receiveBatch = o.v.receiveBatch();
            sharedReceives = o.v.sharedReceives();
            signalEvery = o.v.signalEvery();
            backchannelWaitMillis = o.v.backchannelWaitMillis();
            reconnectAttempts = o.v.reconnectAttempts();
            maxChunkBytes = o.v.maxChunkBytes();
            maxChunkSegments = o.v.maxChunkSegments();
            chunkMemoryBytes = o.v.chunkMemoryBytes();
            rdmaDepth = o.v.rdmaDepth();
            memoryWindows = o.v.memoryWindows();
            remoteInvalidation = o.v.remoteInvalidation();
            backwardChunks = o.v.backwardChunks();
            registrationCacheBytes = o.v.registrationCacheBytes();
        }

        /**
         * Our send and receive inline sizes, advertised in RFC 8797 private data (a multiple of 1024
         * from 1024 to 262144, the sizes its encoding can carry, RFC 8797 §4.2); a connection uses the
         * negotiated minimum. Default 4096 ({@link #DEFAULT_INLINE}).
         */
        public Builder inlineThreshold(int v) {
            inlineThreshold = v;
            return this;
        }

        /**
         * Calls the server lets a client have outstanding (forward credits), 1 to
         * {@link #MAX_CREDITS}. Default 32.
         */
        public Builder credits(int v) {
            credits = v;
            return this;
        }

        /**
         * Client: calls the client lets the server have outstanding on its backchannel (RFC 8167 §4),
         * 0 to {@link #MAX_CREDITS}; 0, the default, disables the backchannel.
         */
        public Builder backwardCredits(int v) {
            backwardCredits = v;
            return this;
        }

        /**
         * Server: the most backward calls it keeps outstanding on one connection; its window is the
         * client's grant clamped to this. 1 to {@link #MAX_CREDITS}, default 16.
         */
        public Builder backwardCallLimit(int v) {
            backwardCallLimit = v;
            return this;
        }

        /**
         * Poll the CQ continuously (lowest latency, burns a core) instead of waiting on the completion
         * channel. Default false.
         */
        public Builder busyPoll(boolean v) {
            busyPoll = v;
            return this;
        }

        /**
         * Without busyPoll: after each completion the poller keeps polling this long before it arms
         * the completion channel and sleeps (adaptive: a conversation stays hot, an idle connection
         * sleeps). 0 to 1,000,000; 0, the default: pure events.
         */
        public Builder pollSpinMicros(int v) {
            pollSpinMicros = v;
            return this;
        }

        /**
         * Address/route resolution and connect timeout, 1 to 600,000 ms. Default 5000.
         */
        public Builder connectTimeoutMillis(int v) {
            connectTimeoutMillis = v;
            return this;
        }

        /**
         * Default time a call waits for its reply before it fails with {@link CallTimeoutException}
         * (0: no default timeout). Default 60 s.
         */
        public Builder callTimeoutMillis(long v) {
            callTimeoutMillis = v;
            return this;
        }

        /**
         * Receives are reposted at least this many at a time, 1 to 256. Default 8.
         */
        public Builder receiveBatch(int v) {
            receiveBatch = v;
            return this;
        }

        /**
         * Server: its connections take their receives from one shared receive queue per
         * device of this many buffers of the inline threshold (0: a receive queue and buffers
         * per connection, as a client has). Registered receive memory is then this times the
         * inline threshold however many clients there are; an eighth of the buffers is kept
         * for the replies to backward calls, the rest backs forward credits: each connection
         * is granted 1 + an equal share of them (at most {@link #credits}), and up to half of
         * them connections are served at once (more are refused). 0 or 64 to 65536. Default 0.
         */
        public Builder sharedReceives(int v) {
            sharedReceives = v;
            return this;
        }

        /**
         * Signal one Send in this many (selective signalling), 1 to 256. Default 8.
         */
        public Builder signalEvery(int v) {
            signalEvery = v;
            return this;
        }

        /**
         * How long a backchannel outlives a lost connection: a server's pending backward calls wait
         * this long for the client to come back, a client with a backchannel keeps reconnecting this
         * long (past reconnectAttempts, the pause doubling up to 30 s); 0: no limit, the default
         * (RFC 8167 §5.4: backward requesters wait indefinitely, a client keeps its connection while
         * callbacks are possible). Each call still has its own timeout.
         */
        public Builder backchannelWaitMillis(long v) {
            backchannelWaitMillis = v;
            return this;
        }

        /**
         * How many times a client tries to connect again after losing its connection, when it has
         * calls to resend or a backchannel to keep (0: never; pending calls then fail with
         * {@link ConnectionLostException}); with a backchannel, at least this many (see
         * {@link #backchannelWaitMillis}). 0 to 1000, default 3.
         */
        public Builder reconnectAttempts(int v) {
            reconnectAttempts = v;
            return this;
        }

        /**
         * The largest RPC message that travels through chunks, either way (a long call pulled by RDMA
         * Read, a reply written into a Reply chunk); a peer's chunk lists claiming more are answered
         * ERR_CHUNK before anything is allocated (RFC 8166 §4.5.2). At least the inline threshold, at
         * most 1 GiB; default 1 MiB + 64 KiB.
         */
        public Builder maxChunkBytes(int v) {
            maxChunkBytes = v;
            return this;
        }

        /**
         * The most RDMA segments over all chunks of one message we accept (more: ERR_CHUNK) or send,
         * 1 to 4096. Default 64.
         */
        public Builder maxChunkSegments(int v) {
            maxChunkSegments = v;
            return this;
        }

        /**
         * Registered memory per connection for chunk data, allocated once; a message that finds it
         * full gets memory registered for itself. 0 to 16 GiB, default 4 MiB.
         */
        public Builder chunkMemoryBytes(long v) {
            chunkMemoryBytes = v;
            return this;
        }

        /**
         * The most RDMA Reads and Writes one connection has outstanding (also bounded by the device
         * and by what the peer offered at connect), 1 to 255. Default 16.
         */
        public Builder rdmaDepth(int v) {
            rdmaDepth = v;
            return this;
        }

        /**
         * Expose chunk memory to the peer through a type-2 memory window bound per RPC over memory
         * registered once (RFC 8166 §4.4; Linux's FRWR); false, or a device without windows: a
         * registration per RPC. Default true.
         */
        public Builder memoryWindows(boolean v) {
            memoryWindows = v;
            return this;
        }

        /**
         * Set R in our private data (RFC 8797 §4.1): as requester we take the peer's Send with
         * Invalidate in place of our own LOCAL_INV; as responder we answer with one when the peer set
         * R and the call exposed exactly one rkey. False: R clear, we never send one (a peer's
         * invalidating Send is still recognised and counted). Default true.
         */
        public Builder remoteInvalidation(boolean v) {
            remoteInvalidation = v;
            return this;
        }

        /**
         * Client with backward credits: take backward calls with chunks (RFC 8167 §5.3) and say so in
         * the backchannel-enable call, so a server of ours may send them (the client then connects
         * with an RDMA Read depth of its own); false: such calls are answered ERR_CHUNK. A server
         * sends chunks in backward calls only to a client that said it takes them. Default true.
         */
        public Builder backwardChunks(boolean v) {
            backwardChunks = v;
            return this;
        }

        /**
         * The most bytes of ordinary caller memory (native segments of an arena, not from
         * {@link RpcRdmaClient#allocateRegistered}) an endpoint keeps registered so that calls expose it
         * in place instead of copying it (a registration cache); least recently used entries go
         * first; 0: no cache, such memory is copied. 0 to 1 TiB, default 64 MiB.
         */
        public Builder registrationCacheBytes(long v) {
            registrationCacheBytes = v;
            return this;
        }

        /**
         * The options, every value checked.
         *
         * @throws IllegalArgumentException naming the first option out of its range, with the rule
         */
        public RpcRdmaOptions build() {
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
            if (sharedReceives != 0) {
                check("sharedReceives", sharedReceives, 64, 65536);
            }
            return new RpcRdmaOptions(new Values(inlineThreshold, credits, backwardCredits, backwardCallLimit,
                    busyPoll, pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery,
                    backchannelWaitMillis, reconnectAttempts, maxChunkBytes, maxChunkSegments, chunkMemoryBytes,
                    rdmaDepth, memoryWindows, remoteInvalidation, backwardChunks, registrationCacheBytes, sharedReceives));
        }

        private static void check(String name, long v, long min, long max) {
            if (v < min || v > max) {
                throw new IllegalArgumentException(name + " must be in [" + min + ", " + max + "], got " + v);
            }
        }
    }
}
