package org.rpcrdma.transport.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.RpcRdmaException;

/** Which of a completion group's CQs a new connection goes to ({@link CqReservations}). */
class CompletionGroupTest {

    @Test
    void aConnectionGoesToTheQueueWithTheFewestEntriesReserved() {
        CqReservations r = new CqReservations(2, 1000);
        assertEquals(0, r.reserve(300), "the first among equals");
        assertEquals(1, r.reserve(300));
        CqReservations three = new CqReservations(3, 1000);
        // connections come and go: the emptiest queue takes the next one, round robin as they fill
        for (int k = 0; k < 9; k++) {
            assertEquals(k % 3, three.reserve(100));
        }
        three.release(1, 100);
        assertEquals(1, three.reserve(100), "a released place is taken again first");
    }

    @Test
    void exactlyFullIsAllowed() {
        CqReservations r = new CqReservations(1, 1000);
        assertEquals(0, r.reserve(700));
        assertEquals(0, r.reserve(300));
        assertEquals(1000, r.reserved(0));
    }

    @Test
    void aConnectionLargerThanAWholeQueueIsRefused() {
        CqReservations r = new CqReservations(2, 100);
        RpcRdmaException e = assertThrows(RpcRdmaException.class, () -> r.reserve(101));
        assertEquals(0, r.reserved(0) + r.reserved(1), "nothing reserved by a refusal: " + e.getMessage());
    }
}
