package org.rpcrdma.bench.verbs;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many times each XID was executed by a handler, so that a run can prove that every
 * call it sent was executed exactly once: none lost, none run twice (a retransmission or a
 * receive buffer handed out twice would show as a count of 2), none that nobody sent.
 * Callers number the calls of one stretch {@code base, base + 1, ...}; {@link #check} then
 * compares the executions with that range.
 *
 * <p>A handler that names the connection each call came on ({@link #executed(int, Object)})
 * lets a call resent after a reconnect run once on each connection it reached: without a
 * duplicate request cache the new connection's server executes it again (RFC 8166 §3.3.1
 * leaves retransmission to the upper layer), which is not the transport running it twice.
 */
final class XidLedger {
    private final Map<Integer, AtomicInteger> counts = new ConcurrentHashMap<>();
    private final Map<Integer, Set<Object>> on = new ConcurrentHashMap<>();

    /** The handler ran the call with this XID once more. */
    void executed(int xid) {
        counts.computeIfAbsent(xid, k -> new AtomicInteger()).incrementAndGet();
    }

    /** The handler ran the call with this XID once more, on {@code connection} (compared by identity). */
    void executed(int xid, Object connection) {
        on.computeIfAbsent(xid, k -> Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>())))
                .add(connection);
        executed(xid);
    }

    /** Executions of the calls sent in [base, base + sent), and of any XID outside it. */
    Check check(int base, int sent) {
        long executions = 0;
        int inRange = 0;
        int duplicated = 0;
        int retried = 0;
        int stray = 0;
        for (Map.Entry<Integer, AtomicInteger> e : counts.entrySet()) {
            int x = e.getKey();
            int n = e.getValue().get();
            if (Integer.compareUnsigned(x - base, sent) < 0) {
                inRange++;
                executions += n;
                Set<Object> connections = on.get(x);
                int allowed = connections == null ? 1 : connections.size();
                if (n > allowed) {
                    duplicated++;
                } else if (n > 1) {
                    retried++;
                }
            } else {
                stray++;
            }
        }
        return new Check(sent, executions, sent - inRange, duplicated, stray, retried);
    }

    /** Forgets everything (the next stretch starts from no executions). */
    void clear() {
        counts.clear();
        on.clear();
    }

    /**
     * @param lost XIDs in the range never executed
     * @param duplicated XIDs in the range executed more than once on one connection
     * @param stray XIDs executed that are outside the range
     * @param retried XIDs in the range executed once on each of several connections (resent after a reconnect)
     */
    record Check(int sent, long executions, int lost, int duplicated, int stray, int retried) {
        Check(int sent, long executions, int lost, int duplicated, int stray) {
            this(sent, executions, lost, duplicated, stray, 0);
        }

        boolean exactlyOnce() {
            return lost == 0 && duplicated == 0 && stray == 0 && (retried > 0 || executions == sent);
        }
    }
}
