package org.rpcrdma.transport;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Transport counters, one set per endpoint, in the spirit of Linux {@code struct
 * rpcrdma_stats}: every error branch and every drop has a counter so a misbehaving peer
 * shows up in numbers, not only in logs. Thread-safe; reading is a racy snapshot. Each
 * is an {@link OwnedCounter}: the thread that counts most (the first to count) does so
 * without an atomic operation.
 */
public final class RpcRdmaStats {
    public final LongAdder callsSent = new OwnedCounter();
    public final LongAdder repliesSent = new OwnedCounter();
    public final LongAdder callsReceived = new OwnedCounter();
    public final LongAdder repliesReceived = new OwnedCounter();
    /** Replies that matched no outstanding forward call (dropped; XIDs are per direction, RFC 8167 §2.4.1). */
    public final LongAdder unmatchedForwardReplies = new OwnedCounter();
    /** Replies that matched no outstanding backward call. */
    public final LongAdder unmatchedBackwardReplies = new OwnedCounter();
    /** Calls whose caller gave up (cancel, timeout) before the reply. */
    public final LongAdder abandonedCalls = new OwnedCounter();
    /** Calls failed by their own deadline (CallTimeoutException); counted among the abandoned. */
    public final LongAdder callTimeouts = new OwnedCounter();
    /** Replies to abandoned calls: matched, their buffer released at once. */
    public final LongAdder lateReplies = new OwnedCounter();
    /** Connections reset because abandoned calls held every credit (the peer stopped answering). */
    public final LongAdder abandonedWindowResets = new OwnedCounter();
    /** Replies that matched a call of ours but could not be used; that call failed. */
    public final LongAdder malformedReplies = new OwnedCounter();
    /** Handler replies refused (too large, wrong XID): the requester got RDMA_ERROR / ERR_CHUNK. */
    public final LongAdder repliesRefused = new OwnedCounter();
    /** Call handlers that threw before answering (answered SYSTEM_ERR for them). */
    public final LongAdder handlerFailures = new OwnedCounter();
    public final LongAdder creditWaits = new OwnedCounter();
    public final LongAdder sendContextWaits = new OwnedCounter();
    /** Calls held back because no receive could be posted for their reply (user holds buffers). */
    public final LongAdder receiveBufferWaits = new OwnedCounter();
    /**
     * rdma_credit values ignored because the message tells no direction (RFC 8167 §4.1): an
     * RDMA_DONE, which carries no RPC message. An RDMA_NOMSG tells it by its chunks (a
     * Position-Zero Read chunk: a call, its value a request; else a reply, its value a grant).
     */
    public final LongAdder creditsIgnored = new OwnedCounter();
    public final LongAdder badHeaders = new OwnedCounter();
    public final LongAdder errVersSent = new OwnedCounter();
    public final LongAdder errChunkSent = new OwnedCounter();
    public final LongAdder rdmaErrorsReceived = new OwnedCounter();
    /** Calls from a peer that exceeded the credits we granted it. */
    public final LongAdder creditViolations = new OwnedCounter();
    public final LongAdder receivesPosted = new OwnedCounter();
    public final LongAdder receiveBatches = new OwnedCounter();
    public final LongAdder connectionsLost = new OwnedCounter();
    public final LongAdder sendsSignalled = new OwnedCounter();
    /** Calls received with chunks (read, write or reply) that were served. */
    public final LongAdder chunkedCallsReceived = new OwnedCounter();
    /** Calls whose chunk lists broke our limits or could not be used: answered ERR_CHUNK. */
    public final LongAdder chunkListsRefused = new OwnedCounter();
    /** RDMA Reads and Writes posted (one per segment). */
    public final LongAdder rdmaReads = new OwnedCounter();
    public final LongAdder rdmaWrites = new OwnedCounter();
    public final LongAdder rdmaBytesRead = new OwnedCounter();
    public final LongAdder rdmaBytesWritten = new OwnedCounter();
    /** Replies sent through the requester's Reply chunk (RDMA_NOMSG). */
    public final LongAdder replyChunksUsed = new OwnedCounter();
    /** Replies to our calls that came through the Reply chunk we offered (RDMA_NOMSG). */
    public final LongAdder repliesThroughReplyChunk = new OwnedCounter();
    /** Calls of ours sent as RDMA_NOMSG through a Position-Zero Read chunk. */
    public final LongAdder longCallsSent = new OwnedCounter();
    /** RDMA operations that waited for room under the negotiated depth. */
    public final LongAdder rdmaDepthWaits = new OwnedCounter();
    /** Memory windows bound for an RPC's chunk (RFC 8166 §4.4: a fresh rkey per RPC). */
    public final LongAdder windowsBound = new OwnedCounter();
    /** Exposures by a registration of their own (no window free, or none on this device). */
    public final LongAdder exposureRegistrations = new OwnedCounter();
    /**
     * Chunks exposed in place over the caller's memory (a {@link RegisteredBuffer}, or a
     * {@link RegistrationCache} entry): a long call, a DDP argument or a receptacle neither
     * copied into nor out of chunk memory.
     */
    public final LongAdder zeroCopyExposures = new OwnedCounter();
    /**
     * Registrations of caller memory in a connection's PD (once per buffer or
     * {@link RegistrationCache} entry and connection): a {@link RegisteredBuffer}'s, or the
     * pages of a cache entry.
     */
    public final LongAdder registeredBufferRegistrations = new OwnedCounter();
    /** Their deregistrations (ibv_dereg_mr: buffer closed, entry dropped, connection gone; each once). */
    public final LongAdder registeredBufferDeregistrations = new OwnedCounter();
    /** Caller memory found in the {@link RegistrationCache}: exposed in place, not registered again. */
    public final LongAdder registrationCacheHits = new OwnedCounter();
    /** Caller memory the cache registered now (a new entry; copied memory is not counted). */
    public final LongAdder registrationCacheMisses = new OwnedCounter();
    /** Cache entries evicted (least recently used, none in use) to keep within its limit. */
    public final LongAdder registrationCacheEvictions = new OwnedCounter();
    /** Window rkeys we withdrew with our own LOCAL_INV. */
    public final LongAdder localInvalidations = new OwnedCounter();
    /** Window rkeys the peer's Send with Invalidate withdrew (RFC 8797 §7): no LOCAL_INV of ours. */
    public final LongAdder remoteInvalidations = new OwnedCounter();
    /** Of those, ones that arrived although R was not negotiated (Linux's nfsd clears R yet does it). */
    public final LongAdder remoteInvalidationsUnnegotiated = new OwnedCounter();
    /** Replies we sent with Send with Invalidate (the peer set R; the call exposed one rkey). */
    public final LongAdder sendsWithInvalidate = new OwnedCounter();
    /** Completion-channel events taken (event mode): each is one thread woken by the device. */
    public final LongAdder channelWakeups = new OwnedCounter();
    /** Blocking calls whose reply the caller's own thread took off the completion queue (no hand-off). */
    public final LongAdder repliesTakenByCaller = new OwnedCounter();
    /** Blocking calls whose reply another thread delivered (one hand-off to the caller). */
    public final LongAdder repliesHandedOff = new OwnedCounter();

    /** Name → value snapshot, for logs and tools. */
    public Map<String, Long> snapshot() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (var f : RpcRdmaStats.class.getFields()) {
            try {
                m.put(f.getName(), ((LongAdder) f.get(this)).sum());
            } catch (IllegalAccessException e) {
                throw new AssertionError(e);
            }
        }
        return m;
    }

    @Override
    public String toString() {
        return snapshot().toString();
    }
}
