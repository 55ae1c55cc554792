package org.rpcrdma.transport;

/**
 * Endpoint options, immutable, made only by a {@link Builder} ({@link #builder()}, or
 * {@link #toBuilder()} of options in hand) that checks every value in {@link Builder#build()}:
 * with no public constructor, an option added later breaks no caller. Each accessor returns
 * the value of the builder setter of the same name, which documents it. The port is not an
 * option but part of the address given to {@link RpcRdmaClient#connect} or
 * {@link RpcRdmaServer#listen}.
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
    /** The largest {@code credits}, {@code backwardCredits} and {@code backwardCallLimit}. */
    public static final int MAX_CREDITS = 1024;
    /** 1 MiB of NFS READ/WRITE payload plus its headers. */
    public static final int DEFAULT_MAX_CHUNK_BYTES = (1 << 20) + 64 * 1024;
    /** Segments per message: 1 MiB in 16 KiB pieces. */
    public static final int DEFAULT_MAX_CHUNK_SEGMENTS = 64;

    private static final RpcRdmaOptions DEFAULTS = new OptionsBuilder(OptionValues.DEFAULTS).build();

    private final OptionValues v;

    RpcRdmaOptions(OptionValues v) {
        this.v = v;
    }

    /** A builder holding the defaults (each stated on its setter). */
    public static Builder builder() {
        return new OptionsBuilder(OptionValues.DEFAULTS);
    }

    /** A builder holding these options' values. */
    public Builder toBuilder() {
        return new OptionsBuilder(v);
    }

    /** The options {@code builder().build()} makes. */
    public static RpcRdmaOptions defaults() {
        return DEFAULTS;
    }

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

    /** See {@link Builder#sharedReceives}. */
    public int sharedReceives() {
        return v.sharedReceives();
    }

    /** See {@link Builder#silenceTimeoutMillis}. */
    public long silenceTimeoutMillis() {
        return v.silenceTimeoutMillis();
    }

    /** See {@link Builder#completionThreads}. */
    public int completionThreads() {
        return v.completionThreads();
    }

    /** See {@link Builder#shareClientThreads}. */
    public boolean shareClientThreads() {
        return v.shareClientThreads();
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
        return "RpcRdmaOptions" + v.toString().substring(OptionValues.class.getSimpleName().length());
    }

    /**
     * Option values, from the defaults or from options in hand. Setters do not check (options
     * that bound each other can be set in any order); {@link #build()} checks all. Not
     * thread-safe; reusable. Each setter says which side (client, server, both) it affects.
     * Implemented by the transport only.
     */
    public sealed interface Builder permits OptionsBuilder {
        /**
         * Our inline threshold in bytes, for receiving and for sending: the largest RPC-over-RDMA
         * message that travels in one Send (RFC 8166 §3.3.2), advertised in the connection's
         * private data (RFC 8797 §4). Both sides; a connection uses the smaller of ours and the
         * peer's each way. A multiple of 1024 from 1024 to 262144 (what RFC 8797 §4.2 can
         * carry); default {@value #DEFAULT_INLINE}.
         */
        Builder inlineThreshold(int v);

        /**
         * Forward credits, in calls (RFC 8166 §3.3.1): a server grants each client at most this
         * many outstanding calls (and posts receives for them); a client asks for this many and
         * keeps at most this many outstanding. 1 to {@link #MAX_CREDITS}; default 32.
         */
        Builder credits(int v);

        /**
         * Client: backward credits, in calls, that it grants the server on its backchannel
         * (RFC 8167 §4.1) and posts receives for. 0 to {@link #MAX_CREDITS}; default 0, which
         * disables the backchannel. A server ignores it (see {@link #backwardCallLimit}).
         */
        Builder backwardCredits(int v);

        /**
         * Server: the most backward calls it keeps outstanding on one connection; its window is
         * the client's grant (RFC 8167 §4.1) clamped to this. 1 to {@link #MAX_CREDITS}; default
         * 16. A client ignores it.
         */
        Builder backwardCallLimit(int v);

        /**
         * Both sides: poll the completion queue continuously (lowest latency, burns a core)
         * instead of waiting on the completion channel; a thread blocked in a call spins for its
         * own reply. Default false.
         */
        Builder busyPoll(boolean v);

        /**
         * Both sides, without {@link #busyPoll}: microseconds the poller keeps polling after each
         * completion before it arms the completion channel and sleeps (a conversation stays hot,
         * an idle connection sleeps). 0 to 1,000,000; default 0: pure events.
         */
        Builder pollSpinMicros(int v);

        /**
         * Client: milliseconds for address resolution, route resolution and the connect each, on
         * the first connect and every reconnect. 1 to 600,000; default 5000.
         */
        Builder connectTimeoutMillis(int v);

        /**
         * Both sides: milliseconds a call waits for its reply when its {@link CallOptions} name
         * no timeout, before it fails with {@link CallTimeoutException} (a client's forward calls,
         * a server's backward calls). 0: no timeout. 0 to {@code Long.MAX_VALUE / 2}; default
         * 60,000.
         */
        Builder callTimeoutMillis(long v);

        /**
         * Both sides: receives are posted again at least this many at a time (fewer doorbells;
         * the receive pool holds this many more buffers). 1 to 256; default 8.
         */
        Builder receiveBatch(int v);

        /**
         * Both sides: one Send in this many asks for a completion (selective signalling; the
         * others are reclaimed with it). 1 to 256; default 8.
         */
        Builder signalEvery(int v);

        /**
         * Both sides: milliseconds a backchannel outlives a lost connection. A server's pending
         * backward calls wait this long for the client to come back; a client with a backchannel
         * keeps reconnecting this long, past {@link #reconnectAttempts}, the pause doubling up to
         * 30 s. 0: no limit (RFC 8167 §5.4: backward requesters wait indefinitely, a client keeps
         * its connection while callbacks are possible). Each call still has its own timeout. 0 to
         * {@code Long.MAX_VALUE / 2}; default 0.
         */
        Builder backchannelWaitMillis(long v);

        /**
         * Client: how many times it tries to connect again after losing its connection, when it
         * has calls to resend or a backchannel to keep (0: never; pending calls then fail with
         * {@link ConnectionLostException}); with a backchannel, at least this many (see
         * {@link #backchannelWaitMillis}). 0 to 1000; default 3.
         */
        Builder reconnectAttempts(int v);

        /**
         * Both sides: the largest RPC message in bytes that travels through chunks, either way (a
         * long call pulled by RDMA Read, a reply written into a Reply chunk); a peer's chunk lists
         * claiming more are answered ERR_CHUNK before anything is allocated (RFC 8166 §4.5.2). At
         * least {@link #inlineThreshold}, at most 1 GiB; default
         * {@value #DEFAULT_MAX_CHUNK_BYTES} (1 MiB + 64 KiB).
         */
        Builder maxChunkBytes(int v);

        /**
         * Both sides: the most RDMA segments (RFC 8166 §3.4.3) over all chunks of one message
         * that we accept (more: ERR_CHUNK, RFC 8166 §4.5.2) or send. 1 to 4096; default
         * {@value #DEFAULT_MAX_CHUNK_SEGMENTS}.
         */
        Builder maxChunkSegments(int v);

        /**
         * Both sides: bytes of memory per connection registered once for chunk data; a message
         * that finds it full gets memory registered for itself. 0 to 16 GiB; default 4 MiB.
         */
        Builder chunkMemoryBytes(long v);

        /**
         * Both sides: the most RDMA Reads and Writes one connection has outstanding, offered at
         * connect as the initiator depth and also bounded by the device and by the peer's offer.
         * 1 to 255; default 16 (Linux nfsd offers 8; rxe and most HCAs allow 16 and more).
         */
        Builder rdmaDepth(int v);

        /**
         * Both sides: expose chunk memory to the peer through a type-2 memory window bound per
         * RPC over memory registered once (RFC 8166 §4.4; Linux's FRWR); false, or a device
         * without windows: a registration per RPC. Default true.
         */
        Builder memoryWindows(boolean v);

        /**
         * Both sides: set R in our private data (RFC 8797 §4.1). As requester we then take the
         * peer's Send With Invalidate in place of a LOCAL_INV; as responder, when the peer set R,
         * we answer a call that exposed rkeys with one, of the first rkey it names. False: R
         * clear, we never send one (a peer's is still recognised and counted). Default true.
         */
        Builder remoteInvalidation(boolean v);

        /**
         * Client with backward credits: take backward calls with chunks (RFC 8167 §5.3) and say
         * so when it enables the backchannel, so a server of ours may send them (the client then
         * connects with an RDMA Read depth of its own); false: such calls are answered
         * ERR_CHUNK. A server sends chunks in backward calls only to a client that said it takes
         * them. Default true.
         */
        Builder backwardChunks(boolean v);

        /**
         * Both sides: the most bytes of ordinary caller memory (native segments of an arena, not
         * from {@link RpcRdmaClient#allocateRegistered}) an endpoint keeps registered so that
         * calls expose it in place instead of copying it; least recently used entries go first.
         * 0: no cache, such memory is copied. 0 to 1 TiB; default 64 MiB.
         */
        Builder registrationCacheBytes(long v);

        /**
         * Server: its connections take their receives from one shared receive queue per
         * device of this many buffers of the inline threshold (0: a receive queue and buffers
         * per connection, as a client has). Registered receive memory is then this times the
         * inline threshold however many clients there are; an eighth of the buffers is kept
         * for the replies to backward calls, the rest backs forward credits: each connection
         * is granted 1 + an equal share of them (at most {@link #credits}, RFC 8166 §3.3.1),
         * and up to half of them connections are served at once (more are refused). 0 or 64
         * to 65536. Default 0.
         */
        Builder sharedReceives(int v);

        /**
         * Both sides: milliseconds our calls on a connection may all stay without a reply
         * (sent, not abandoned, and nothing answered meanwhile) before the connection is
         * declared dead, as xprtrdma disconnects on an RPC timeout: a reliable connection can
         * still lose a Send (Soft-RoCE can stop retransmitting with its QP in RTS). Its calls
         * then fail with {@link ConnectionLostException}; a client's calls made with retry go
         * again, same XIDs, on its next connection. Watched only while a call has a timeout.
         * 0: never. 0 to {@code Long.MAX_VALUE / 2}; default 60,000.
         */
        Builder silenceTimeoutMillis(long v);

        /**
         * Server: its connections complete on this many shared completion queues per device,
         * each with one thread that takes their completions ({@link #busyPoll} spins it,
         * {@link #pollSpinMicros} applies to it), a connection assigned to the queue with the
         * most room when accepted: the server's threads and wake-ups are the same however
         * many clients there are, and an idle connection costs none. On these queues a thread
         * blocked in a backward call waits for the queue's thread (it does not poll itself),
         * and handlers run on the queue's thread: one that blocks holds up every connection on
         * its queue (see {@link CallHandler#onExecutor}). When no queue has room for a new
         * connection's work requests the group opens another queue on the thread with the
         * least reserved (threads never grow; a connection larger than a whole queue is
         * refused). 0: a completion queue and a poller thread per connection, as a client
         * has by default. A client uses it only with {@link #shareClientThreads} (0 then
         * counts as 1). 0 to 1024; default: the number of cores, at most 4.
         */
        Builder completionThreads(int v);

        /**
         * Client: its connection completes on a completion group of {@link #completionThreads}
         * threads per device shared with every other client of this JVM that sets this too,
         * and its rdma_cm events (a disconnect) are read by one thread shared with them: a
         * JVM's threads then do not grow with its clients (a load generator, a gateway with
         * hundreds of connections). As on a server's shared queues, a thread blocked in a
         * call waits for the group's thread (it does not poll itself), and backward-call
         * handlers run on the group's threads: one that blocks holds up every client on its
         * queue. The group and the shared thread go when the last client using them closes.
         * false: each connection has a completion queue, a poller thread and an rdma_cm
         * thread of its own. Default false.
         */
        Builder shareClientThreads(boolean v);

        /**
         * The options, every value checked.
         *
         * @throws IllegalArgumentException naming the first option out of its range, with the rule
         */
        RpcRdmaOptions build();
    }
}
