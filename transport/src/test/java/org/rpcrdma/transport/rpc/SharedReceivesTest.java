package org.rpcrdma.transport.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SharedReceivesTest {
    private final List<Integer> postedSlots = new ArrayList<>();
    private int posts;

    private SharedReceivePool pool(Arena arena, int count, int batch) {
        return new SharedReceivePool(arena.allocate(count * 64L), count, 64, batch, (slots, n) -> {
            posts++;
            for (int i = 0; i < n; i++) {
                postedSlots.add(slots[i]);
            }
        });
    }

    @Test
    void everyFreeBufferIsPostedAgainAtTheWatermark() {
        try (Arena arena = Arena.ofConfined()) {
            SharedReceivePool p = pool(arena, 16, 4);
            assertEquals(16, p.postAll());
            assertEquals(16, p.posted());
            for (int s = 0; s < 3; s++) {
                p.completed(s);
                p.release(s);
            }
            assertEquals(13, p.posted(), "3 FREE, under the watermark of 4: not posted yet");
            assertEquals(3, p.free());
            p.completed(3);
            assertEquals(1, p.held());
            p.release(3);
            assertEquals(16, p.posted(), "the 4th free buffer posts all 4 in one call");
            assertEquals(0, p.free());
            assertEquals(2, posts);
            assertThrows(IllegalStateException.class, () -> p.release(3), "FREE again: released twice");
        }
    }

    /**
     * Two connections on one pool: a connection's loss returns the buffers it was
     * handed after it was lost and frees its share; the other's grants grow into it; the
     * pool ends with every buffer posted and none held.
     */
    @Test
    void aLostConnectionGivesItsBuffersAndShareBack() {
        try (Arena arena = Arena.ofConfined()) {
            SharedReceivePool p = pool(arena, 16, 2);
            p.postAll();
            SharedCredits credits = new SharedCredits(12, 8, 4, 2);
            SharedReceives a = new SharedReceives(p, credits, credits.join());
            SharedReceives b = new SharedReceives(p, credits, credits.join());
            assertEquals(5, a.grantToPeer(32), "1 + (12 - 4) / 2, not the configured 32");
            assertEquals(5, b.grantToPeer(32));
            a.peerCallArrived();
            a.completed(postedSlots.get(0));
            b.completed(postedSlots.get(1));
            b.completed(postedSlots.get(2));
            assertEquals(3, p.held());
            a.shutdown(); // lost while holding slot 0; slot 3 completes on its QP afterwards
            a.completedAfterLoss(postedSlots.get(3));
            a.release(postedSlots.get(0));
            b.release(postedSlots.get(1));
            b.release(postedSlots.get(2));
            assertEquals(0, p.held());
            assertEquals(16, p.posted(), "every buffer back on the shared queue");
            assertEquals(1, credits.active());
            assertEquals(8, b.grantToPeer(32), "a's share is b's now: 1 + min(7, 8)");
            assertTrue(b.ensureForOwnCall(0, 0));
            assertTrue(b.ensureForOwnCall(1, 0));
            assertFalse(b.ensureForOwnCall(2, 0), "the own-call budget of 2 is used");
            b.ownCallsOut(0);
            assertEquals(0, credits.ownReserved());
        }
    }
}
