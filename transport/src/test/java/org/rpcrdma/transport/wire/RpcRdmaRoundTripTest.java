package org.rpcrdma.transport.wire;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.rpcrdma.xdr.RpcMessage;

/** Round-trip properties over seeded random valid headers of every proc and list shape. */
class RpcRdmaRoundTripTest {
    static final long SEED = 0x5eed_8166L;
    static final int CASES = 50_000;

    @Test
    void decodeOfEncodeIsIdentity() throws Exception {
        SplittableRandom rnd = new SplittableRandom(SEED);
        RpcRdmaHeader got = Wire.bigHeader();
        int[] perProc = new int[5];
        for (int i = 0; i < CASES; i++) {
            RandomHeaders.Sample s = RandomHeaders.next(rnd);
            RpcRdmaHeader h = s.header();
            byte[] b = s.bytes();
            try {
                RpcRdmaDecoder.decode(MemorySegment.ofArray(b), 0, b.length, got);
            } catch (RpcRdmaProtocolException e) {
                fail("case " + i + " (seed " + SEED + "): " + e.getMessage() + "\n" + h + "\n" + Wire.hex(b));
            }
            int index = i;
            assertTrue(got.sameWireContent(h), () -> "case " + index + ": " + got + " != " + h);
            int headerLength = RpcRdmaEncoder.encodedLength(h);
            assertEquals(headerLength, got.headerLength());
            assertEquals(headerLength, got.messageOffset());
            assertEquals(s.rpcLength(), got.messageLength());
            if (h.isInline()) {
                assertEquals(h.xid(), got.rpcXid());
                assertEquals(RpcMessage.classify(MemorySegment.ofArray(b), headerLength, s.rpcLength()),
                        got.rpcMsgType());
            }
            // Encoding the decoded header reproduces the received header bytes exactly.
            byte[] again = Wire.encode(got);
            assertArrayEquals(java.util.Arrays.copyOf(b, headerLength), again, "case " + i);
            perProc[h.proc()]++;
        }
        for (int proc = 0; proc < perProc.length; proc++) {
            assertTrue(perProc[proc] > CASES / 20, "proc " + proc + " generated " + perProc[proc] + " times");
        }
    }

    @Test
    void copyFromPreservesContent() {
        SplittableRandom rnd = new SplittableRandom(SEED + 1);
        RpcRdmaHeader copy = Wire.bigHeader();
        for (int i = 0; i < 1000; i++) {
            RpcRdmaHeader h = RandomHeaders.next(rnd).header();
            copy.copyFrom(h);
            assertTrue(copy.sameWireContent(h));
            assertArrayEquals(Wire.encode(h), Wire.encode(copy));
        }
    }
}
