package org.rpcrdma.transport;

import java.util.Collections;
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

    /** Every counter by its accessor's name, in the order of the accessors. */
    private final Map<String, Long> values;

    RpcRdmaStats(Map<String, Long> values) {
        this.values = Collections.unmodifiableMap(values);
    }

    /** Requester: calls sent. */
    public long callsSent() {
        return values.get("callsSent");
    }

    /** Responder: replies sent (inline, or through a Reply chunk). */
    public long repliesSent() {
        return values.get("repliesSent");
    }

    /** Responder: calls received. */
    public long callsReceived() {
        return values.get("callsReceived");
    }

    /** Requester: replies received that matched a call of ours. */
    public long repliesReceived() {
        return values.get("repliesReceived");
    }

    /**
     * Client (requester of forward calls): replies that matched no outstanding forward call
     * (dropped; XIDs are per direction, RFC 8167 §2.4.1).
     */
    public long unmatchedForwardReplies() {
        return values.get("unmatchedForwardReplies");
    }

    /**
     * Server (requester of backward calls): replies that matched no outstanding backward call
     * (dropped).
     */
    public long unmatchedBackwardReplies() {
        return values.get("unmatchedBackwardReplies");
    }

    /** Requester: calls whose caller gave up (cancel, timeout) before the reply. */
    public long abandonedCalls() {
        return values.get("abandonedCalls");
    }

    /**
     * Requester: calls failed by their own deadline ({@link CallTimeoutException}); counted among
     * the {@link #abandonedCalls}.
     */
    public long callTimeouts() {
        return values.get("callTimeouts");
    }

    /** Requester: replies to abandoned calls: matched, their buffer released at once. */
    public long lateReplies() {
        return values.get("lateReplies");
    }

    /**
     * Requester: connections reset because abandoned calls held every credit (the peer stopped
     * answering).
     */
    public long abandonedWindowResets() {
        return values.get("abandonedWindowResets");
    }

    /** Requester: replies that matched a call of ours but could not be used; that call failed. */
    public long malformedReplies() {
        return values.get("malformedReplies");
    }

    /**
     * Responder: handler replies refused (too large, wrong XID): the requester got RDMA_ERROR /
     * ERR_CHUNK.
     */
    public long repliesRefused() {
        return values.get("repliesRefused");
    }

    /** Responder: call handlers that threw before answering (answered SYSTEM_ERR for them). */
    public long handlerFailures() {
        return values.get("handlerFailures");
    }

    /** Requester: calls that waited for a credit (the peer's grant was in use). */
    public long creditWaits() {
        return values.get("creditWaits");
    }

    /** Both sides: sends (calls, replies, errors) that waited for a free send context. */
    public long sendContextWaits() {
        return values.get("sendContextWaits");
    }

    /**
     * Requester: calls held back because no receive could be posted for their reply (the user holds
     * receive buffers).
     */
    public long receiveBufferWaits() {
        return values.get("receiveBufferWaits");
    }

    /**
     * Both sides, as receivers: rdma_credit values ignored because the message tells no direction
     * (RFC 8167 §4.1): an RDMA_DONE, which carries no RPC message. An RDMA_NOMSG tells it by its
     * chunks (a Position-Zero Read chunk: a call, its value a request; else a reply, its value a
     * grant).
     */
    public long creditsIgnored() {
        return values.get("creditsIgnored");
    }

    /** Both sides, as receivers: received messages whose RPC-over-RDMA header could not be decoded. */
    public long badHeaders() {
        return values.get("badHeaders");
    }

    /** Responder: RDMA_ERROR / ERR_VERS sent (a call in a version we do not speak, RFC 8166 §5.1). */
    public long errVersSent() {
        return values.get("errVersSent");
    }

    /** Responder: RDMA_ERROR / ERR_CHUNK sent (chunks we could not use, RFC 8166 §5.3). */
    public long errChunkSent() {
        return values.get("errChunkSent");
    }

    /** Requester: RDMA_ERROR messages received. */
    public long rdmaErrorsReceived() {
        return values.get("rdmaErrorsReceived");
    }

    /** Responder: calls from a peer that exceeded the credits we granted it. */
    public long creditViolations() {
        return values.get("creditViolations");
    }

    /** Both sides: receive buffers posted. */
    public long receivesPosted() {
        return values.get("receivesPosted");
    }

    /** Both sides: batches in which they were posted (one post per batch). */
    public long receiveBatches() {
        return values.get("receiveBatches");
    }

    /**
     * Both sides: connections lost (not closed by the user): link error, disconnect, flushed
     * completion.
     */
    public long connectionsLost() {
        return values.get("connectionsLost");
    }

    /** Both sides: sends posted signalled (one in {@code signalEvery}, and those that must be). */
    public long sendsSignalled() {
        return values.get("sendsSignalled");
    }

    /**
     * Both sides, over verbs: ibv_post_send calls (each a system call on Soft-RoCE), one per
     * chain of work requests posted at once: Sends, RDMA Reads and Writes, window binds and
     * invalidations. A reply with chunks posts its RDMA Writes and its Send as one chain.
     */
    public long sendQueuePosts() {
        return values.get("sendQueuePosts");
    }

    /** Responder: calls received with chunks (read, write or reply) that were served. */
    public long chunkedCallsReceived() {
        return values.get("chunkedCallsReceived");
    }

    /** Responder: calls whose chunk lists broke our limits or could not be used: answered ERR_CHUNK. */
    public long chunkListsRefused() {
        return values.get("chunkListsRefused");
    }

    /** Responder: RDMA Reads posted (one per segment; RFC 8166 §3.4: the responder does them all). */
    public long rdmaReads() {
        return values.get("rdmaReads");
    }

    /** Responder: RDMA Writes posted (one per segment). */
    public long rdmaWrites() {
        return values.get("rdmaWrites");
    }

    /** Responder: Bytes pulled by RDMA Read. */
    public long rdmaBytesRead() {
        return values.get("rdmaBytesRead");
    }

    /** Responder: Bytes pushed by RDMA Write. */
    public long rdmaBytesWritten() {
        return values.get("rdmaBytesWritten");
    }

    /** Responder: replies sent through the requester's Reply chunk (RDMA_NOMSG). */
    public long replyChunksUsed() {
        return values.get("replyChunksUsed");
    }

    /** Requester: replies to our calls that came through the Reply chunk we offered (RDMA_NOMSG). */
    public long repliesThroughReplyChunk() {
        return values.get("repliesThroughReplyChunk");
    }

    /** Requester: calls sent as RDMA_NOMSG through a Position-Zero Read chunk (RFC 8166 §3.5.3). */
    public long longCallsSent() {
        return values.get("longCallsSent");
    }

    /** Responder: RDMA Reads and Writes that waited for room under the negotiated depth. */
    public long rdmaDepthWaits() {
        return values.get("rdmaDepthWaits");
    }

    /** Requester: memory windows bound for a call's chunk (RFC 8166 §4.4: a fresh rkey per RPC). */
    public long windowsBound() {
        return values.get("windowsBound");
    }

    /**
     * Requester: chunk exposures by a registration of their own (no window free, or none on this
     * device).
     */
    public long exposureRegistrations() {
        return values.get("exposureRegistrations");
    }

    /**
     * Requester: chunks exposed in place over the caller's memory (a {@link RegisteredBuffer}, or a
     * registration cache entry,
     * {@link RpcRdmaOptions#registrationCacheBytes()}): a long call, a DDP argument or a receptacle neither copied
     * into nor out of chunk memory.
     */
    public long zeroCopyExposures() {
        return values.get("zeroCopyExposures");
    }

    /**
     * Requester: registrations of caller memory in a connection's PD (once per buffer or
     * registration cache entry and connection): a {@link RegisteredBuffer}'s, or the pages of a
     * cache entry.
     */
    public long registeredBufferRegistrations() {
        return values.get("registeredBufferRegistrations");
    }

    /** Requester: their deregistrations (buffer closed, entry dropped, connection gone; each once). */
    public long registeredBufferDeregistrations() {
        return values.get("registeredBufferDeregistrations");
    }

    /**
     * Requester: caller memory found in the registration cache: exposed in place, not
     * registered again.
     */
    public long registrationCacheHits() {
        return values.get("registrationCacheHits");
    }

    /**
     * Requester: caller memory the cache registered now (a new entry; copied memory is not
     * counted).
     */
    public long registrationCacheMisses() {
        return values.get("registrationCacheMisses");
    }

    /** Requester: cache entries evicted (least recently used, none in use) to keep within its limit. */
    public long registrationCacheEvictions() {
        return values.get("registrationCacheEvictions");
    }

    /** Requester: window rkeys we withdrew with our own LOCAL_INV. */
    public long localInvalidations() {
        return values.get("localInvalidations");
    }

    /**
     * Requester: window rkeys the peer's Send with Invalidate withdrew (RFC 8797 §7): no LOCAL_INV
     * of ours.
     */
    public long remoteInvalidations() {
        return values.get("remoteInvalidations");
    }

    /**
     * Requester: of those, ones that arrived although R was not negotiated (Linux's nfsd clears R
     * yet does it).
     */
    public long remoteInvalidationsUnnegotiated() {
        return values.get("remoteInvalidationsUnnegotiated");
    }

    /**
     * Responder: replies sent with Send with Invalidate (the peer set R; the call exposed one
     * rkey).
     */
    public long sendsWithInvalidate() {
        return values.get("sendsWithInvalidate");
    }

    /**
     * Both sides: completion-channel events taken (event mode): each is one thread woken by the
     * device.
     */
    public long channelWakeups() {
        return values.get("channelWakeups");
    }

    /**
     * Requester: blocking calls ({@code callAndWait}, {@code callAndRead}, a future's {@code get} or
     * {@code join}) whose reply the caller's own thread took off the completion queue (no hand-off).
     */
    public long repliesTakenByCaller() {
        return values.get("repliesTakenByCaller");
    }

    /** Requester: blocking calls whose reply another thread delivered (one hand-off to the caller). */
    public long repliesHandedOff() {
        return values.get("repliesHandedOff");
    }

    /** Every counter by its accessor's name, in the order above: for logs and tools. */
    public Map<String, Long> asMap() {
        return values;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RpcRdmaStats s && values.equals(s.values);
    }

    @Override
    public int hashCode() {
        return values.hashCode();
    }

    @Override
    public String toString() {
        return values.toString();
    }
}
