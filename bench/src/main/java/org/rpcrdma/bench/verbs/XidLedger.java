package org.rpcrdma.bench.verbs;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many times each XID was executed by a handler, so that a run can prove that every
 * call it sent was executed exactly once: none lost, none run twice (a retransmission or a
 * receive buffer handed out twice would show as a count of 2), none that nobody sent.
 * Callers number the calls of one stretch {@code base, base + 1, ...}; {@link #check} then
 * compares the executions with that range.
 */
final class XidLedger {
    private final Map<Integer, AtomicInteger> counts = new ConcurrentHashMap<>();

    /** The handler ran the call with this XID once more. */
    void executed(int xid) {
        counts.computeIfAbsent(xid, k -> new AtomicInteger()).incrementAndGet();
    }

    /** Executions of the calls sent in [base, base + sent), and of any XID outside it. */
    Check check(int base, int sent) {
        long executions = 0;
        int inRange = 0;
        int duplicated = 0;
        int stray = 0;
        for (Map.Entry<Integer, AtomicInteger> e : counts.entrySet()) {
            int x = e.getKey();
            int n = e.getValue().get();
            if (Integer.compareUnsigned(x - base, sent) < 0) {
                inRange++;
                executions += n;
                if (n > 1) {
                    duplicated++;
                }
            } else {
                stray++;
            }
        }
        return new Check(sent, executions, sent - inRange, duplicated, stray);
    }

    /** Forgets everything (the next stretch starts from no executions). */
    void clear() {
        counts.clear();
    }

    /**
     * @param lost XIDs in the range never executed
     * @param duplicated XIDs in the range executed more than once
     * @param stray XIDs executed that are outside the range
     */
    record Check(int sent, long executions, int lost, int duplicated, int stray) {
        boolean exactlyOnce() {
            return lost == 0 && duplicated == 0 && stray == 0 && executions == sent;
        }
    }
}
