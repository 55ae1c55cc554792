package org.rpcrdma.transport.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SharedCreditsTest {
    @Test
    void equalSharesNeverZeroNeverAboveMax() {
        SharedCredits c = new SharedCredits(13, 8, 3, 0);
        SharedCredits.Share a = c.join();
        assertEquals(8, c.grant(a), "alone: the configured credits");
        SharedCredits.Share b = c.join();
        assertEquals(4, c.grant(b), "1 + what a leaves of the 10 shared (its share would be 5)");
        SharedCredits.Share d = c.join();
        assertEquals(1, c.grant(d), "nothing shared is left: its own 1, never 0");
        assertTrue(c.promised() <= c.capacity());
        c.leave(a);
        c.leave(a); // idempotent
        assertEquals(2, c.active());
        assertEquals(6, c.grant(d), "a's receives are free: 1 + 10 / 2");
        assertEquals(6, c.grant(b));
        assertEquals(12, c.promised());
    }

    @Test
    void refusesTheConnectionNoReceiveCanBack() {
        SharedCredits c = new SharedCredits(6, 4, 2, 0);
        assertEquals(4, c.grant(c.join()));
        SharedCredits.Share b = c.join();
        assertNotNull(b, "its own receive was kept for it, whatever the first was granted");
        assertNull(c.join(), "a third client would have no receive of its own");
        c.leave(b);
        assertNotNull(c.join());
    }

    @Test
    void aLoweredGrantCountsOnlyOnceTheOldOneCannotBeUsed() {
        SharedCredits c = new SharedCredits(9, 8, 2, 0);
        SharedCredits.Share a = c.join();
        assertEquals(8, c.grant(a));
        SharedCredits.Share b = c.join();
        assertEquals(1, c.grant(b), "a still may send 8");
        assertEquals(4, c.grant(a), "a's share: 1 + 7 / 2");
        assertEquals(8, c.promise(a), "until 8 more calls of a's arrived it may be acting on 8");
        assertEquals(1, c.grant(b));
        for (int i = 0; i < 7; i++) {
            c.callArrived(a);
        }
        assertEquals(8, c.promise(a));
        c.callArrived(a);
        assertEquals(4, c.promise(a));
        assertEquals(4, c.grant(b), "now b gets its share");
        assertEquals(8, c.promised());
    }

    @Test
    void ownCallsDrawOnABudgetOfTheirOwn() {
        SharedCredits c = new SharedCredits(4, 4, 2, 3);
        SharedCredits.Share a = c.join();
        SharedCredits.Share b = c.join();
        assertTrue(c.reserveOwn(a, 2));
        assertTrue(c.reserveOwn(b, 1));
        assertFalse(c.reserveOwn(b, 2), "the budget of 3 is used up: the call waits");
        assertEquals(3, c.ownReserved());
        assertTrue(c.reserveOwn(a, 1), "a reply came: lowering always succeeds");
        assertTrue(c.reserveOwn(b, 2));
        c.leave(a);
        assertEquals(2, c.ownReserved());
        assertFalse(c.reserveOwn(a, 1), "a connection gone reserves nothing");
        assertEquals(3, c.grant(b), "forward grants do not draw on it: 1 + the 2 shared");
    }

    /**
     * Clients that use their whole window at every moment, a server that answers in any
     * order, grants that change with every reply as clients come and go: the receives the
     * calls need (in flight to the server, or arrived and not yet answered) never exceed
     * the capacity, and every client is granted at least 1.
     */
    @Test
    void greedyClientsNeverNeedMoreReceivesThanThereAre() {
        for (long seed = 1; seed <= 50; seed++) {
            simulate(new Random(seed), 24, 8, 12);
            simulate(new Random(seed), 40, 16, 12);
        }
    }

    private static final class Client {
        SharedCredits.Share share;
        int window = 1;
        int outstanding; // sent, reply not yet read
        final ArrayDeque<Integer> toServer = new ArrayDeque<>(); // calls in flight (a token each)
        final List<Integer> arrived = new ArrayList<>(); // at the server, unanswered
        final ArrayDeque<Integer> toClient = new ArrayDeque<>(); // replies in flight: their grants
        boolean gone;
    }

    private static void simulate(Random rnd, int capacity, int max, int clients) {
        SharedCredits c = new SharedCredits(capacity, max, clients, 0);
        List<Client> all = new ArrayList<>();
        for (int step = 0; step < 20_000; step++) {
            int what = rnd.nextInt(100);
            if (what < 2 && all.stream().filter(x -> !x.gone).count() < clients) {
                Client n = new Client();
                n.share = c.join();
                assertNotNull(n.share, "refused below maxConnections");
                all.add(n);
                continue;
            }
            if (all.isEmpty()) {
                continue;
            }
            Client k = all.get(rnd.nextInt(all.size()));
            if (k.gone) {
                continue;
            }
            if (what < 3) { // the connection is lost: everything of it is gone
                k.gone = true;
                c.leave(k.share);
            } else if (what < 40) { // greedy: the whole window
                while (k.outstanding < k.window) {
                    k.outstanding++;
                    k.toServer.add(1);
                }
            } else if (what < 60 && !k.toServer.isEmpty()) {
                k.toServer.poll();
                k.arrived.add(1);
                c.callArrived(k.share);
            } else if (what < 80 && !k.arrived.isEmpty()) {
                k.arrived.remove(rnd.nextInt(k.arrived.size()));
                int g = c.grant(k.share);
                assertTrue(g >= 1 && g <= max, "grant " + g);
                k.toClient.add(g);
            } else if (!k.toClient.isEmpty()) {
                k.window = k.toClient.poll();
                k.outstanding--;
            }
            int need = 0;
            for (Client x : all) {
                if (!x.gone) {
                    need += x.toServer.size() + x.arrived.size();
                }
            }
            assertTrue(need <= capacity, "step " + step + ": calls need " + need + " receives, " + capacity + " exist");
            assertTrue(c.promised() <= capacity, "promised " + c.promised());
        }
    }
}
