package org.rpcrdma.transport.link;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Which connection a completion is for, by the {@code qp_num} of its work completion: the
 * dispatch table of a completion queue that several QPs share (≈ what svcrdma gets from
 * {@code ib_cq_pool_get} and a context per QP). Looked up on every completion, lock-free and
 * without allocating; changed when a connection comes or goes, by copying the table under a
 * lock (copy-on-write: a few a second at most).
 *
 * <p>A number whose QP was destroyed is <em>retired</em>, not freed: the QP's last
 * completions may still be in the CQ, and the device may give the number to a new QP; were
 * the new one registered at once, those completions (a shared receive holds no connection's
 * mark in its wr_id) would reach the wrong connection. So a retired number stays taken, its
 * completions dropped, until a poll that began after the QP was destroyed found the CQ empty
 * ({@link #drained}); only then may the number be registered again.
 *
 * @param <T> the connection's side of dispatch
 */
final class CompletionTargets<T> {
    /** A destroyed QP's number: dropped until the CQ was seen empty by a poll begun after {@link #after}. */
    private static final class Retired {
        /** The poll count when its QP was destroyed; MAX until then (never cleared). */
        volatile long after = Long.MAX_VALUE;
    }

    /** Open addressing, linear probing; {@code values[i] == null}: empty. Never changed once published. */
    private record Table(int[] keys, Object[] values, int live, int retired) {
        static Table of(int[] keys, Object[] values) {
            int live = 0;
            int retired = 0;
            for (Object v : values) {
                if (v instanceof Retired) {
                    retired++;
                } else if (v != null) {
                    live++;
                }
            }
            return new Table(keys, values, live, retired);
        }

        int indexOf(int key) {
            int mask = keys.length - 1;
            for (int i = mix(key) & mask;; i = (i + 1) & mask) {
                if (values[i] == null) {
                    return -1;
                }
                if (keys[i] == key) {
                    return i;
                }
            }
        }
    }

    private volatile Table table = new Table(new int[4], new Object[4], 0, 0);

    private static int mix(int k) {
        int h = k * 0x9E3779B9;
        return h ^ (h >>> 16);
    }

    /** The target of completions with this qp_num; null for a number unknown or retired. */
    @SuppressWarnings("unchecked")
    T get(int qpNum) {
        Table t = table;
        int i = t.indexOf(qpNum);
        if (i < 0) {
            return null;
        }
        Object v = t.values()[i];
        return v instanceof Retired ? null : (T) v;
    }

    /** Connections registered now (not retired numbers). */
    int live() {
        return table.live();
    }

    /** Retired numbers not yet drained. */
    int retired() {
        return table.retired();
    }

    /**
     * Registers {@code target} for {@code qpNum}.
     *
     * @return false if the number is retired and not yet drained (try again after a poll)
     * @throws IllegalStateException if a live QP has the number already
     */
    synchronized boolean register(int qpNum, T target) {
        Table t = table;
        int i = t.indexOf(qpNum);
        if (i >= 0) {
            if (t.values()[i] instanceof Retired) {
                return false;
            }
            throw new IllegalStateException("qp_num " + qpNum + " is registered already");
        }
        put(qpNum, target);
        return true;
    }

    /**
     * Its QP is going: completions with {@code qpNum} are dropped from now on, and the number
     * stays taken until {@link #destroyed} and a drained poll after it. No-op unless
     * {@code target} is the one registered.
     */
    synchronized void unregister(int qpNum, T target) {
        Table t = table;
        int i = t.indexOf(qpNum);
        if (i >= 0 && t.values()[i] == target) {
            Object[] values = t.values().clone();
            values[i] = new Retired();
            table = Table.of(t.keys(), values);
        }
    }

    /** The QP with {@code qpNum} was destroyed when {@code polls} polls had begun: it completes nothing more. */
    void destroyed(int qpNum, long polls) {
        Table t = table;
        int i = t.indexOf(qpNum);
        if (i >= 0 && t.values()[i] instanceof Retired r) {
            r.after = polls;
        }
    }

    /**
     * A poll that was the {@code poll}-th to begin found the CQ empty: every number retired
     * before it began has no completion left in the CQ and is free again. Cheap when none is
     * retired (the polling thread calls it on every empty poll).
     */
    void drained(long poll) {
        Table t = table;
        if (t.retired() == 0) {
            return;
        }
        synchronized (this) {
            t = table;
            boolean any = false;
            for (Object v : t.values()) {
                any |= v instanceof Retired r && r.after < poll;
            }
            if (!any) {
                return;
            }
            int[] keys = new int[t.keys().length];
            Object[] values = new Object[keys.length];
            for (int i = 0; i < keys.length; i++) {
                Object v = t.values()[i];
                if (v != null && !(v instanceof Retired r && r.after < poll)) {
                    insert(keys, values, t.keys()[i], v);
                }
            }
            table = Table.of(keys, values);
        }
    }

    /** Every live target (the shared CQ failed: all its connections are lost). */
    @SuppressWarnings("unchecked")
    void forEach(Consumer<T> action) {
        List<T> all = new ArrayList<>();
        for (Object v : table.values()) {
            if (v != null && !(v instanceof Retired)) {
                all.add((T) v);
            }
        }
        all.forEach(action);
    }

    /** Caller holds the lock and knows qpNum is absent. */
    private void put(int qpNum, Object v) {
        Table t = table;
        int used = t.live() + t.retired() + 1;
        int cap = t.keys().length;
        while (used * 2 > cap) {
            cap *= 2;
        }
        int[] keys = new int[cap];
        Object[] values = new Object[cap];
        for (int i = 0; i < t.keys().length; i++) {
            if (t.values()[i] != null) {
                insert(keys, values, t.keys()[i], t.values()[i]);
            }
        }
        insert(keys, values, qpNum, v);
        table = Table.of(keys, values);
    }

    private static void insert(int[] keys, Object[] values, int key, Object v) {
        int mask = keys.length - 1;
        int i = mix(key) & mask;
        while (values[i] != null) {
            i = (i + 1) & mask;
        }
        keys[i] = key;
        values[i] = v;
    }
}
