package org.rpcrdma.transport.verbs;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts the verbs objects of this package that are open right now, per type, so tests
 * (and a transport's shutdown check) can assert that nothing leaked.
 */
public final class LiveResources {
    private static final Map<String, AtomicInteger> COUNTS = new ConcurrentHashMap<>();

    private LiveResources() {
    }

    static void opened(String type) {
        COUNTS.computeIfAbsent(type, k -> new AtomicInteger()).incrementAndGet();
    }

    static void closed(String type) {
        COUNTS.computeIfAbsent(type, k -> new AtomicInteger()).decrementAndGet();
    }

    /** Open objects of one type (its simple class name, e.g. {@code "QueuePair"}). */
    public static int count(String type) {
        AtomicInteger c = COUNTS.get(type);
        return c == null ? 0 : c.get();
    }

    /** Open objects of all types together. */
    public static int total() {
        int n = 0;
        for (AtomicInteger c : COUNTS.values()) {
            n += c.get();
        }
        return n;
    }

    /** The non-zero counts by type, for failure messages. */
    public static Map<String, Integer> snapshot() {
        Map<String, Integer> m = new TreeMap<>();
        COUNTS.forEach((k, v) -> {
            if (v.get() != 0) {
                m.put(k, v.get());
            }
        });
        return m;
    }
}
