package org.rpcrdma.transport.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    @Test
    void aConnectionThatFitsNoQueueGetsANewQueueOnTheLeastLoadedThread() {
        CqReservations r = new CqReservations(2, 1000);
        assertEquals(0, r.reserve(600));
        assertEquals(1, r.reserve(500));
        // neither has 600 left: a third queue, on thread 1 (500 reserved on its queues, thread 0 has 600)
        assertEquals(2, r.reserve(600));
        assertEquals(3, r.queues(), "the group grew by one queue");
        assertEquals(1, r.threadOf(2), "polled by the thread with the fewest entries reserved");
        assertEquals(2, r.threads(), "threads stay fixed");
        // the next one that fits nowhere goes on thread 0 (600 against 1,100)
        assertEquals(3, r.reserve(900));
        assertEquals(0, r.threadOf(3));
        // one that fits an existing queue takes it (the emptiest: queue 1, 500 reserved) and opens none
        assertEquals(1, r.reserve(400));
        assertEquals(4, r.queues());
    }

    @Test
    void aQueueThatCouldNotBeOpenedIsForgotten() {
        CqReservations r = new CqReservations(1, 1000);
        assertEquals(0, r.reserve(1000));
        assertEquals(1, r.reserve(10));
        r.abandon(1, 10); // the device refused the CQ
        assertEquals(1, r.queues());
        assertEquals(1, r.reserve(10), "the next attempt opens it again");
    }

    @Test
    void aFailedThreadsQueuesTakeNoNewConnection() {
        CqReservations r = new CqReservations(2, 1000);
        assertEquals(0, r.reserve(100));
        r.threadFailed(1); // its poll failed: its connections are lost, its CQs polled by no one
        for (int k = 0; k < 9; k++) {
            assertEquals(0, r.reserve(100), "only the live thread's queue, though thread 1's is emptier");
        }
        assertEquals(2, r.reserve(100), "full: a new queue, on the live thread");
        assertEquals(0, r.threadOf(2));
    }

    @Test
    void whenEveryThreadFailedAConnectionIsRefused() {
        CqReservations r = new CqReservations(2, 1000);
        r.threadFailed(0);
        r.threadFailed(1);
        RpcRdmaException e = assertThrows(RpcRdmaException.class, () -> r.reserve(100));
        assertTrue(e.getMessage().contains("every completion thread"), e.getMessage());
        assertEquals(2, r.queues(), "no queue opened for nobody to poll");
    }
}
