package org.rpcrdma.transport.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class CreditAccountTest {
    @Test
    void startsAtOneUntilGranted() {
        CreditAccount a = new CreditAccount(Direction.FORWARD, 32);
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
        CreditAccount a = new CreditAccount(Direction.BACKWARD, 8);
        a.grant(0);
        assertEquals(1, a.window());
        a.grant(1000);
        assertEquals(8, a.window());
    }

    @Test
    void shrinkingGrantHoldsNewCallsUntilOutstandingDropsBelowIt() {
        CreditAccount a = new CreditAccount(Direction.FORWARD, 4);
        a.grant(3);
        assertTrue(a.tryAcquire() && a.tryAcquire() && a.tryAcquire());
        assertFalse(a.available());
        a.grant(0); // treated as 1
        a.release();
        a.release();
        assertFalse(a.available(), "1 outstanding fills a window of 1");
        a.release();
        assertTrue(a.available());
        assertEquals(3, a.highWater());
    }

    @Test
    void releaseWithoutAcquireFails() {
        CreditAccount a = new CreditAccount(Direction.FORWARD, 4);
        assertThrows(IllegalStateException.class, a::release);
        assertThrows(IllegalArgumentException.class, () -> new CreditAccount(Direction.FORWARD, 0));
    }

    @Test
    void resetStartsNewConnectionAtOne() {
        CreditAccount a = new CreditAccount(Direction.FORWARD, 4);
        a.grant(4);
        a.tryAcquire();
        a.reset();
        assertEquals(1, a.window());
        assertEquals(0, a.outstanding());
    }
}
