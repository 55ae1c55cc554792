package org.rpcrdma.transport.chunk;

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

    @Test
    void aFragmentedPoolGrowsItsFreeListAndMergesBack() {
        ChunkPool p = new ChunkPool(64 * 200);
        long[] offs = new long[200];
        for (int i = 0; i < 200; i++) {
            offs[i] = p.allocate(64);
        }
        for (int i = 0; i < 200; i += 2) {
            p.free(offs[i], 64); // 100 separate free ranges
        }
        assertEquals(-1, p.allocate(128), "no two free granules are adjacent");
        for (int i = 1; i < 200; i += 2) {
            p.free(offs[i], 64);
        }
        assertEquals(0, p.allocate(64 * 200), "merged back into one range");
    }

    @Test
    void allocatingAndFreeingAllocateNothing() throws Exception {
        java.lang.reflect.Method allocated = Class.forName("com.sun.management.ThreadMXBean")
                .getMethod("getCurrentThreadAllocatedBytes");
        Object bean = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        ChunkPool p = new ChunkPool(1 << 20);
        long[] offs = new long[4];
        long bytes = 0;
        for (int pass = 0; pass < 2; pass++) { // the first lets the JIT compile it
            long before = (long) allocated.invoke(bean);
            for (int round = 0; round < 10_000; round++) {
                for (int i = 0; i < 4; i++) {
                    offs[i] = p.allocate(65_536 + i * 100);
                }
                for (int i = 0; i < 4; i++) { // freed in a rotating order: every merge case
                    int k = (i + round) % 4;
                    p.free(offs[k], 65_536 + k * 100);
                }
            }
            bytes = (long) allocated.invoke(bean) - before;
        }
        // the measurement costs a few hundred bytes; a boxed offset per operation would be 640 KB
        assertTrue(bytes < 16 * 1024, bytes + " bytes allocated by 40,000 allocations and frees");
        assertEquals(0, p.inUse());
    }
}
