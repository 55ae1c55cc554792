package org.rpcrdma.nfs4;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The fore channel's slot and sequence-ID rules (RFC 8881 §2.10.6.1). */
class SlotTableTest {
    @Test
    void aSlotStartsAtOneAndMovesOnOnlyWhenSequenceSucceeded() throws Exception {
        SlotTable t = new SlotTable(2);
        SlotTable.Slot a = t.acquire(1, TimeUnit.SECONDS);
        assertEquals(new SlotTable.Slot(0, 1, 0), a);
        t.release(a, SlotTable.Outcome.SEQUENCED);
        SlotTable.Slot b = t.acquire(1, TimeUnit.SECONDS);
        assertEquals(new SlotTable.Slot(0, 2, 0), b, "the lowest free slot, its next sequence ID");
        t.release(b, SlotTable.Outcome.NOT_SEQUENCED);
        assertEquals(2, t.nextSequenceId(0), "SEQUENCE failed: the server did not bump the slot, nor do we");
    }

    @Test
    void concurrentRequestsTakeDifferentSlotsAndReportTheHighestInUse() throws Exception {
        SlotTable t = new SlotTable(3);
        SlotTable.Slot a = t.acquire(1, TimeUnit.SECONDS);
        SlotTable.Slot b = t.acquire(1, TimeUnit.SECONDS);
        assertEquals(1, b.id());
        assertEquals(1, b.highestSlotId(), "sa_highest_slotid: slot 1 is the highest in use");
        t.release(a, SlotTable.Outcome.SEQUENCED);
        SlotTable.Slot c = t.acquire(1, TimeUnit.SECONDS);
        assertEquals(0, c.id());
        assertEquals(2, c.sequenceId());
        assertEquals(1, c.highestSlotId());
    }

    @Test
    void aRequestWithNoReplyLeavesItsSlotUncertainUntilTheServerSettlesIt() throws Exception {
        SlotTable t = new SlotTable(1);
        SlotTable.Slot a = t.acquire(1, TimeUnit.SECONDS);
        assertFalse(t.release(a, SlotTable.Outcome.UNKNOWN));
        assertTrue(t.isUncertain(0));
        SlotTable.Slot b = t.acquire(1, TimeUnit.SECONDS);
        assertEquals(new SlotTable.Slot(0, 2, 0), b, "the slot is used again, guessing the request ran");
        assertTrue(t.release(b, SlotTable.Outcome.MISORDERED), "it did not: send again");
        assertFalse(t.isUncertain(0));
        SlotTable.Slot c = t.acquire(1, TimeUnit.SECONDS);
        assertEquals(1, c.sequenceId(), "back to the ID the server expects");
        assertFalse(t.release(c, SlotTable.Outcome.MISORDERED), "on a certain slot SEQ_MISORDERED is an error");
        assertEquals(1, t.nextSequenceId(0));
        SlotTable.Slot d = t.acquire(1, TimeUnit.SECONDS);
        assertTrue(t.release(d, SlotTable.Outcome.REPLAYED), "the server had executed ID 1: send again");
        assertEquals(2, t.nextSequenceId(0));
        SlotTable.Slot e = t.acquire(1, TimeUnit.SECONDS);
        assertFalse(t.release(e, SlotTable.Outcome.UNKNOWN));
        SlotTable.Slot f = t.acquire(1, TimeUnit.SECONDS);
        assertFalse(t.release(f, SlotTable.Outcome.SEQUENCED));
        assertFalse(t.isUncertain(0), "a SEQUENCE that succeeded settles the slot");
        assertEquals(4, t.nextSequenceId(0));
    }

    @Test
    void theServersTargetLimitsTheSlotsUsedAndAFullTableWaits() throws Exception {
        SlotTable t = new SlotTable(4);
        t.target(0);
        SlotTable.Slot a = t.acquire(1, TimeUnit.SECONDS);
        assertEquals(Nfs4.NFS4ERR_DELAY, assertThrows(Nfs4Exception.class,
                () -> t.acquire(50, TimeUnit.MILLISECONDS)).status(), "slot 1 is above the target");
        CompletableFuture<SlotTable.Slot> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return t.acquire(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(50);
        assertTrue(!waiting.isDone(), "waits for a slot");
        t.release(a, SlotTable.Outcome.SEQUENCED);
        assertEquals(new SlotTable.Slot(0, 2, 0), waiting.get(5, TimeUnit.SECONDS));
        t.target(99);
        assertEquals(1, t.acquire(1, TimeUnit.SECONDS).id(), "a raised target (clamped to our table) frees slot 1");
    }

    @Test
    void releasingTwiceIsACallerBug() throws Exception {
        SlotTable t = new SlotTable(1);
        SlotTable.Slot a = t.acquire(1, TimeUnit.SECONDS);
        t.release(a, SlotTable.Outcome.SEQUENCED);
        assertThrows(IllegalStateException.class, () -> t.release(a, SlotTable.Outcome.SEQUENCED));
        assertThrows(IllegalArgumentException.class, () -> new SlotTable(0));
    }
}
