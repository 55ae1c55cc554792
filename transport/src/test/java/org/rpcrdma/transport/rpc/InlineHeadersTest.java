package org.rpcrdma.transport.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.wire.RpcRdmaEncoder;

/** A send buffer's inline header, written XID-only when the rest is there, is byte for byte a full encode. */
class InlineHeadersTest {
    private static final int H = Marshal.INLINE_HEADER;

    private static byte[] fresh(int xid, int credit) {
        MemorySegment m = MemorySegment.ofArray(new byte[H]);
        RpcRdmaEncoder.encodeInlineMsg(m, 0, xid, credit);
        return m.toArray(ValueLayout.JAVA_BYTE);
    }

    private static void assertHeader(MemorySegment buf, int xid, int credit) {
        assertArrayEquals(fresh(xid, credit), buf.asSlice(0, H).toArray(ValueLayout.JAVA_BYTE),
                "header of xid " + xid + ", credit " + credit);
    }

    @Test
    void eachEncodeLeavesTheFullHeaderOfItsXidAndCredit() {
        InlineHeaders headers = new InlineHeaders(2);
        MemorySegment[] bufs = {MemorySegment.ofArray(new byte[64]), MemorySegment.ofArray(new byte[64])};
        int[][] sends = {{0, 1, 32}, {0, 2, 32}, {1, 3, 32}, {0, 4, 32}, {0, 5, 7}, {0, 6, 7}, {1, 7, -1}, {1, 8, -1},
                {1, 9, 0}};
        for (int[] s : sends) {
            assertEquals(H, headers.encode(s[0], bufs[s[0]], s[1], s[2]));
            assertHeader(bufs[s[0]], s[1], s[2]);
        }
    }

    @Test
    void aBufferWrittenWithSomethingElseGetsItsWholeHeaderAgain() {
        InlineHeaders headers = new InlineHeaders(1);
        MemorySegment buf = MemorySegment.ofArray(new byte[64]);
        headers.encode(0, buf, 1, 32);
        // another message in this buffer (RDMA_ERROR, a header with chunks, a raw write)
        buf.fill((byte) 0x5a);
        headers.forget(0);
        assertEquals(H, headers.encode(0, buf, 2, 32));
        assertHeader(buf, 2, 32);
        headers.encode(0, buf, 3, 32);
        assertHeader(buf, 3, 32);
    }
}
