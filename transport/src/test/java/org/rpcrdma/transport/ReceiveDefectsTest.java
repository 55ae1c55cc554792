package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * {@link ReceiveDefectsBehaviour} over the in-memory pair, and RDMA_NOMSG calls with read
 * chunks beside the Position-Zero Read chunk (§3.4.1) posted by hand: in memory only, as only
 * the in-memory pair exposes any memory a test hands it and lets the test withdraw its rkeys.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ReceiveDefectsTest extends ReceiveDefectsBehaviour {
    @Override
    LinkFixture link() {
        return LinkFixture.IN_MEMORY;
    }

    /**
     * Resources of both sides back where a quiet pair has them (a reply sent from another
     * thread reaches the caller before that thread gives the call's buffer back: waited for).
     */
    private static void quietPair(InMemoryPair p) {
        RawAccess.settled(p); // what was just sent may still be on its way
        CoreDefectsTest.await(() -> p.server().heldReceives() == 0 && p.client().heldReceives() == 0, 5_000);
        assertEquals(0, p.client().outstandingCalls(), "client: calls outstanding");
        assertEquals(0, p.server().outstandingCalls(), "server: backward calls outstanding");
        assertEquals(0, p.client().peerOutstandingCalls(), "client: backward calls unanswered");
        assertEquals(0, p.server().peerOutstandingCalls(), "server: forward calls unanswered");
        assertEquals(0, p.client().heldReceives(), "client: receive buffers held");
        assertEquals(0, p.server().heldReceives(), "server: receive buffers held");
        assertEquals(0, p.exposedCount(), "rkeys exposed");
        assertTrue(p.client().isOpen() && p.server().isOpen(), "both sides open");
    }

    // ---- RDMA_NOMSG calls with read chunks beside the Position-Zero Read chunk (§3.4.1) ----

    @Test
    void anRdmaNomsgCallWithAReadChunkBesideThePositionZeroChunkIsAssembledAndServed() throws Exception {
        List<byte[]> seen = new ArrayList<>();
        CallHandler rec = c -> {
            seen.add(c.message().toByteArray());
            c.reply(reply(c.xid(), OncRpc.SUCCESS));
        };
        try (InMemoryPair p = InMemoryPair.open(RAW, rec); Arena a = Arena.ofShared()) {
            // the call: header (40), opaque of 10 bytes (length word, data, 2 bytes of pad), 8-byte trailer
            byte[] data = ChunkTest.pattern(10, 3);
            MemorySegment full = ChunkTest.writeCall(0x70, data);
            assertEquals(64, full.byteSize());
            // the Position-Zero chunk carries the call without the data and its pad (52 bytes),
            // in two segments, the second holding the bytes either side of the data's position 44
            MemorySegment reduced = a.allocate(52);
            MemorySegment.copy(full, 0, reduced, 0, 44);
            MemorySegment.copy(full, 56, reduced, 44, 8);
            int pz = RawAccess.expose(p.client(), reduced, false);
            MemorySegment dataMem = a.allocate(10);
            dataMem.copyFrom(MemorySegment.ofArray(data));
            int dk = RawAccess.expose(p.client(), dataMem, false);
            RpcRdmaHeader h = header(0x70, RpcRdma.RDMA_NOMSG);
            h.readList().add(0, pz, 30, reduced.address());
            h.readList().add(0, pz, 22, reduced.address() + 30);
            h.readList().add(44, dk, 10, dataMem.address());
            RawAccess.send(p.client(), ChunkTest.raw(h, null));
            assertEquals(0, RawAccess.settled(p).server().stats().chunkListsRefused(), "refused with ERR_CHUNK");
            assertEquals(1, seen.size(), "the handler got the call");
            assertArrayEquals(full.toArray(ValueLayout.JAVA_BYTE), seen.get(0), "assembled in XDR order, pad zero");
            assertEquals(4, RawAccess.settled(p).server().stats().rdmaReads(), "the second Position-Zero segment read in two pieces");
            p.invalidate(pz);
            p.invalidate(dk);
            quietPair(p);
        }
    }

    @Test
    void rdmaNomsgCallsWithSeveralReadChunksAndAPositionZeroChunkInManySegmentsAreAssembled() throws Exception {
        List<byte[]> seen = new ArrayList<>();
        CallHandler rec = c -> {
            seen.add(c.message().toByteArray());
            c.reply(reply(c.xid(), OncRpc.SUCCESS));
        };
        java.util.Random rnd = new java.util.Random(42);
        try (InMemoryPair p = InMemoryPair.open(RAW, rec); Arena a = Arena.ofShared()) {
            for (int round = 0; round < 50; round++) {
                int xid = 0x700 + round;
                // the call: header, then k opaques of odd lengths (length word, data, pad), then a trailer
                int k = 1 + rnd.nextInt(3);
                byte[][] data = new byte[k][];
                java.io.ByteArrayOutputStream full = new java.io.ByteArrayOutputStream();
                java.io.ByteArrayOutputStream reduced = new java.io.ByteArrayOutputStream();
                full.writeBytes(callMsg(xid, 1, new byte[0]).toArray(ValueLayout.JAVA_BYTE));
                reduced.writeBytes(callMsg(xid, 1, new byte[0]).toArray(ValueLayout.JAVA_BYTE));
                int[] positions = new int[k];
                for (int j = 0; j < k; j++) {
                    data[j] = ChunkTest.pattern(1 + rnd.nextInt(40), round * 8L + j);
                    byte[] len = words(data[j].length).toArray(ValueLayout.JAVA_BYTE);
                    full.writeBytes(len);
                    reduced.writeBytes(len);
                    positions[j] = full.size();
                    full.writeBytes(data[j]);
                    full.writeBytes(new byte[Xdr.roundUp(data[j].length) - data[j].length]);
                }
                byte[] trailer = ChunkTest.pattern(8, round);
                full.writeBytes(trailer);
                reduced.writeBytes(trailer);
                byte[] r = reduced.toByteArray();
                MemorySegment pzMem = a.allocate(r.length);
                pzMem.copyFrom(MemorySegment.ofArray(r));
                int pz = RawAccess.expose(p.client(), pzMem, false);
                RpcRdmaHeader h = header(xid, RpcRdma.RDMA_NOMSG);
                // the Position-Zero chunk in 1 to 5 segments cut anywhere, some of them empty
                int cuts = rnd.nextInt(5);
                int[] at = new int[cuts + 2];
                at[cuts + 1] = r.length;
                for (int j = 1; j <= cuts; j++) {
                    at[j] = rnd.nextInt(r.length + 1);
                }
                Arrays.sort(at);
                for (int j = 0; j <= cuts; j++) {
                    h.readList().add(0, pz, at[j + 1] - at[j], pzMem.address() + at[j]);
                }
                List<Integer> keys = new ArrayList<>(List.of(pz));
                for (int j = 0; j < k; j++) {
                    MemorySegment dm = a.allocate(data[j].length);
                    dm.copyFrom(MemorySegment.ofArray(data[j]));
                    int dk = RawAccess.expose(p.client(), dm, false);
                    keys.add(dk);
                    h.readList().add(positions[j], dk, data[j].length, dm.address());
                }
                RawAccess.send(p.client(), ChunkTest.raw(h, null));
                assertEquals(round + 1, seen.size(), "round " + round + ": the handler got the call");
                assertArrayEquals(full.toByteArray(), seen.get(round), "round " + round);
                keys.forEach(p::invalidate);
            }
            assertEquals(0, RawAccess.settled(p).server().stats().chunkListsRefused());
            quietPair(p);
        }
    }
}
