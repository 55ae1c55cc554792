package org.rpcrdma.transport;

import static org.rpcrdma.transport.RpcRdmaOptions.DEFAULT_INLINE;
import static org.rpcrdma.transport.RpcRdmaOptions.DEFAULT_MAX_CHUNK_BYTES;
import static org.rpcrdma.transport.RpcRdmaOptions.DEFAULT_MAX_CHUNK_SEGMENTS;
import static org.rpcrdma.transport.RpcRdmaOptions.MAX_CREDITS;

import org.rpcrdma.transport.wire.ConnectPrivate;

/**
 * The value of every option of {@link RpcRdmaOptions}, their defaults and their rules: the
 * one place a value is checked (the constructor), so no options exist that break a rule.
 * Equality, hash and text are the record's. Each option is documented on its
 * {@link RpcRdmaOptions.Builder} setter.
 */
record OptionValues(int inlineThreshold, int credits, int backwardCredits, int backwardCallLimit, boolean busyPoll,
        int pollSpinMicros, int connectTimeoutMillis, long callTimeoutMillis, int receiveBatch, int signalEvery,
        long backchannelWaitMillis, int reconnectAttempts, int maxChunkBytes, int maxChunkSegments,
        long chunkMemoryBytes, int rdmaDepth, boolean memoryWindows, boolean remoteInvalidation,
        boolean backwardChunks, long registrationCacheBytes, int sharedReceives, long silenceTimeoutMillis,
        int completionThreads, boolean shareClientThreads) {

    /**
     * A server's completion threads by default: one per core, at most 4 (each thread's CQs
     * are up to 65,536 entries, 4 MiB of pinned CQEs on a typical NIC, and more threads pay off
     * only with as many busy clients: set it higher for those).
     */
    static final int DEFAULT_COMPLETION_THREADS = Math.min(4, Runtime.getRuntime().availableProcessors());

    /** The defaults: what {@code RpcRdmaOptions.builder()} starts from. */
    static final OptionValues DEFAULTS = new OptionValues(
            DEFAULT_INLINE,             // inlineThreshold
            32,                         // credits
            0,                          // backwardCredits: no backchannel
            16,                         // backwardCallLimit
            false,                      // busyPoll
            0,                          // pollSpinMicros: pure events
            5000,                       // connectTimeoutMillis
            60_000,                     // callTimeoutMillis
            8,                          // receiveBatch
            8,                          // signalEvery
            0,                          // backchannelWaitMillis: no limit
            3,                          // reconnectAttempts
            DEFAULT_MAX_CHUNK_BYTES,    // maxChunkBytes
            DEFAULT_MAX_CHUNK_SEGMENTS, // maxChunkSegments
            4L << 20,                   // chunkMemoryBytes
            16,                         // rdmaDepth
            true,                       // memoryWindows
            true,                       // remoteInvalidation
            true,                       // backwardChunks
            64L << 20,                  // registrationCacheBytes
            0,                          // sharedReceives: a receive queue per connection
            60_000,                     // silenceTimeoutMillis: as the NFS-over-RDMA timeo default
            DEFAULT_COMPLETION_THREADS, // completionThreads: a server's shared CQs, one thread each
            false);                     // shareClientThreads: a client's own poller and rdma_cm threads

    /** @throws IllegalArgumentException naming the first option out of its range, with the rule */
    OptionValues {
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
        check("silenceTimeoutMillis", silenceTimeoutMillis, 0, Long.MAX_VALUE / 2);
        if (sharedReceives != 0) {
            check("sharedReceives", sharedReceives, 64, 65536);
        }
        check("completionThreads", completionThreads, 0, 1024);
    }

    private static void check(String name, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " must be in [" + min + ", " + max + "], got " + v);
        }
    }
}
