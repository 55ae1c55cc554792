package org.rpcrdma.transport.core;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Transport counters, one set per endpoint, in the spirit of Linux {@code struct
 * rpcrdma_stats}: every error branch and every drop has a counter so a misbehaving peer
 * shows up in numbers, not only in logs. Thread-safe; reading is a racy snapshot.
 */
public final class RpcRdmaStats {
    public final LongAdder callsSent = new LongAdder();
    public final LongAdder repliesSent = new LongAdder();
    public final LongAdder callsReceived = new LongAdder();
    public final LongAdder repliesReceived = new LongAdder();
    /** Replies that matched no outstanding forward call (dropped, RFC 8167 §4.2). */
    public final LongAdder unmatchedForwardReplies = new LongAdder();
    /** Replies that matched no outstanding backward call. */
    public final LongAdder unmatchedBackwardReplies = new LongAdder();
    public final LongAdder creditWaits = new LongAdder();
    public final LongAdder sendContextWaits = new LongAdder();
    /** Calls held back because no receive could be posted for their reply (user holds buffers). */
    public final LongAdder receiveBufferWaits = new LongAdder();
    /** rdma_credit values ignored because the direction could not be told (RFC 8167 §4.1). */
    public final LongAdder creditsIgnored = new LongAdder();
    public final LongAdder badHeaders = new LongAdder();
    public final LongAdder errVersSent = new LongAdder();
    public final LongAdder errChunkSent = new LongAdder();
    public final LongAdder rdmaErrorsReceived = new LongAdder();
    /** Calls from a peer that exceeded the credits we granted it. */
    public final LongAdder creditViolations = new LongAdder();
    public final LongAdder receivesPosted = new LongAdder();
    public final LongAdder receiveBatches = new LongAdder();
    public final LongAdder connectionsLost = new LongAdder();
    public final LongAdder sendsSignalled = new LongAdder();

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
