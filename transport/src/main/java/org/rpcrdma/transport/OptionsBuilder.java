package org.rpcrdma.transport;

/** The one {@link RpcRdmaOptions.Builder}: a mutable copy of {@link OptionValues}, checked when built. */
final class OptionsBuilder implements RpcRdmaOptions.Builder {
    private int inlineThreshold;
    private int credits;
    private int backwardCredits;
    private int backwardCallLimit;
    private boolean busyPoll;
    private int pollSpinMicros;
    private int connectTimeoutMillis;
    private long callTimeoutMillis;
    private int receiveBatch;
    private int signalEvery;
    private long backchannelWaitMillis;
    private int reconnectAttempts;
    private int maxChunkBytes;
    private int maxChunkSegments;
    private long chunkMemoryBytes;
    private int rdmaDepth;
    private boolean memoryWindows;
    private boolean remoteInvalidation;
    private boolean backwardChunks;
    private long registrationCacheBytes;
    private int sharedReceives;
    private long silenceTimeoutMillis;
    private int completionThreads;
    private boolean shareClientThreads;

    OptionsBuilder(OptionValues o) {
        inlineThreshold = o.inlineThreshold();
        credits = o.credits();
        backwardCredits = o.backwardCredits();
        backwardCallLimit = o.backwardCallLimit();
        busyPoll = o.busyPoll();
        pollSpinMicros = o.pollSpinMicros();
        connectTimeoutMillis = o.connectTimeoutMillis();
        callTimeoutMillis = o.callTimeoutMillis();
        receiveBatch = o.receiveBatch();
        signalEvery = o.signalEvery();
        backchannelWaitMillis = o.backchannelWaitMillis();
        reconnectAttempts = o.reconnectAttempts();
        maxChunkBytes = o.maxChunkBytes();
        maxChunkSegments = o.maxChunkSegments();
        chunkMemoryBytes = o.chunkMemoryBytes();
        rdmaDepth = o.rdmaDepth();
        memoryWindows = o.memoryWindows();
        remoteInvalidation = o.remoteInvalidation();
        backwardChunks = o.backwardChunks();
        registrationCacheBytes = o.registrationCacheBytes();
        sharedReceives = o.sharedReceives();
        silenceTimeoutMillis = o.silenceTimeoutMillis();
        completionThreads = o.completionThreads();
        shareClientThreads = o.shareClientThreads();
    }

    @Override
    public RpcRdmaOptions.Builder inlineThreshold(int v) {
        inlineThreshold = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder credits(int v) {
        credits = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder backwardCredits(int v) {
        backwardCredits = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder backwardCallLimit(int v) {
        backwardCallLimit = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder busyPoll(boolean v) {
        busyPoll = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder pollSpinMicros(int v) {
        pollSpinMicros = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder connectTimeoutMillis(int v) {
        connectTimeoutMillis = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder callTimeoutMillis(long v) {
        callTimeoutMillis = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder receiveBatch(int v) {
        receiveBatch = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder signalEvery(int v) {
        signalEvery = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder backchannelWaitMillis(long v) {
        backchannelWaitMillis = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder reconnectAttempts(int v) {
        reconnectAttempts = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder maxChunkBytes(int v) {
        maxChunkBytes = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder maxChunkSegments(int v) {
        maxChunkSegments = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder chunkMemoryBytes(long v) {
        chunkMemoryBytes = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder rdmaDepth(int v) {
        rdmaDepth = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder memoryWindows(boolean v) {
        memoryWindows = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder remoteInvalidation(boolean v) {
        remoteInvalidation = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder backwardChunks(boolean v) {
        backwardChunks = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder registrationCacheBytes(long v) {
        registrationCacheBytes = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder sharedReceives(int v) {
        sharedReceives = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder silenceTimeoutMillis(long v) {
        silenceTimeoutMillis = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder completionThreads(int v) {
        completionThreads = v;
        return this;
    }

    @Override
    public RpcRdmaOptions.Builder shareClientThreads(boolean v) {
        shareClientThreads = v;
        return this;
    }

    @Override
    public RpcRdmaOptions build() {
        return new RpcRdmaOptions(new OptionValues(inlineThreshold, credits, backwardCredits, backwardCallLimit,
                busyPoll, pollSpinMicros, connectTimeoutMillis, callTimeoutMillis, receiveBatch, signalEvery,
                backchannelWaitMillis, reconnectAttempts, maxChunkBytes, maxChunkSegments, chunkMemoryBytes,
                rdmaDepth, memoryWindows, remoteInvalidation, backwardChunks, registrationCacheBytes, sharedReceives,
                silenceTimeoutMillis, completionThreads, shareClientThreads));
    }
}
