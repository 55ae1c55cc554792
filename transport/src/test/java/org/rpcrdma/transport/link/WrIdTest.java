package org.rpcrdma.transport.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class WrIdTest {
    private static final int[] GENERATIONS = {0, 1, 2, 0x7fffffff, 0x80000000, -2, -1, 0x12345678};

    @Test
    void everyOpEverySlotBoundaryEveryGenerationRoundTrips() {
        int[] slots = {0, 1, 2, 255, 256, 65535, 65536, WrId.MAX_SLOT - 1, WrId.MAX_SLOT};
        for (int op = 0; op <= WrId.MAX_OP; op++) {
            for (int slot : slots) {
                for (int gen : GENERATIONS) {
                    check(op, slot, gen);
                }
            }
        }
    }

    @Test
    void everySlotRoundTrips() {
        for (int slot = 0; slot <= WrId.MAX_SLOT; slot++) {
            check(WrId.OP_RECV, slot, GENERATIONS[slot & 7]);
        }
    }

    private static void check(int op, int slot, int gen) {
        long w = WrId.pack(op, slot, gen);
        assertEquals(op, WrId.op(w));
        assertEquals(slot, WrId.slot(w));
        assertEquals(gen, WrId.generation(w));
    }

    @Test
    void outOfRangeRejected() {
        assertThrows(IllegalArgumentException.class, () -> WrId.pack(WrId.MAX_OP + 1, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> WrId.pack(-1, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> WrId.pack(0, WrId.MAX_SLOT + 1, 0));
        assertThrows(IllegalArgumentException.class, () -> WrId.pack(0, -1, 0));
    }
}
