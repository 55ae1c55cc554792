package org.rpcrdma.transport.rpc;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import org.rpcrdma.transport.RpcRdmaStats;

/**
 * The live transport counters of one endpoint, in the spirit of Linux {@code struct
 * rpcrdma_stats}: every error branch and every drop has one, so a misbehaving peer shows up
 * in numbers, not only in logs. Internal code counts here; users see an immutable
 * {@link RpcRdmaStats} (each counter's meaning is documented there) made by
 * {@link #snapshot()}, which sums every counter and so is never taken on a call's path.
 * Each is an {@link OwnedCounter}: the thread that counts most (the first to count) does so
 * without an atomic operation.
 */
public final class StatsCounters {
    public final LongAdder callsSent = new OwnedCounter();
    public final LongAdder repliesSent = new OwnedCounter();
    public final LongAdder callsReceived = new OwnedCounter();
    public final LongAdder repliesReceived = new OwnedCounter();
    public final LongAdder unmatchedForwardReplies = new OwnedCounter();
    public final LongAdder unmatchedBackwardReplies = new OwnedCounter();
    public final LongAdder abandonedCalls = new OwnedCounter();
    public final LongAdder callTimeouts = new OwnedCounter();
    public final LongAdder lateReplies = new OwnedCounter();
    public final LongAdder abandonedWindowResets = new OwnedCounter();
    public final LongAdder malformedReplies = new OwnedCounter();
    public final LongAdder repliesRefused = new OwnedCounter();
    public final LongAdder handlerFailures = new OwnedCounter();
    public final LongAdder creditWaits = new OwnedCounter();
    public final LongAdder sendContextWaits = new OwnedCounter();
    public final LongAdder receiveBufferWaits = new OwnedCounter();
    public final LongAdder creditsIgnored = new OwnedCounter();
    public final LongAdder badHeaders = new OwnedCounter();
    public final LongAdder errVersSent = new OwnedCounter();
    public final LongAdder errChunkSent = new OwnedCounter();
    public final LongAdder rdmaErrorsReceived = new OwnedCounter();
    public final LongAdder creditViolations = new OwnedCounter();
    public final LongAdder receivesPosted = new OwnedCounter();
    public final LongAdder receiveBatches = new OwnedCounter();
    public final LongAdder connectionsLost = new OwnedCounter();
    public final LongAdder sendsSignalled = new OwnedCounter();
    public final LongAdder sendQueuePosts = new OwnedCounter();
    public final LongAdder chunkedCallsReceived = new OwnedCounter();
    public final LongAdder chunkListsRefused = new OwnedCounter();
    public final LongAdder rdmaReads = new OwnedCounter();
    public final LongAdder rdmaWrites = new OwnedCounter();
    public final LongAdder rdmaBytesRead = new OwnedCounter();
    public final LongAdder rdmaBytesWritten = new OwnedCounter();
    public final LongAdder replyChunksUsed = new OwnedCounter();
    public final LongAdder repliesThroughReplyChunk = new OwnedCounter();
    public final LongAdder longCallsSent = new OwnedCounter();
    public final LongAdder rdmaDepthWaits = new OwnedCounter();
    public final LongAdder windowsBound = new OwnedCounter();
    public final LongAdder exposureRegistrations = new OwnedCounter();
    public final LongAdder zeroCopyExposures = new OwnedCounter();
    public final LongAdder registeredBufferRegistrations = new OwnedCounter();
    public final LongAdder registeredBufferDeregistrations = new OwnedCounter();
    public final LongAdder registrationCacheHits = new OwnedCounter();
    public final LongAdder registrationCacheMisses = new OwnedCounter();
    public final LongAdder registrationCacheEvictions = new OwnedCounter();
    public final LongAdder localInvalidations = new OwnedCounter();
    public final LongAdder remoteInvalidations = new OwnedCounter();
    public final LongAdder remoteInvalidationsUnnegotiated = new OwnedCounter();
    public final LongAdder sendsWithInvalidate = new OwnedCounter();
    public final LongAdder channelWakeups = new OwnedCounter();
    public final LongAdder repliesTakenByCaller = new OwnedCounter();
    public final LongAdder repliesHandedOff = new OwnedCounter();

    /** Every counter's sum now, by the name of its {@link RpcRdmaStats} accessor, in the accessors' order. */
    public Map<String, Long> sums() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("callsSent", callsSent.sum());
        m.put("repliesSent", repliesSent.sum());
        m.put("callsReceived", callsReceived.sum());
        m.put("repliesReceived", repliesReceived.sum());
        m.put("unmatchedForwardReplies", unmatchedForwardReplies.sum());
        m.put("unmatchedBackwardReplies", unmatchedBackwardReplies.sum());
        m.put("abandonedCalls", abandonedCalls.sum());
        m.put("callTimeouts", callTimeouts.sum());
        m.put("lateReplies", lateReplies.sum());
        m.put("abandonedWindowResets", abandonedWindowResets.sum());
        m.put("malformedReplies", malformedReplies.sum());
        m.put("repliesRefused", repliesRefused.sum());
        m.put("handlerFailures", handlerFailures.sum());
        m.put("creditWaits", creditWaits.sum());
        m.put("sendContextWaits", sendContextWaits.sum());
        m.put("receiveBufferWaits", receiveBufferWaits.sum());
        m.put("creditsIgnored", creditsIgnored.sum());
        m.put("badHeaders", badHeaders.sum());
        m.put("errVersSent", errVersSent.sum());
        m.put("errChunkSent", errChunkSent.sum());
        m.put("rdmaErrorsReceived", rdmaErrorsReceived.sum());
        m.put("creditViolations", creditViolations.sum());
        m.put("receivesPosted", receivesPosted.sum());
        m.put("receiveBatches", receiveBatches.sum());
        m.put("connectionsLost", connectionsLost.sum());
        m.put("sendsSignalled", sendsSignalled.sum());
        m.put("sendQueuePosts", sendQueuePosts.sum());
        m.put("chunkedCallsReceived", chunkedCallsReceived.sum());
        m.put("chunkListsRefused", chunkListsRefused.sum());
        m.put("rdmaReads", rdmaReads.sum());
        m.put("rdmaWrites", rdmaWrites.sum());
        m.put("rdmaBytesRead", rdmaBytesRead.sum());
        m.put("rdmaBytesWritten", rdmaBytesWritten.sum());
        m.put("replyChunksUsed", replyChunksUsed.sum());
        m.put("repliesThroughReplyChunk", repliesThroughReplyChunk.sum());
        m.put("longCallsSent", longCallsSent.sum());
        m.put("rdmaDepthWaits", rdmaDepthWaits.sum());
        m.put("windowsBound", windowsBound.sum());
        m.put("exposureRegistrations", exposureRegistrations.sum());
        m.put("zeroCopyExposures", zeroCopyExposures.sum());
        m.put("registeredBufferRegistrations", registeredBufferRegistrations.sum());
        m.put("registeredBufferDeregistrations", registeredBufferDeregistrations.sum());
        m.put("registrationCacheHits", registrationCacheHits.sum());
        m.put("registrationCacheMisses", registrationCacheMisses.sum());
        m.put("registrationCacheEvictions", registrationCacheEvictions.sum());
        m.put("localInvalidations", localInvalidations.sum());
        m.put("remoteInvalidations", remoteInvalidations.sum());
        m.put("remoteInvalidationsUnnegotiated", remoteInvalidationsUnnegotiated.sum());
        m.put("sendsWithInvalidate", sendsWithInvalidate.sum());
        m.put("channelWakeups", channelWakeups.sum());
        m.put("repliesTakenByCaller", repliesTakenByCaller.sum());
        m.put("repliesHandedOff", repliesHandedOff.sum());
        return m;
    }

    /** An immutable copy of every counter now (racy across counters, as any reading of live counters). */
    public RpcRdmaStats snapshot() {
        return ApiBridge.access().snapshot(sums());
    }

    @Override
    public String toString() {
        return snapshot().toString();
    }
}
