package org.rpcrdma.transport.link;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Which of a completion group's CQs a new connection goes to, and when none has room for it. */
class CompletionGroupTest {

    @Test
    void aConnectionGoesToTheQueueWithTheFewestEntriesReserved() {
        assertEquals(0, CompletionGroup.leastLoaded(1000, new int[] {0, 0}, 300), "the first among equals");
        assertEquals(1, CompletionGroup.leastLoaded(1000, new int[] {300, 0}, 300));
        assertEquals(2, CompletionGroup.leastLoaded(1000, new int[] {300, 300, 0}, 300));
        // connections come and go: the emptiest queue takes the next one, round robin as they fill
        int[] r = new int[3];
        for (int k = 0; k < 9; k++) {
            int i = CompletionGroup.leastLoaded(1000, r, 100);
            assertEquals(k % 3, i);
            r[i] += 100;
        }
    }

    @Test
    void aConnectionThatWouldOverflowEveryQueueIsRefused() {
        assertEquals(-1, CompletionGroup.leastLoaded(1000, new int[] {800, 701}, 300), "room 200 and 299 < 300");
        assertEquals(1, CompletionGroup.leastLoaded(1000, new int[] {800, 700}, 300), "exactly full is allowed");
        assertEquals(-1, CompletionGroup.leastLoaded(100, new int[] {0}, 101), "larger than a whole queue");
    }
}
