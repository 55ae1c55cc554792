package org.rpcrdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;
import org.rpcrdma.bindings.ffi.ibverbs.IbVerbs;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_recv_wr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_send_wr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_sge;

/**
 * The bytes {@link SendBatch} and {@link RecvBatch} hand to ibv_post_send / ibv_post_recv,
 * read back through the generated layouts: a reused batch leaves nothing of an earlier
 * request behind (a stale rkey or immediate in a union would go on the wire), and a chain
 * links its requests and SGEs in order. No device: the structures are plain memory.
 */
class WorkRequestLayoutTest {
    private static final long WR = ibv_send_wr.layout().byteSize();
    private static final long SGE = ibv_sge.layout().byteSize();
    private static final long REMOTE_ADDR = ibv_send_wr.wr$offset() + ibv_send_wr.wr.rdma$offset()
            + ibv_send_wr.wr.rdma.remote_addr$offset();
    private static final long RKEY = ibv_send_wr.wr$offset() + ibv_send_wr.wr.rdma$offset()
            + ibv_send_wr.wr.rdma.rkey$offset();

    private static long sendField(SendBatch b, int i, long offset, boolean wide) {
        MemorySegment wrs = b.first();
        return wide ? wrs.get(ValueLayout.JAVA_LONG, i * WR + offset) : wrs.get(ValueLayout.JAVA_INT, i * WR + offset);
    }

    @Test
    void aReusedSendRequestCarriesNothingOfTheOneBefore() {
        try (SendBatch b = new SendBatch(2, 2)) {
            b.rdmaWrite(7, 0x11, 0x1000, 64, 0xdead_beef_0000L, 0x5555, SendBatch.SIGNALED);
            b.addSge(0x12, 0x2000, 32);
            b.sendWithImm(8, 0x13, 0x3000, 16, 0x7777, 0);
            b.clear();

            b.send(9, 0x21, 0x4000, 92, 0);

            assertEquals(9, sendField(b, 0, ibv_send_wr.wr_id$offset(), true));
            assertEquals(IbVerbs.IBV_WR_SEND(), sendField(b, 0, ibv_send_wr.opcode$offset(), false));
            assertEquals(0, sendField(b, 0, ibv_send_wr.send_flags$offset(), false));
            assertEquals(1, sendField(b, 0, ibv_send_wr.num_sge$offset(), false));
            assertEquals(0, sendField(b, 0, ibv_send_wr.next$offset(), true));
            assertEquals(0, sendField(b, 0, REMOTE_ADDR, true), "remote_addr of the earlier RDMA Write");
            assertEquals(0, sendField(b, 0, RKEY, false), "rkey of the earlier RDMA Write");
            assertEquals(0, sendField(b, 0, ibv_send_wr.imm_data$offset(), false));
            // every byte but the four fields a Send sets is zero
            MemorySegment wr = b.first().asSlice(0, WR);
            long nonZero = 0;
            for (long o = 0; o < WR; o++) {
                boolean set = o >= ibv_send_wr.wr_id$offset() && o < ibv_send_wr.wr_id$offset() + 8
                        || o >= ibv_send_wr.sg_list$offset() && o < ibv_send_wr.sg_list$offset() + 8
                        || o >= ibv_send_wr.num_sge$offset() && o < ibv_send_wr.num_sge$offset() + 4
                        || o >= ibv_send_wr.opcode$offset() && o < ibv_send_wr.opcode$offset() + 4;
                if (!set && wr.get(ValueLayout.JAVA_BYTE, o) != 0) {
                    nonZero++;
                }
            }
            assertEquals(0, nonZero, "stale bytes in the reused request");
            // the second request of the earlier chain is not linked any more
            assertEquals(1, b.size());
        }
    }

    /** Bytes of request {@code i} that are not zero, outside wr_id, next, sg_list, num_sge, opcode and send_flags. */
    private static long staleBytes(SendBatch b, int i) {
        MemorySegment wr = b.first().asSlice(i * WR, WR);
        long n = 0;
        for (long o = 0; o < WR; o++) {
            boolean common = o < ibv_send_wr.sg_list$offset() + 8 // wr_id, next, sg_list
                    || o >= ibv_send_wr.num_sge$offset() && o < ibv_send_wr.send_flags$offset() + 4;
            if (!common && wr.get(ValueLayout.JAVA_BYTE, o) != 0) {
                n++;
            }
        }
        return n;
    }

    @Test
    void everySlotOfAReusedChainIsClearedOfItsUnions() {
        try (SendBatch b = new SendBatch(3, 2)) {
            b.send(1, 0x11, 0x1000, 8, 0);
            b.addSge(0x12, 0x1100, 8);
            b.rdmaWrite(2, 0x13, 0x2000, 64, 0xfeed_0000L, 0x4444, 0);
            b.sendWithInvalidate(3, 0x14, 0x3000, 16, 0x6666, SendBatch.SIGNALED);
            b.clear();
            b.send(4, 0x21, 0x4000, 92, 0);
            b.send(5, 0x22, 0x5000, 0, 0);
            b.send(6, 0x23, 0x6000, 40, SendBatch.SIGNALED);

            for (int i = 0; i < 3; i++) {
                assertEquals(0, staleBytes(b, i), "stale bytes in request " + i);
                assertEquals(4 + i, sendField(b, i, ibv_send_wr.wr_id$offset(), true));
                assertEquals(IbVerbs.IBV_WR_SEND(), sendField(b, i, ibv_send_wr.opcode$offset(), false));
            }
            assertEquals(1, sendField(b, 0, ibv_send_wr.num_sge$offset(), false), "one SGE, not the two before");
            assertEquals(0, sendField(b, 1, ibv_send_wr.num_sge$offset(), false), "an empty Send has no SGE");
            assertEquals(1, sendField(b, 2, ibv_send_wr.num_sge$offset(), false));
            assertEquals(SendBatch.SIGNALED, sendField(b, 2, ibv_send_wr.send_flags$offset(), false));
            assertEquals(0, sendField(b, 0, ibv_send_wr.send_flags$offset(), false));
            MemorySegment wrs = b.first();
            assertEquals(wrs.address() + WR, sendField(b, 0, ibv_send_wr.next$offset(), true));
            assertEquals(wrs.address() + 2 * WR, sendField(b, 1, ibv_send_wr.next$offset(), true));
            assertEquals(0, sendField(b, 2, ibv_send_wr.next$offset(), true));
            MemorySegment sge = MemorySegment.ofAddress(sendField(b, 2, ibv_send_wr.sg_list$offset(), true))
                    .reinterpret(SGE);
            assertEquals(0x6000, sge.get(ValueLayout.JAVA_LONG, ibv_sge.addr$offset()));
            assertEquals(40, sge.get(ValueLayout.JAVA_INT, ibv_sge.length$offset()));
            assertEquals(0x23, sge.get(ValueLayout.JAVA_INT, ibv_sge.lkey$offset()));
        }
    }

    @Test
    void aChainLinksRequestsAndTheirOwnSges() {
        try (SendBatch b = new SendBatch(2, 2)) {
            b.send(1, 0x31, 0x5000, 10, 0);
            b.addSge(0x32, 0x6000, 20);
            b.rdmaRead(2, 0x33, 0x7000, 30, 0xabc0L, 0x99, SendBatch.SIGNALED);

            MemorySegment wrs = b.first();
            assertEquals(wrs.address() + WR, sendField(b, 0, ibv_send_wr.next$offset(), true));
            assertEquals(0, sendField(b, 1, ibv_send_wr.next$offset(), true));
            assertEquals(2, sendField(b, 0, ibv_send_wr.num_sge$offset(), false));
            assertEquals(1, sendField(b, 1, ibv_send_wr.num_sge$offset(), false));
            assertEquals(0xabc0L, sendField(b, 1, REMOTE_ADDR, true));
            assertEquals(0x99, sendField(b, 1, RKEY, false));
            MemorySegment sges0 = MemorySegment.ofAddress(sendField(b, 0, ibv_send_wr.sg_list$offset(), true))
                    .reinterpret(2 * SGE);
            MemorySegment sges1 = MemorySegment.ofAddress(sendField(b, 1, ibv_send_wr.sg_list$offset(), true))
                    .reinterpret(SGE);
            assertEquals(0x6000, sges0.get(ValueLayout.JAVA_LONG, SGE + ibv_sge.addr$offset()));
            assertEquals(20, sges0.get(ValueLayout.JAVA_INT, SGE + ibv_sge.length$offset()));
            assertEquals(0x32, sges0.get(ValueLayout.JAVA_INT, SGE + ibv_sge.lkey$offset()));
            assertEquals(0x7000, sges1.get(ValueLayout.JAVA_LONG, ibv_sge.addr$offset()));
            assertEquals(0x33, sges1.get(ValueLayout.JAVA_INT, ibv_sge.lkey$offset()));
        }
    }

    @Test
    void receivesChainWithOneSgeEach() {
        long wrSize = ibv_recv_wr.layout().byteSize();
        try (RecvBatch b = new RecvBatch(3)) {
            b.add(1, 0x41, 0x8000, 1024);
            b.add(2, 0x41, 0x8400, 1024);
            b.clear();
            b.add(3, 0x42, 0x9000, 512);
            b.add(4, 0x42, 0x9200, 512);

            MemorySegment wrs = b.first();
            assertEquals(3, wrs.get(ValueLayout.JAVA_LONG, ibv_recv_wr.wr_id$offset()));
            assertEquals(wrs.address() + wrSize, wrs.get(ValueLayout.JAVA_LONG, ibv_recv_wr.next$offset()));
            assertEquals(0, wrs.get(ValueLayout.JAVA_LONG, wrSize + ibv_recv_wr.next$offset()));
            assertEquals(1, wrs.get(ValueLayout.JAVA_INT, wrSize + ibv_recv_wr.num_sge$offset()));
            MemorySegment sge = MemorySegment.ofAddress(wrs.get(ValueLayout.JAVA_LONG, wrSize + ibv_recv_wr.sg_list$offset()))
                    .reinterpret(SGE);
            assertEquals(0x9200, sge.get(ValueLayout.JAVA_LONG, ibv_sge.addr$offset()));
            assertEquals(512, sge.get(ValueLayout.JAVA_INT, ibv_sge.length$offset()));
            assertEquals(0x42, sge.get(ValueLayout.JAVA_INT, ibv_sge.lkey$offset()));
        }
    }
}
