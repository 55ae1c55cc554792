package org.rpcrdma.transport.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * {@link RpcRdmaDecoder#decodePlainMsg}, the 64-bit fast path for a plain RDMA_MSG, against
 * {@link RpcRdmaDecoder#decodeAny}, which checks every rule: what the fast path accepts must
 * decode exactly as the full decoder decodes it, and every message one word away from plain
 * must be left to the full decoder (with its error, if any).
 */
class PlainMsgFastPathTest {
    private static final int[] WORDS = {
        0, // rdma_xid (set per case)
        RpcRdma.RPCRDMA_VERSION, 0, RpcRdma.RDMA_MSG, 0, 0, 0, // vers, credit, proc, three empty lists
        0, 0, 2, // RPC xid (set per case), msg_type, rpcvers
    };

    private static MemorySegment plain(int xid, int credit, int msgType, int extra) {
        MemorySegment m = MemorySegment.ofArray(new byte[WORDS.length * 4 + extra]);
        for (int i = 0; i < WORDS.length; i++) {
            Xdr.putInt(m, i * 4L, WORDS[i]);
        }
        Xdr.putInt(m, 0, xid);
        Xdr.putInt(m, 8, credit);
        Xdr.putInt(m, 28, xid);
        Xdr.putInt(m, 32, msgType);
        return m;
    }

    private static void assertSameDecode(RpcRdmaHeader fast, RpcRdmaHeader full) {
        assertTrue(fast.sameWireContent(full), () -> fast + " vs " + full);
        assertEquals(full.headerLength(), fast.headerLength());
        assertEquals(full.messageOffset(), fast.messageOffset());
        assertEquals(full.messageLength(), fast.messageLength());
        assertEquals(full.rpcXid(), fast.rpcXid());
        assertEquals(full.rpcMsgType(), fast.rpcMsgType());
        assertTrue(fast.hasNoChunks());
    }

    @Test
    void plainCallsAndRepliesDecodeAsTheFullDecoderDecodesThem() throws Exception {
        Random r = new Random(11);
        for (int i = 0; i < 2_000; i++) {
            int xid = r.nextInt();
            int credit = r.nextInt();
            int type = r.nextBoolean() ? OncRpc.CALL : OncRpc.REPLY;
            int extra = r.nextInt(64);
            long offset = r.nextInt(16);
            MemorySegment msg = plain(xid, credit, type, extra);
            MemorySegment buf = MemorySegment.ofArray(new byte[(int) (offset + msg.byteSize() + r.nextInt(16))]);
            MemorySegment.copy(msg, 0, buf, offset, msg.byteSize());
            RpcRdmaHeader fast = RpcRdmaHeader.forInlineThreshold(1024);
            RpcRdmaHeader full = RpcRdmaHeader.forInlineThreshold(1024);
            assertTrue(RpcRdmaDecoder.decodePlainMsg(buf, offset, (int) msg.byteSize(), fast));
            RpcRdmaDecoder.decodeAny(buf, offset, (int) msg.byteSize(), full);
            assertSameDecode(fast, full);
        }
    }

    @Test
    void aMessageOneWordFromPlainIsLeftToTheFullDecoder() throws Exception {
        // word index -> a value that makes the message not plain
        int[][] changes = {
            {1, 2}, // rdma_vers 2: ERR_VERS territory
            {3, RpcRdma.RDMA_NOMSG}, {3, RpcRdma.RDMA_MSGP}, {3, RpcRdma.RDMA_ERROR}, {3, 7},
            {4, 1}, {5, 1}, {6, 1}, // a list present
            {7, 0x1234}, // RPC xid differs from rdma_xid
            {8, 2}, // msg_type neither CALL nor REPLY
        };
        for (int[] c : changes) {
            MemorySegment m = plain(0x55, 8, OncRpc.CALL, 64);
            Xdr.putInt(m, c[0] * 4L, c[1]);
            assertFalse(RpcRdmaDecoder.decodePlainMsg(m, 0, (int) m.byteSize(), RpcRdmaHeader.forInlineThreshold(1024)),
                    "word " + c[0] + " = " + c[1]);
            // decode() then gives what the full decoder gives, error included
            String viaDecode = outcome(m, true);
            String viaFull = outcome(m, false);
            assertEquals(viaFull, viaDecode, "word " + c[0] + " = " + c[1]);
        }
    }

    private static String outcome(MemorySegment m, boolean entry) {
        RpcRdmaHeader h = RpcRdmaHeader.forInlineThreshold(1024);
        try {
            if (entry) {
                RpcRdmaDecoder.decode(m, 0, (int) m.byteSize(), h);
            } else {
                RpcRdmaDecoder.decodeAny(m, 0, (int) m.byteSize(), h);
            }
            return h.toString() + " " + h.headerLength() + " " + h.messageLength();
        } catch (RpcRdmaProtocolException e) {
            return e.violation() + " " + e.getMessage();
        }
    }

    @Test
    void aMessageTooShortForTheFastPathIsLeftToTheFullDecoder() {
        MemorySegment m = plain(1, 1, OncRpc.CALL, 0).asSlice(0, 35);
        assertEquals(outcome(m, false), outcome(m, true));
    }
}
