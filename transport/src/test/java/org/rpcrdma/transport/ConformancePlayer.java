package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.concurrent.locks.LockSupport;
import org.rpcrdma.transport.ConformanceTable.Divergence;
import org.rpcrdma.transport.ConformanceTable.Rule;
import org.rpcrdma.transport.ConformanceTable.Side;

/**
 * Plays {@link ConformanceTable} over one link: each rule's case as raw bytes from a
 * {@link RawPeer} against our responder or requester, the observed outcome against the one
 * the text requires, and, after every case, the resources of our endpoint (credits, XID
 * slots, receive buffers, exposures, chunk memory) against their values before it. A
 * divergence fails the run unless {@link ConformanceTable#DIVERGENCES} lists it for this
 * link; a listed one that conforms fails too (the list is kept true). Prints a summary.
 */
final class ConformancePlayer {
    enum LinkKind { MEMORY, VERBS }

    /** One connection between our endpoint and a raw peer, and how to look at its resources. */
    record Session(Connection dut, RawPeer raw, IntSupplier exposures, LongSupplier chunkBytes, AutoCloseable closer) {
        boolean open() {
            return dut.isOpen() && raw.conn.isOpen();
        }
    }

    /** What must be back to its value after every case. */
    record Resources(int window, int outstanding, int waiting, int peerOutstanding, int receivesMissing, int held,
            int exposures, long chunkBytes) {
        /**
         * Receives are reposted in batches, so how many are posted varies; what must hold is
         * that none is missing for the credits granted and calls outstanding.
         */
        static Resources of(Session s) {
            Connection c = s.dut();
            return new Resources(c.ownCallWindow(), c.outstandingCalls(), c.waitingCalls(), c.peerOutstandingCalls(),
                    Math.max(0, c.engine().requiredReceives() - c.postedReceives()), c.heldReceives(), s.exposures().getAsInt(),
                    s.chunkBytes().getAsLong());
        }

        /**
         * A session at rest: the credit window it has now, and nothing outstanding, held,
         * missing or exposed (taken this way, not by a snapshot, as the last message of the
         * set-up may still hold its receive buffer on a real link).
         */
        static Resources atRest(Session s) {
            return new Resources(s.dut().ownCallWindow(), 0, 0, 0, 0, 0, 0, 0);
        }
    }

    private final LinkKind link;
    /** Opens a session whose endpoint under test serves with {@code handler}. */
    @FunctionalInterface
    interface Opener {
        Session open(CallHandler handler) throws Exception;
    }

    private final Opener openServerSide;
    private final Opener openClientSide;
    /** Longest wait for something that must happen (a reply, a completion). */
    final long waitMs;
    private final ConformanceTable.Handler serverHandler = new ConformanceTable.Handler();
    private final ConformanceTable.Handler clientHandler = new ConformanceTable.Handler();
    private Session server;
    private Session client;
    private Resources serverInitial;
    private Resources clientInitial;
    private boolean backwardReady;
    /** Credits the raw server grants in its replies (restored after every case). */
    static final int GRANT = 4;
    /** Credits the raw client's backward replies grant our server. */
    static final int BACKWARD_GRANT = 2;

    /**
     * @param openServerSide a session whose dut is our server (forward responder, backward
     *                       requester) serving with the given handler; the raw peer is a client
     * @param openClientSide a session whose dut is our client (forward requester, backward
     *                       responder serving with the handler); the raw peer is a server
     */
    ConformancePlayer(LinkKind link, Opener openServerSide, Opener openClientSide, long waitMs) {
        this.link = link;
        this.openServerSide = openServerSide;
        this.openClientSide = openClientSide;
        this.waitMs = waitMs;
    }

    LinkKind link() {
        return link;
    }

    /** Plays every rule; prints the summary; fails on an unlisted divergence or a listed conformance. */
    void run() throws Exception {
        List<String> failures = new ArrayList<>();
        int passed = 0;
        int listed = 0;
        int played = 0;
        try {
            for (Rule r : ConformanceTable.RULES) {
                long t0 = System.nanoTime();
                String observed = play(r);
                long ms = (System.nanoTime() - t0) / 1_000_000;
                played++;
                boolean ok = ConformanceTable.matches(r.required(), observed);
                Divergence d = ConformanceTable.divergence(r.id(), link);
                if (Boolean.getBoolean("conformance.verbose")) {
                    System.out.printf("  %-4s %-40s %6d ms  %s%n", ok ? "ok" : "DIFF", r.id(), ms, observed);
                }
                if (ok && d == null) {
                    passed++;
                } else if (!ok && d != null) {
                    listed++;
                    System.out.printf("  listed divergence %-34s %s: observed \"%s\" (%s)%n", r.id(), r.ref(), observed,
                            d.reason());
                } else if (ok) {
                    failures.add(r.id() + " (" + r.ref() + ") is listed as a divergence (" + d.reason()
                            + ") but now conforms: take it off the list");
                } else {
                    failures.add(r.id() + " (" + r.ref() + ": " + r.rule() + ")\n      required: " + r.required()
                            + "\n      observed: " + observed);
                }
            }
        } finally {
            closeQuietly(server);
            closeQuietly(client);
        }
        System.out.printf("RPC-over-RDMA conformance (%s link): %d rules, %d passed, %d listed divergences, %d unlisted%n",
                link, played, passed, listed, failures.size());
        if (!failures.isEmpty()) {
            fail(failures.size() + " rule(s) diverge without being listed (or are listed and conform):\n  - "
                    + String.join("\n  - ", failures));
        }
    }

    private String play(Rule r) throws Exception {
        if (r.side() == Side.NONE) {
            return r.play().play(new ConformanceTable.Ctx(this, null, null, false));
        }
        boolean onServer = r.side() == Side.SERVER;
        Session s = session(onServer);
        ConformanceTable.Handler h = onServer ? serverHandler : clientHandler;
        ConformanceTable.Ctx x = new ConformanceTable.Ctx(this, s, h, onServer);
        String observed;
        try {
            observed = r.play().play(x);
        } catch (Exception | AssertionError e) {
            observed = "case threw " + e;
        } finally {
            h.releaseHeld();
            s.raw().withdrawAll();
        }
        if (!s.open()) {
            String leak = afterLoss(s);
            replace(onServer);
            return leak == null ? observed : observed + " [" + leak + "]";
        }
        String leak = settle(x, s, onServer ? serverInitial : clientInitial);
        return leak == null ? observed : observed + " [" + leak + "]";
    }

    /** After a case on a live connection: probes both ways, then waits for the resources to be back. */
    private String settle(ConformanceTable.Ctx x, Session s, Resources initial) throws Exception {
        String p = x.probe();
        if (p != null) {
            return "after the case: " + p;
        }
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        Resources now = Resources.of(s);
        while (!now.equals(initial) && System.nanoTime() - end < 0) {
            LockSupport.parkNanos(1_000_000);
            now = Resources.of(s);
        }
        s.raw().drain();
        return now.equals(initial) ? null : "resources " + now + " != initial " + initial;
    }

    /**
     * A case ended the connection: every call of ours failed, no receive buffer is held,
     * nothing stays exposed and no chunk memory is in use (the loss released them all).
     */
    private String afterLoss(Session s) {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        String left;
        while ((left = leftAfterLoss(s)) != null && System.nanoTime() - end < 0) {
            LockSupport.parkNanos(1_000_000);
        }
        return left == null ? null : "after the loss " + left;
    }

    private static String leftAfterLoss(Session s) {
        Connection c = s.dut();
        if (c.outstandingCalls() + c.waitingCalls() + c.heldReceives() == 0 && s.exposures().getAsInt() == 0
                && s.chunkBytes().getAsLong() == 0) {
            return null;
        }
        return "outstanding " + c.outstandingCalls() + ", waiting " + c.waitingCalls() + ", held receives "
                + c.heldReceives() + ", exposures " + s.exposures().getAsInt() + ", chunk bytes "
                + s.chunkBytes().getAsLong();
    }

    private Session session(boolean onServer) throws Exception {
        Session s = onServer ? server : client;
        if (s == null) {
            s = replace(onServer);
        }
        return s;
    }

    private Session replace(boolean onServer) throws Exception {
        closeQuietly(onServer ? server : client);
        Session s = onServer ? openServerSide.open(serverHandler) : openClientSide.open(clientHandler);
        ConformanceTable.Ctx x = new ConformanceTable.Ctx(this, s, onServer ? serverHandler : clientHandler, onServer);
        if (onServer) {
            server = s;
            backwardReady = false;
        } else {
            client = s;
        }
        String p = x.probe();
        if (p != null) {
            throw new AssertionError("a fresh session does not work: " + p);
        }
        Resources r = Resources.atRest(s);
        if (onServer) {
            serverInitial = r;
        } else {
            clientInitial = r;
        }
        return s;
    }

    boolean backwardReady() {
        return backwardReady;
    }

    /**
     * Our server may send backward calls from now on (the client announced it, RFC 8167
     * §6): its backward window now comes from the raw client's grants, so the resources
     * to come back to are taken again once a backward call went through.
     */
    void markBackwardReady(ConformanceTable.Ctx x) throws InterruptedException {
        x.dut().markBackchannelReady();
        backwardReady = true;
        String p = x.probe();
        if (p != null) {
            throw new AssertionError("the first backward call failed: " + p);
        }
        serverInitial = Resources.atRest(server);
    }

    private static void closeQuietly(Session s) {
        if (s == null) {
            return;
        }
        try {
            s.closer().close();
        } catch (Exception e) {
            // the next session is independent
        }
    }

    /** How a call of ours ended within {@code ms}. */
    static String outcome(CompletableFuture<ReceivedMessage> f, long ms) {
        try {
            ReceivedMessage m = f.get(ms, TimeUnit.MILLISECONDS);
            try {
                byte[] all = m.toByteArray();
                byte[] results = Arrays.copyOfRange(all, Math.min(all.length, 24), all.length);
                if (Arrays.equals(results, ConformanceTable.PROPER)) {
                    return "dropped";
                }
                return "delivered " + results.length + "B" + (m.placedBytes() >= 0 ? " placed " + m.placedBytes() : "");
            } finally {
                m.release();
            }
        } catch (ExecutionException e) {
            if (e.getCause() instanceof ConnectionLostException) {
                return "connection closed";
            }
            return "fails " + e.getCause().getClass().getSimpleName();
        } catch (TimeoutException e) {
            return "pending";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        } catch (java.util.concurrent.CancellationException e) {
            return "cancelled";
        }
    }

    static String hex(int v) {
        return "0x" + Integer.toHexString(v);
    }
}
