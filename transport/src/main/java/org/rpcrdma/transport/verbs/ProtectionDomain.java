package org.rpcrdma.transport.verbs;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.bindings.IbvCalls;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_pd;

/** An {@code ibv_pd}. Close it after its MRs, windows, QPs and SRQs, before its device. */
public final class ProtectionDomain extends Resource {

    private final Device device;
    private final MemorySegment pd;

    ProtectionDomain(Device device) {
        this.device = device;
        this.pd = NativeChecks.pointer("ibv_alloc_pd", IbvCalls.ibvAllocPd(device.handle()), ibv_pd.layout().byteSize());
        opened();
    }

    /** The device this PD belongs to. */
    public Device device() {
        return device;
    }

    /** The {@code struct ibv_pd *}. */
    public MemorySegment handle() {
        checkOpen();
        return pd;
    }

    /**
     * Registers {@code memory} (native, kept alive by the caller for as long as the region
     * is open) with {@code access}, an OR of {@code IBV_ACCESS_*} flags ({@link Access}).
     */
    public MemoryRegion register(MemorySegment memory, int access) {
        checkOpen();
        return new MemoryRegion(this, memory, access);
    }

    /** Allocates a type-2 memory window (rxe provides type 2B). */
    public MemoryWindow allocateWindow() {
        checkOpen();
        return new MemoryWindow(this);
    }

    /** Creates a shared receive queue. */
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge) {
        checkOpen();
        return new SharedReceiveQueue(this, maxWr, maxSge);
    }

    @Override
    void release() {
        NativeChecks.status("ibv_dealloc_pd", IbvCalls.ibvDeallocPd(pd));
    }
}
