package org.rpcrdma.transport.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.rpcrdma.bindings.ffi.ibverbs.IbVerbs;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_wc;

/**
 * A preallocated {@code struct ibv_wc} array that {@link CompletionQueue#poll} fills; read
 * entries with the primitive accessors (no objects per completion). Confined to the polling
 * thread by convention; the memory is freed by {@link #close()}.
 */
public final class WorkCompletions extends Resource {
    private static final long SIZE = ibv_wc.layout().byteSize();
    private static final long WR_ID = ibv_wc.wr_id$offset();
    private static final long STATUS = ibv_wc.status$offset();
    private static final long OPCODE = ibv_wc.opcode$offset();
    private static final long VENDOR_ERR = ibv_wc.vendor_err$offset();
    private static final long BYTE_LEN = ibv_wc.byte_len$offset();
    private static final long IMM = ibv_wc.imm_data$offset();
    private static final long QP_NUM = ibv_wc.qp_num$offset();
    private static final long WC_FLAGS = ibv_wc.wc_flags$offset();

    /** ibv_wc_status IBV_WC_SUCCESS. */
    public static final int SUCCESS = IbVerbs.IBV_WC_SUCCESS();
    /** ibv_wc_status IBV_WC_RNR_RETRY_EXC_ERR (13). */
    public static final int RNR_RETRY_EXCEEDED = IbVerbs.IBV_WC_RNR_RETRY_EXC_ERR();
    /** ibv_wc_status IBV_WC_WR_FLUSH_ERR. */
    public static final int FLUSHED = IbVerbs.IBV_WC_WR_FLUSH_ERR();
    /** ibv_wc_flags IBV_WC_WITH_IMM. */
    public static final int WITH_IMM = IbVerbs.IBV_WC_WITH_IMM();
    /** ibv_wc_flags IBV_WC_WITH_INV (0x8); Debian 6.1 rxe sets 0x4 instead, see {@link RemoteInvalidation}. */
    public static final int WITH_INV = IbVerbs.IBV_WC_WITH_INV();
    public static final int OPCODE_SEND = IbVerbs.IBV_WC_SEND();
    public static final int OPCODE_RDMA_WRITE = IbVerbs.IBV_WC_RDMA_WRITE();
    public static final int OPCODE_RDMA_READ = IbVerbs.IBV_WC_RDMA_READ();
    public static final int OPCODE_LOCAL_INV = IbVerbs.IBV_WC_LOCAL_INV();
    public static final int OPCODE_BIND_MW = IbVerbs.IBV_WC_BIND_MW();
    public static final int OPCODE_RECV = IbVerbs.IBV_WC_RECV();
    public static final int OPCODE_RECV_RDMA_WITH_IMM = IbVerbs.IBV_WC_RECV_RDMA_WITH_IMM();

    private final Arena arena = Arena.ofShared();
    private final MemorySegment wc;
    private final long address;
    private final int capacity;

    /** Allocates room for {@code capacity} completions. */
    public WorkCompletions(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity " + capacity);
        }
        this.capacity = capacity;
        this.wc = arena.allocate(SIZE * capacity, 8);
        this.address = wc.address();
        opened();
    }

    public int capacity() {
        return capacity;
    }

    /** The array's native address, for ibv_poll_cq. */
    long address() {
        checkOpen();
        return address;
    }

    public long wrId(int i) {
        return wc.get(IbVerbs.C_LONG, i * SIZE + WR_ID);
    }

    public int status(int i) {
        return wc.get(IbVerbs.C_INT, i * SIZE + STATUS);
    }

    public int opcode(int i) {
        return wc.get(IbVerbs.C_INT, i * SIZE + OPCODE);
    }

    public int vendorErr(int i) {
        return wc.get(IbVerbs.C_INT, i * SIZE + VENDOR_ERR);
    }

    public int byteLen(int i) {
        return wc.get(IbVerbs.C_INT, i * SIZE + BYTE_LEN);
    }

    public int wcFlags(int i) {
        return wc.get(IbVerbs.C_INT, i * SIZE + WC_FLAGS);
    }

    /** Immediate data in network byte order as sent (valid when WITH_IMM is set). */
    public int immData(int i) {
        return wc.get(IbVerbs.C_INT, i * SIZE + IMM);
    }

    /** The rkey the peer invalidated (same union as immData; see {@link RemoteInvalidation}). */
    public int invalidatedRkey(int i) {
        return wc.get(IbVerbs.C_INT, i * SIZE + IMM);
    }

    public int qpNum(int i) {
        return wc.get(IbVerbs.C_INT, i * SIZE + QP_NUM);
    }

    /** libibverbs' text for a status value. */
    public static String statusString(int status) {
        return NativeChecks.cString(IbVerbs.ibv_wc_status_str(status));
    }

    @Override
    void release() {
        arena.close();
    }
}
