package org.rpcrdma.transport;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Transport counters of one endpoint at one moment, immutable: {@link Connection#stats()}
 * (one connection; a server's connections count together), {@link RpcRdmaServer#stats()}
 * (all of a server's connections). In the spirit of Linux {@code struct rpcrdma_stats}:
 * every error branch and every drop has a counter, so a misbehaving peer shows up in numbers,
 * not only in logs. Each accessor says which side counts it: the requester (the side that
 * sends calls: a client's forward calls, a server's backward calls, RFC 8167 §2) or the
 * responder (the side that serves them), or both. Counters are read one after another while
 * the connection runs, so a snapshot is exact only once the endpoint is quiet. Taking one
 * sums every counter: for users and tools, not for a call's path.
 */
public final class RpcRdmaStats {
    private final long callsSent;
    private final long repliesSent;
    private final long callsReceived;
    private final long repliesReceived;
    private final long unmatchedForwardReplies;
    private final long unmatchedBackwardReplies;
    private final long abandonedCalls;
    private final long callTimeouts;
    private final long lateReplies;
    private final long abandonedWindowResets;
    private final long malformedReplies;
    private final long repliesRefused;
    private final long handlerFailures;
    private final long creditWaits;
    private final long sendContextWaits;
    private final long receiveBufferWaits;
    private final long creditsIgnored;
    private final long badHeaders;
    private final long errVersSent;
    private final long errChunkSent;
    private final long rdmaErrorsReceived;
    private final long creditViolations;
    private final long receivesPosted;
    private final long receiveBatches;
    private final long connectionsLost;
    private final long sendsSignalled;
    private final long chunkedCallsReceived;
    private final long chunkListsRefused;
    private final long rdmaReads;
    private final long rdmaWrites;
    private final long rdmaBytesRead;
    private final long rdmaBytesWritten;
    private final long replyChunksUsed;
    private final long repliesThroughReplyChunk;
    private final long longCallsSent;
    private final long rdmaDepthWaits;
    private final long windowsBound;
    private final long exposureRegistrations;
    private final long zeroCopyExposures;
    private final long registeredBufferRegistrations;
    private final long registeredBufferDeregistrations;
    private final long registrationCacheHits;
    private final long registrationCacheMisses;
    private final long registrationCacheEvictions;
    private final long localInvalidations;
    private final long remoteInvalidations;
    private final long remoteInvalidationsUnnegotiated;
    private final long sendsWithInvalidate;
    private final long channelWakeups;
    private final long repliesTakenByCaller;
    private final long repliesHandedOff;

    RpcRdmaStats(StatsCounters c) {
        callsSent = c.callsSent.sum();
        repliesSent = c.repliesSent.sum();
        callsReceived = c.callsReceived.sum();
        repliesReceived = c.repliesReceived.sum();
        unmatchedForwardReplies = c.unmatchedForwardReplies.sum();
        unmatchedBackwardReplies = c.unmatchedBackwardReplies.sum();
        abandonedCalls = c.abandonedCalls.sum();
        callTimeouts = c.callTimeouts.sum();
        lateReplies = c.lateReplies.sum();
        abandonedWindowResets = c.abandonedWindowResets.sum();
        malformedReplies = c.malformedReplies.sum();
        repliesRefused = c.repliesRefused.sum();
        handlerFailures = c.handlerFailures.sum();
        creditWaits = c.creditWaits.sum();
        sendContextWaits = c.sendContextWaits.sum();
        receiveBufferWaits = c.receiveBufferWaits.sum();
        creditsIgnored = c.creditsIgnored.sum();
        badHeaders = c.badHeaders.sum();
        errVersSent = c.errVersSent.sum();
        errChunkSent = c.errChunkSent.sum();
        rdmaErrorsReceived = c.rdmaErrorsReceived.sum();
        creditViolations = c.creditViolations.sum();
        receivesPosted = c.receivesPosted.sum();
        receiveBatches = c.receiveBatches.sum();
        connectionsLost = c.connectionsLost.sum();
        sendsSignalled = c.sendsSignalled.sum();
        chunkedCallsReceived = c.chunkedCallsReceived.sum();
        chunkListsRefused = c.chunkListsRefused.sum();
        rdmaReads = c.rdmaReads.sum();
        rdmaWrites = c.rdmaWrites.sum();
        rdmaBytesRead = c.rdmaBytesRead.sum();
        rdmaBytesWritten = c.rdmaBytesWritten.sum();
        replyChunksUsed = c.replyChunksUsed.sum();
        repliesThroughReplyChunk = c.repliesThroughReplyChunk.sum();
        longCallsSent = c.longCallsSent.sum();
        rdmaDepthWaits = c.rdmaDepthWaits.sum();
        windowsBound = c.windowsBound.sum();
        exposureRegistrations = c.exposureRegistrations.sum();
        zeroCopyExposures = c.zeroCopyExposures.sum();
        registeredBufferRegistrations = c.registeredBufferRegistrations.sum();
        registeredBufferDeregistrations = c.registeredBufferDeregistrations.sum();
        registrationCacheHits = c.registrationCacheHits.sum();
        registrationCacheMisses = c.registrationCacheMisses.sum();
        registrationCacheEvictions = c.registrationCacheEvictions.sum();
        localInvalidations = c.localInvalidations.sum();
        remoteInvalidations = c.remoteInvalidations.sum();
        remoteInvalidationsUnnegotiated = c.remoteInvalidationsUnnegotiated.sum();
        sendsWithInvalidate = c.sendsWithInvalidate.sum();
        channelWakeups = c.channelWakeups.sum();
        repliesTakenByCaller = c.repliesTakenByCaller.sum();
        repliesHandedOff = c.repliesHandedOff.sum();
    }

    /** Requester: calls sent. */
    public long callsSent() {
        return callsSent;
    }

    /** Responder: replies sent (inline, or through a Reply chunk). */
    public long repliesSent() {
        return repliesSent;
    }

    /** Responder: calls received. */
    public long callsReceived() {
        return callsReceived;
    }

    /** Requester: replies received that matched a call of ours. */
    public long repliesReceived() {
        return repliesReceived;
    }

    /**
     * Client (requester of forward calls): replies that matched no outstanding forward call
     * (dropped; XIDs are per direction, RFC 8167 §2.4.1).
     */
    public long unmatchedForwardReplies() {
        return unmatchedForwardReplies;
    }

    /**
     * Server (requester of backward calls): replies that matched no outstanding backward call
     * (dropped).
     */
    public long unmatchedBackwardReplies() {
        return unmatchedBackwardReplies;
    }

    /** Requester: calls whose caller gave up (cancel, timeout) before the reply. */
    public long abandonedCalls() {
        return abandonedCalls;
    }

    /**
     * Requester: calls failed by their own deadline ({@link CallTimeoutException}); counted among
     * the {@link #abandonedCalls}.
     */
    public long callTimeouts() {
        return callTimeouts;
    }

    /** Requester: replies to abandoned calls: matched, their buffer released at once. */
    public long lateReplies() {
        return lateReplies;
    }

    /**
     * Requester: connections reset because abandoned calls held every credit (the peer stopped
     * answering).
     */
    public long abandonedWindowResets() {
        return abandonedWindowResets;
    }

    /** Requester: replies that matched a call of ours but could not be used; that call failed. */
    public long malformedReplies() {
        return malformedReplies;
    }

    /**
     * Responder: handler replies refused (too large, wrong XID): the requester got RDMA_ERROR /
     * ERR_CHUNK.
     */
    public long repliesRefused() {
        return repliesRefused;
    }

    /** Responder: call handlers that threw before answering (answered SYSTEM_ERR for them). */
    public long handlerFailures() {
        return handlerFailures;
    }

    /** Requester: calls that waited for a credit (the peer's grant was in use). */
    public long creditWaits() {
        return creditWaits;
    }

    /** Both sides: sends (calls, replies, errors) that waited for a free send context. */
    public long sendContextWaits() {
        return sendContextWaits;
    }

    /**
     * Requester: calls held back because no receive could be posted for their reply (the user holds
     * receive buffers).
     */
    public long receiveBufferWaits() {
        return receiveBufferWaits;
    }

    /**
     * Both sides, as receivers: rdma_credit values ignored because the message tells no direction
     * (RFC 8167 §4.1): an RDMA_DONE, which carries no RPC message. An RDMA_NOMSG tells it by its
     * chunks (a Position-Zero Read chunk: a call, its value a request; else a reply, its value a
     * grant).
     */
    public long creditsIgnored() {
        return creditsIgnored;
    }

    /** Both sides, as receivers: received messages whose RPC-over-RDMA header could not be decoded. */
    public long badHeaders() {
        return badHeaders;
    }

    /** Responder: RDMA_ERROR / ERR_VERS sent (a call in a version we do not speak, RFC 8166 §5.1). */
    public long errVersSent() {
        return errVersSent;
    }

    /** Responder: RDMA_ERROR / ERR_CHUNK sent (chunks we could not use, RFC 8166 §5.3). */
    public long errChunkSent() {
        return errChunkSent;
    }

    /** Requester: RDMA_ERROR messages received. */
    public long rdmaErrorsReceived() {
        return rdmaErrorsReceived;
    }

    /** Responder: calls from a peer that exceeded the credits we granted it. */
    public long creditViolations() {
        return creditViolations;
    }

    /** Both sides: receive buffers posted. */
    public long receivesPosted() {
        return receivesPosted;
    }

    /** Both sides: batches in which they were posted (one post per batch). */
    public long receiveBatches() {
        return receiveBatches;
    }

    /**
     * Both sides: connections lost (not closed by the user): link error, disconnect, flushed
     * completion.
     */
    public long connectionsLost() {
        return connectionsLost;
    }

    /** Both sides: sends posted signalled (one in {@code signalEvery}, and those that must be). */
    public long sendsSignalled() {
        return sendsSignalled;
    }

    /** Responder: calls received with chunks (read, write or reply) that were served. */
    public long chunkedCallsReceived() {
        return chunkedCallsReceived;
    }

    /** Responder: calls whose chunk lists broke our limits or could not be used: answered ERR_CHUNK. */
    public long chunkListsRefused() {
        return chunkListsRefused;
    }

    /** Responder: RDMA Reads posted (one per segment; RFC 8166 §3.4: the responder does them all). */
    public long rdmaReads() {
        return rdmaReads;
    }

    /** Responder: RDMA Writes posted (one per segment). */
    public long rdmaWrites() {
        return rdmaWrites;
    }

    /** Responder: Bytes pulled by RDMA Read. */
    public long rdmaBytesRead() {
        return rdmaBytesRead;
    }

    /** Responder: Bytes pushed by RDMA Write. */
    public long rdmaBytesWritten() {
        return rdmaBytesWritten;
    }

    /** Responder: replies sent through the requester's Reply chunk (RDMA_NOMSG). */
    public long replyChunksUsed() {
        return replyChunksUsed;
    }

    /** Requester: replies to our calls that came through the Reply chunk we offered (RDMA_NOMSG). */
    public long repliesThroughReplyChunk() {
        return repliesThroughReplyChunk;
    }

    /** Requester: calls sent as RDMA_NOMSG through a Position-Zero Read chunk (RFC 8166 §3.5.3). */
    public long longCallsSent() {
        return longCallsSent;
    }

    /** Responder: RDMA Reads and Writes that waited for room under the negotiated depth. */
    public long rdmaDepthWaits() {
        return rdmaDepthWaits;
    }

    /** Requester: memory windows bound for a call's chunk (RFC 8166 §4.4: a fresh rkey per RPC). */
    public long windowsBound() {
        return windowsBound;
    }

    /**
     * Requester: chunk exposures by a registration of their own (no window free, or none on this
     * device).
     */
    public long exposureRegistrations() {
        return exposureRegistrations;
    }

    /**
     * Requester: chunks exposed in place over the caller's memory (a {@link RegisteredBuffer}, or a
     * {@link RegistrationCache} entry): a long call, a DDP argument or a receptacle neither copied
     * into nor out of chunk memory.
     */
    public long zeroCopyExposures() {
        return zeroCopyExposures;
    }

    /**
     * Requester: registrations of caller memory in a connection's PD (once per buffer or {@link
     * RegistrationCache} entry and connection): a {@link RegisteredBuffer}'s, or the pages of a
     * cache entry.
     */
    public long registeredBufferRegistrations() {
        return registeredBufferRegistrations;
    }

    /** Requester: their deregistrations (buffer closed, entry dropped, connection gone; each once). */
    public long registeredBufferDeregistrations() {
        return registeredBufferDeregistrations;
    }

    /**
     * Requester: caller memory found in the {@link RegistrationCache}: exposed in place, not
     * registered again.
     */
    public long registrationCacheHits() {
        return registrationCacheHits;
    }

    /**
     * Requester: caller memory the cache registered now (a new entry; copied memory is not
     * counted).
     */
    public long registrationCacheMisses() {
        return registrationCacheMisses;
    }

    /** Requester: cache entries evicted (least recently used, none in use) to keep within its limit. */
    public long registrationCacheEvictions() {
        return registrationCacheEvictions;
    }

    /** Requester: window rkeys we withdrew with our own LOCAL_INV. */
    public long localInvalidations() {
        return localInvalidations;
    }

    /**
     * Requester: window rkeys the peer's Send with Invalidate withdrew (RFC 8797 §7): no LOCAL_INV
     * of ours.
     */
    public long remoteInvalidations() {
        return remoteInvalidations;
    }

    /**
     * Requester: of those, ones that arrived although R was not negotiated (Linux's nfsd clears R
     * yet does it).
     */
    public long remoteInvalidationsUnnegotiated() {
        return remoteInvalidationsUnnegotiated;
    }

    /**
     * Responder: replies sent with Send with Invalidate (the peer set R; the call exposed one
     * rkey).
     */
    public long sendsWithInvalidate() {
        return sendsWithInvalidate;
    }

    /**
     * Both sides: completion-channel events taken (event mode): each is one thread woken by the
     * device.
     */
    public long channelWakeups() {
        return channelWakeups;
    }

    /**
     * Requester: blocking calls whose reply the caller's own thread took off the completion queue
     * (no hand-off).
     */
    public long repliesTakenByCaller() {
        return repliesTakenByCaller;
    }

    /** Requester: blocking calls whose reply another thread delivered (one hand-off to the caller). */
    public long repliesHandedOff() {
        return repliesHandedOff;
    }

    /** Every counter by its accessor's name, in the order above: for logs and tools. */
    public Map<String, Long> asMap() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("callsSent", callsSent);
        m.put("repliesSent", repliesSent);
        m.put("callsReceived", callsReceived);
        m.put("repliesReceived", repliesReceived);
        m.put("unmatchedForwardReplies", unmatchedForwardReplies);
        m.put("unmatchedBackwardReplies", unmatchedBackwardReplies);
        m.put("abandonedCalls", abandonedCalls);
        m.put("callTimeouts", callTimeouts);
        m.put("lateReplies", lateReplies);
        m.put("abandonedWindowResets", abandonedWindowResets);
        m.put("malformedReplies", malformedReplies);
        m.put("repliesRefused", repliesRefused);
        m.put("handlerFailures", handlerFailures);
        m.put("creditWaits", creditWaits);
        m.put("sendContextWaits", sendContextWaits);
        m.put("receiveBufferWaits", receiveBufferWaits);
        m.put("creditsIgnored", creditsIgnored);
        m.put("badHeaders", badHeaders);
        m.put("errVersSent", errVersSent);
        m.put("errChunkSent", errChunkSent);
        m.put("rdmaErrorsReceived", rdmaErrorsReceived);
        m.put("creditViolations", creditViolations);
        m.put("receivesPosted", receivesPosted);
        m.put("receiveBatches", receiveBatches);
        m.put("connectionsLost", connectionsLost);
        m.put("sendsSignalled", sendsSignalled);
        m.put("chunkedCallsReceived", chunkedCallsReceived);
        m.put("chunkListsRefused", chunkListsRefused);
        m.put("rdmaReads", rdmaReads);
        m.put("rdmaWrites", rdmaWrites);
        m.put("rdmaBytesRead", rdmaBytesRead);
        m.put("rdmaBytesWritten", rdmaBytesWritten);
        m.put("replyChunksUsed", replyChunksUsed);
        m.put("repliesThroughReplyChunk", repliesThroughReplyChunk);
        m.put("longCallsSent", longCallsSent);
        m.put("rdmaDepthWaits", rdmaDepthWaits);
        m.put("windowsBound", windowsBound);
        m.put("exposureRegistrations", exposureRegistrations);
        m.put("zeroCopyExposures", zeroCopyExposures);
        m.put("registeredBufferRegistrations", registeredBufferRegistrations);
        m.put("registeredBufferDeregistrations", registeredBufferDeregistrations);
        m.put("registrationCacheHits", registrationCacheHits);
        m.put("registrationCacheMisses", registrationCacheMisses);
        m.put("registrationCacheEvictions", registrationCacheEvictions);
        m.put("localInvalidations", localInvalidations);
        m.put("remoteInvalidations", remoteInvalidations);
        m.put("remoteInvalidationsUnnegotiated", remoteInvalidationsUnnegotiated);
        m.put("sendsWithInvalidate", sendsWithInvalidate);
        m.put("channelWakeups", channelWakeups);
        m.put("repliesTakenByCaller", repliesTakenByCaller);
        m.put("repliesHandedOff", repliesHandedOff);
        return Collections.unmodifiableMap(m);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RpcRdmaStats s && asMap().equals(s.asMap());
    }

    @Override
    public int hashCode() {
        return asMap().hashCode();
    }

    @Override
    public String toString() {
        return asMap().toString();
    }
}
