package org.rpcrdma.transport.rpc;

/**
 * The forward credits of a server's connections when their receives come from one shared
 * receive queue: what each reply grants (RFC 8166 §3.3.1: the grant may change on every
 * reply, must never promise more receives than exist, and is never 0: a Linux client
 * granted 0 is left with one call outstanding).
 *
 * <p>The rule: every connection keeps one receive of its own (its implicit window of 1,
 * RFC 8166 §3.3.3, so up to {@code maxConnections} clients are never refused for want of
 * one); the receives above that, {@code extras}, are shared: each connection is granted
 * 1 + an equal share of them, {@code extras / active}, at most the configured credits,
 * and never more than the others leave. The sum of what every connection may still be
 * acting on (its <em>promise</em>) stays at or under {@code maxConnections + extras}.
 * Every call a client has out either is in flight (a posted receive waits for it) or has
 * arrived (its buffer is held until it is answered), so when every client uses its whole
 * grant at once, no more receives are needed than were set aside. A client flooding calls
 * gets its share and no more; the others keep theirs.
 *
 * <p>A raised grant counts at once. A lowered one counts only once the client can no
 * longer act on the higher one: it may still send under the old grant until it reads the
 * reply that lowered it, at most {@code promise} calls in all (that many can be out), and
 * they arrive before any call sent after it (one RC connection delivers in order). So
 * after {@code promise} more calls arrived, the promise drops to the highest grant sent
 * since.
 *
 * <p>Our own calls on these connections (a server's backward calls, RFC 8167) need a
 * receive each for their replies: they draw on a budget of their own, {@code ownCapacity}
 * for all connections together ({@link #reserveOwn}); a call that finds none waits.
 *
 * <p>Thread-safe (one lock: a few additions per call).
 */
public final class SharedCredits {
    /** One connection's account: what it may be acting on, and a lowering in progress. */
    public static final class Share {
        private int promise = 1;
        /** Calls still to arrive before a lowering takes effect (0: none in progress). */
        private int countdown;
        /** The highest grant sent since the lowering in progress began. */
        private int highestSince;
        /** The grant of the latest reply. */
        private int last = 1;
        /** Receives kept for the replies to our own calls on this connection. */
        private int own;
        private boolean left;
    }

    private final int capacity;
    private final int max;
    private final int maxConnections;
    /** Receives shared above each connection's own one. */
    private final int extras;
    private final int ownCapacity;
    private int active;
    private int promised;
    private int ownReserved;

    /**
     * @param capacity       receives that back forward grants: the shared queue's buffers
     *                       less those kept for our own backward calls' replies and for
     *                       posting in batches; at least {@code maxConnections}
     * @param max            the most credits one connection is granted (the configured credits)
     * @param maxConnections connections served at once
     * @param ownCapacity    receives for the replies to our own calls, all connections together
     */
    public SharedCredits(int capacity, int max, int maxConnections, int ownCapacity) {
        if (max < 1 || maxConnections < 1 || capacity < maxConnections || ownCapacity < 0) {
            throw new IllegalArgumentException("need max >= 1 and capacity >= maxConnections >= 1, got capacity "
                    + capacity + ", max " + max + ", maxConnections " + maxConnections);
        }
        this.capacity = capacity;
        this.max = max;
        this.maxConnections = maxConnections;
        this.extras = capacity - maxConnections;
        this.ownCapacity = ownCapacity;
    }

    /**
     * A new connection with its implicit window of 1; null when {@code maxConnections} are
     * served (the caller refuses the connection rather than let an overrun fail another one).
     */
    public synchronized Share join() {
        if (active == maxConnections) {
            return null;
        }
        active++;
        promised++;
        return new Share();
    }

    /** The connection is gone: its promise is free for the others. Idempotent. */
    public synchronized void leave(Share s) {
        if (s.left) {
            return;
        }
        s.left = true;
        active--;
        promised -= s.promise;
        ownReserved -= s.own;
        s.own = 0;
    }

    /**
     * Keeps {@code n} receives for the replies to our own calls on {@code s} (its calls out,
     * plus the one about to go): false, and nothing changed, if the budget has no room for
     * a raise. Lowering always succeeds.
     */
    public synchronized boolean reserveOwn(Share s, int n) {
        if (s.left) {
            return false;
        }
        int delta = n - s.own;
        if (delta > 0 && ownReserved + delta > ownCapacity) {
            return false;
        }
        ownReserved += delta;
        s.own = n;
        return true;
    }

    /** Receives kept for the replies to our own calls, all connections together. */
    public synchronized int ownReserved() {
        return ownReserved;
    }

    /** The grant for the next reply to {@code s} (≥ 1, ≤ max). */
    public synchronized int grant(Share s) {
        if (s.left) {
            return 1;
        }
        int fairExtra = Math.min(max - 1, extras / active);
        int othersExtra = promised - active - (s.promise - 1);
        int g = 1 + Math.max(0, Math.min(fairExtra, extras - othersExtra));
        s.last = g;
        if (g >= s.promise) {
            promised += g - s.promise;
            s.promise = g;
            s.countdown = 0;
        } else if (s.countdown == 0) {
            s.countdown = s.promise;
            s.highestSince = g;
        } else {
            s.highestSince = Math.max(s.highestSince, g);
        }
        return g;
    }

    /** A call from {@code s} arrived: a lowering in progress may take effect. */
    public synchronized void callArrived(Share s) {
        if (s.left || s.countdown == 0 || --s.countdown > 0) {
            return;
        }
        promised -= s.promise - s.highestSince;
        s.promise = s.highestSince;
        if (s.last < s.promise) {
            // grants sent during the countdown: the client may still act on the highest
            s.countdown = s.promise;
            s.highestSince = s.last;
        }
    }

    /** Receives {@code s} may still need (its promise). */
    public synchronized int promise(Share s) {
        return s.left ? 0 : s.promise;
    }

    /** Receives the connections may need at most now (never more than {@link #capacity()}). */
    public synchronized int promised() {
        return promised;
    }

    public synchronized int active() {
        return active;
    }

    public int capacity() {
        return capacity;
    }
}
