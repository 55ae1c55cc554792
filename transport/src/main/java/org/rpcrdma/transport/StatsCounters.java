package org.rpcrdma.transport;

import java.util.concurrent.atomic.LongAdder;

/**
 * The live transport counters of one endpoint, in the spirit of Linux {@code struct
 * rpcrdma_stats}: every error branch and every drop has one, so a misbehaving peer shows up
 * in numbers, not only in logs. Internal code counts here; users see an immutable
 * {@link RpcRdmaStats} (each counter's meaning is documented there) made by
 * {@link #snapshot()}, which sums every counter and so is never taken on a call's path.
 * Each is an {@link OwnedCounter}: the thread that counts most (the first to count) does so
 * without an atomic operation.
 */
final class StatsCounters {
    final LongAdder callsSent = new OwnedCounter();
    final LongAdder repliesSent = new OwnedCounter();
    final LongAdder callsReceived = new OwnedCounter();
    final LongAdder repliesReceived = new OwnedCounter();
    final LongAdder unmatchedForwardReplies = new OwnedCounter();
    final LongAdder unmatchedBackwardReplies = new OwnedCounter();
    final LongAdder abandonedCalls = new OwnedCounter();
    final LongAdder callTimeouts = new OwnedCounter();
    final LongAdder lateReplies = new OwnedCounter();
    final LongAdder abandonedWindowResets = new OwnedCounter();
    final LongAdder malformedReplies = new OwnedCounter();
    final LongAdder repliesRefused = new OwnedCounter();
    final LongAdder handlerFailures = new OwnedCounter();
    final LongAdder creditWaits = new OwnedCounter();
    final LongAdder sendContextWaits = new OwnedCounter();
    final LongAdder receiveBufferWaits = new OwnedCounter();
    final LongAdder creditsIgnored = new OwnedCounter();
    final LongAdder badHeaders = new OwnedCounter();
    final LongAdder errVersSent = new OwnedCounter();
    final LongAdder errChunkSent = new OwnedCounter();
    final LongAdder rdmaErrorsReceived = new OwnedCounter();
    final LongAdder creditViolations = new OwnedCounter();
    final LongAdder receivesPosted = new OwnedCounter();
    final LongAdder receiveBatches = new OwnedCounter();
    final LongAdder connectionsLost = new OwnedCounter();
    final LongAdder sendsSignalled = new OwnedCounter();
    final LongAdder chunkedCallsReceived = new OwnedCounter();
    final LongAdder chunkListsRefused = new OwnedCounter();
    final LongAdder rdmaReads = new OwnedCounter();
    final LongAdder rdmaWrites = new OwnedCounter();
    final LongAdder rdmaBytesRead = new OwnedCounter();
    final LongAdder rdmaBytesWritten = new OwnedCounter();
    final LongAdder replyChunksUsed = new OwnedCounter();
    final LongAdder repliesThroughReplyChunk = new OwnedCounter();
    final LongAdder longCallsSent = new OwnedCounter();
    final LongAdder rdmaDepthWaits = new OwnedCounter();
    final LongAdder windowsBound = new OwnedCounter();
    final LongAdder exposureRegistrations = new OwnedCounter();
    final LongAdder zeroCopyExposures = new OwnedCounter();
    final LongAdder registeredBufferRegistrations = new OwnedCounter();
    final LongAdder registeredBufferDeregistrations = new OwnedCounter();
    final LongAdder registrationCacheHits = new OwnedCounter();
    final LongAdder registrationCacheMisses = new OwnedCounter();
    final LongAdder registrationCacheEvictions = new OwnedCounter();
    final LongAdder localInvalidations = new OwnedCounter();
    final LongAdder remoteInvalidations = new OwnedCounter();
    final LongAdder remoteInvalidationsUnnegotiated = new OwnedCounter();
    final LongAdder sendsWithInvalidate = new OwnedCounter();
    final LongAdder channelWakeups = new OwnedCounter();
    final LongAdder repliesTakenByCaller = new OwnedCounter();
    final LongAdder repliesHandedOff = new OwnedCounter();

    /** An immutable copy of every counter now (racy across counters, as any reading of live counters). */
    RpcRdmaStats snapshot() {
        return new RpcRdmaStats(this);
    }

    @Override
    public String toString() {
        return snapshot().toString();
    }
}
