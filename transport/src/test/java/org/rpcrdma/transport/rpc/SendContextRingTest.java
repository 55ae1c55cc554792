package org.rpcrdma.transport.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SendContextRingTest {
    @Test
    void fullRingRefusesAndSignalledCompletionFreesOlder() {
        SendContextRing r = new SendContextRing(4, 2);
        List<Integer> slots = new ArrayList<>();
        List<Boolean> signalled = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            int s = r.tryAcquire();
            if (s >= 0) {
                slots.add(s);
                signalled.add(r.shouldSignal());
            }
        }
        assertEquals(List.of(0, 1, 2, 3), slots);
        assertEquals(List.of(false, true, false, true), signalled);
        r.completed(1); // frees 0 and 1
        assertEquals(0, r.tryAcquire());
        assertEquals(1, r.tryAcquire());
        assertEquals(4, r.inUse());
        assertEquals(-1, r.tryAcquire());
        r.completed(3);
        r.completed(1);
        assertEquals(0, r.inUse());
        assertThrows(IllegalStateException.class, () -> r.completed(0));
    }

    @Test
    void rejectsCompletionOutsideOutstandingRange() {
        SendContextRing r = new SendContextRing(8, 1);
        assertEquals(0, r.tryAcquire());
        assertEquals(1, r.tryAcquire());
        assertThrows(IllegalStateException.class, () -> r.completed(5));
        r.completed(1);
        assertEquals(0, r.inUse());
    }

    @Test
    void signalsWhenFullEvenBetweenIntervals() {
        SendContextRing r = new SendContextRing(2, 2);
        r.tryAcquire();
        assertFalse(r.shouldSignal());
        r.tryAcquire();
        assertTrue(r.shouldSignal());
        assertThrows(IllegalArgumentException.class, () -> new SendContextRing(2, 3));
    }
}
