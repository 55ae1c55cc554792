package org.rpcrdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_send_wr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_sge;

/**
 * A prepared Send hands ibv_post_send the same request, byte for byte, as {@link SendBatch}
 * filled for the same arguments, whatever the context's Sends before it were (only what
 * changed is stored). No device: the structures are plain memory.
 */
class PreparedSendsTest {
    private static final long WR = ibv_send_wr.layout().byteSize();
    private static final int LKEY = 0x1234_5678;

    private static long wrId(int slot) {
        return 0x0100_0000_0000_0000L | slot;
    }

    /** The request without its sg_list pointer (each structure points at its own SGE), and the SGE it points at. */
    private static void assertSame(MemorySegment expectedWr, MemorySegment expectedSge, PreparedSends p, int slot,
            String what) {
        MemorySegment wr = p.request(slot);
        long sgList = ibv_send_wr.sg_list$offset();
        assertEquals(p.sge(slot).address(), wr.get(ValueLayout.JAVA_LONG, sgList), what + ": sg_list");
        byte[] e = expectedWr.toArray(ValueLayout.JAVA_BYTE);
        byte[] a = wr.toArray(ValueLayout.JAVA_BYTE);
        for (long o = sgList; o < sgList + 8; o++) {
            e[(int) o] = 0;
            a[(int) o] = 0;
        }
        assertArrayEquals(e, a, what + ": ibv_send_wr");
        assertArrayEquals(expectedSge.toArray(ValueLayout.JAVA_BYTE), p.sge(slot).toArray(ValueLayout.JAVA_BYTE),
                what + ": ibv_sge");
    }

    @Test
    void eachPreparedSendIsTheRequestASendBatchWouldPost() {
        int[][] sends = { // slot, address offset, length, flags
            {0, 0, 64, 0}, {0, 0, 64, 0}, {0, 0, 92, SendBatch.SIGNALED}, {1, 4096, 92, 0}, {0, 0, 92, 0},
            {0, 8192, 28, SendBatch.SIGNALED}, {1, 4096, 1024, SendBatch.SIGNALED}, {1, 4096, 1024, 0}};
        try (PreparedSends p = new PreparedSends(2, LKEY, PreparedSendsTest::wrId); SendBatch b = new SendBatch(1, 1)) {
            for (int[] s : sends) {
                long address = 0x7f00_0000_0000L + s[1];
                long at = p.prepare(s[0], address, s[2], s[3]);
                assertEquals(p.request(s[0]).address(), at);
                b.clear();
                b.send(wrId(s[0]), LKEY, address, s[2], s[3]);
                MemorySegment sge = MemorySegment.ofAddress(b.first().get(ValueLayout.JAVA_LONG, ibv_send_wr.sg_list$offset()))
                        .reinterpret(ibv_sge.layout().byteSize());
                assertSame(b.first().asSlice(0, WR), sge, p, s[0],
                        "slot " + s[0] + ", length " + s[2] + ", flags " + s[3]);
            }
        }
    }

    @Test
    void coversTheContextsSendsThatCarryBytes() {
        try (PreparedSends p = new PreparedSends(4, LKEY, PreparedSendsTest::wrId)) {
            assertTrue(p.covers(0, 28));
            assertTrue(p.covers(3, 4096));
            assertFalse(p.covers(4, 28), "no such context");
            assertFalse(p.covers(-1, 28));
            assertFalse(p.covers(1, 0), "a Send with no bytes has no SGE");
        }
    }
}
