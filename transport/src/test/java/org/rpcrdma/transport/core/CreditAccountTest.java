package org.rpcrdma.transport.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CreditAccountTest {
    private final RpcRdmaStats stats = new RpcRdmaStats();

    @Test
    void startsAtOneUntilGranted() {
        CreditAccount a = new CreditAccount(Direction.FORWARD, 32, stats);
        assertEquals(1, a.window());
        assertTrue(a.tryAcquire());
        assertFalse(a.tryAcquire(), "second call must wait for a grant");
        a.grant(4);
        assertTrue(a.tryAcquire());
        assertEquals(2, a.outstanding());
    }

    @Test
    void clampsGrants() {
        assertEquals(1, CreditAccount.clampGrant(0, 32));
        assertEquals(32, CreditAccount.clampGrant(33, 32));
        assertEquals(32, CreditAccount.clampGrant(-1, 32), "rdma_credit is unsigned");
        assertEquals(7, CreditAccount.clampGrant(7, 32));
        CreditAccount a = new CreditAccount(Direction.BACKWARD, 8, stats);
        a.grant(0);
        assertEquals(1, a.window());
        a.grant(1000);
        assertEquals(8, a.window());
    }

    @Test
    void waitersRunInOrderOnlyWhenWindowAllows() {
        CreditAccount a = new CreditAccount(Direction.FORWARD, 4, stats);
        List<Integer> ran = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            int n = i;
            a.acquire(() -> ran.add(n));
        }
        assertEquals(List.of(0), ran);
        assertEquals(4, a.waiting());
        a.grant(3);
        assertEquals(List.of(0, 1, 2), ran);
        assertEquals(3, a.outstanding());
        a.release();
        assertEquals(List.of(0, 1, 2, 3), ran);
        a.grant(0); // shrinks to 1: no new sends until outstanding drops below 1
        a.release();
        a.release();
        assertEquals(4, ran.size());
        a.release();
        assertEquals(List.of(0, 1, 2, 3, 4), ran);
        assertEquals(1, a.outstanding());
        assertEquals(3, a.highWater());
        assertEquals(4, stats.creditWaits.sum());
    }

    @Test
    void neverExceedsWindowUnderConcurrency() throws Exception {
        CreditAccount a = new CreditAccount(Direction.FORWARD, 16, stats);
        a.grant(5);
        int[] inFlight = {0};
        int[] max = {0};
        Thread[] ts = new Thread[4];
        for (int t = 0; t < ts.length; t++) {
            ts[t] = new Thread(() -> {
                for (int i = 0; i < 20_000; i++) {
                    if (a.tryAcquire()) {
                        synchronized (inFlight) {
                            inFlight[0]++;
                            max[0] = Math.max(max[0], inFlight[0]);
                            inFlight[0]--;
                        }
                        a.release();
                    }
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        assertTrue(a.highWater() <= 5);
        assertEquals(0, a.outstanding());
    }

    @Test
    void releaseWithoutAcquireFails() {
        CreditAccount a = new CreditAccount(Direction.FORWARD, 4, stats);
        assertThrows(IllegalStateException.class, a::release);
        assertThrows(IllegalArgumentException.class, () -> new CreditAccount(Direction.FORWARD, 0, stats));
    }

    @Test
    void resetStartsNewConnectionAtOne() {
        CreditAccount a = new CreditAccount(Direction.FORWARD, 4, stats);
        a.grant(4);
        a.tryAcquire();
        a.reset();
        assertEquals(1, a.window());
        assertEquals(0, a.outstanding());
    }
}
