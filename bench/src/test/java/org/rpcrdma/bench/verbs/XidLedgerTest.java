package org.rpcrdma.bench.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class XidLedgerTest {
    @Test
    void everyCallOfTheRangeExecutedOnceIsExactlyOnce() {
        XidLedger l = new XidLedger();
        for (int x = 100; x < 110; x++) {
            l.executed(x);
        }
        assertEquals(new XidLedger.Check(10, 10, 0, 0, 0), l.check(100, 10));
        assertTrue(l.check(100, 10).exactlyOnce());
    }

    @Test
    void aMissingXidIsLostATwiceRunOneDuplicatedAnotherStray() {
        XidLedger l = new XidLedger();
        l.executed(100);
        l.executed(101);
        l.executed(101);
        l.executed(103);
        l.executed(7); // nobody sent it in this range
        XidLedger.Check c = l.check(100, 4);
        assertEquals(new XidLedger.Check(4, 4, 1, 1, 1), c);
        assertFalse(c.exactlyOnce(), "4 executions for 4 calls, but 102 lost and 101 twice");
    }

    @Test
    void rangesNearTheSignBitAndClearStartOver() {
        XidLedger l = new XidLedger();
        int base = Integer.MAX_VALUE - 1; // the range wraps to negative XIDs
        l.executed(base);
        l.executed(base + 1);
        l.executed(base + 2);
        assertTrue(l.check(base, 3).exactlyOnce());
        l.clear();
        assertEquals(new XidLedger.Check(3, 0, 3, 0, 0), l.check(base, 3));
    }

    @Test
    void aCallResentAfterAReconnectRunsOnceOnEachConnectionTwiceOnOneIsADuplicate() {
        XidLedger l = new XidLedger();
        Object first = new Object();
        Object second = new Object();
        l.executed(100, first);
        l.executed(100, second); // resent on the new connection: executed again there, not a duplicate
        l.executed(101, first);
        l.executed(102, second);
        l.executed(102, second); // twice on one connection: the transport ran it twice
        XidLedger.Check c = l.check(100, 3);
        assertEquals(new XidLedger.Check(3, 5, 0, 1, 0, 1), c);
        assertFalse(c.exactlyOnce());
        l.clear();
        l.executed(100, first);
        l.executed(100, second);
        l.executed(101, first);
        assertEquals(new XidLedger.Check(2, 3, 0, 0, 0, 1), l.check(100, 2));
        assertTrue(l.check(100, 2).exactlyOnce(), "once on each connection it reached");
    }
}
