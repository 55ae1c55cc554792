package org.rpcrdma.transport.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ChunkPoolTest {
    @Test
    void rangesAreDisjointAlignedAndMergeBackWhenFreed() {
        ChunkPool p = new ChunkPool(64 * 1024);
        Random rnd = new Random(1);
        List<long[]> live = new ArrayList<>();
        for (int round = 0; round < 10_000; round++) {
            if (live.isEmpty() || rnd.nextBoolean()) {
                long size = rnd.nextInt(5000);
                long off = p.allocate(size);
                if (off < 0) {
                    continue; // full for this size: fine
                }
                assertEquals(0, off % ChunkPool.ALIGN);
                assertTrue(off + size <= p.capacity());
                for (long[] r : live) {
                    long end = r[0] + ChunkPool.rounded(r[1]);
                    assertTrue(off + ChunkPool.rounded(size) <= r[0] || off >= end, "overlap");
                }
                live.add(new long[] {off, size});
            } else {
                long[] r = live.remove(rnd.nextInt(live.size()));
                p.free(r[0], r[1]);
            }
        }
        for (long[] r : live) {
            p.free(r[0], r[1]);
        }
        assertEquals(0, p.inUse());
        assertEquals(0, p.allocate(p.capacity()), "everything merged back into one range");
    }

    @Test
    void aRangeTooLargeOrAFullPoolIsRefusedAndADoubleFreeCaught() {
        ChunkPool p = new ChunkPool(4096);
        assertEquals(-1, p.allocate(4097));
        long a = p.allocate(4096);
        assertEquals(-1, p.allocate(1));
        p.free(a, 4096);
        assertThrows(IllegalStateException.class, () -> p.free(a, 4096));
        assertEquals(-1, new ChunkPool(0).allocate(1));
    }
}
