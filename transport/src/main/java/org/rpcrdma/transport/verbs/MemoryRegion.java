package org.rpcrdma.transport.verbs;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.bindings.IbvCalls;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_mr;

/** An {@code ibv_mr} over caller-owned native memory. Immutable keys; thread-safe reads. */
public final class MemoryRegion extends Resource {

    private final ProtectionDomain pd;
    private final MemorySegment mr;
    private final MemorySegment segment;
    private final int lkey;
    private final int rkey;
    private final int access;

    MemoryRegion(ProtectionDomain pd, MemorySegment segment, int access) {
        if (!segment.isNative()) {
            throw new IllegalArgumentException("only native memory can be registered");
        }
        this.pd = pd;
        this.segment = segment;
        this.access = access;
        this.mr = NativeChecks.pointer("ibv_reg_mr", IbvCalls.ibvRegMr(pd.handle(), segment, segment.byteSize(), access),
                ibv_mr.layout().byteSize());
        this.lkey = ibv_mr.lkey(mr);
        this.rkey = ibv_mr.rkey(mr);
        opened();
    }

    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** The {@code struct ibv_mr *}. */
    public MemorySegment handle() {
        checkOpen();
        return mr;
    }

    public int lkey() {
        checkOpen();
        return lkey;
    }

    public int rkey() {
        checkOpen();
        return rkey;
    }

    /** Virtual address of the first byte (what a peer uses with {@link #rkey()}). */
    public long address() {
        return segment.address();
    }

    public long length() {
        return segment.byteSize();
    }

    /** The registered memory. */
    public MemorySegment segment() {
        checkOpen();
        return segment;
    }

    public int access() {
        return access;
    }

    @Override
    void release() {
        NativeChecks.status("ibv_dereg_mr", IbvCalls.ibvDeregMr(mr));
    }

    /** A refused ibv_dereg_mr (EINVAL while a window is bound over the region, IBA 10.6.7.2.6) keeps it registered. */
    @Override
    boolean retryable() {
        return true;
    }
}
