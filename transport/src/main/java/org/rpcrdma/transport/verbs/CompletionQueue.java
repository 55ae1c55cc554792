package org.rpcrdma.transport.verbs;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.bindings.IbvCalls;
import org.rpcrdma.bindings.VerbsInline;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_cq;

/**
 * An {@code ibv_cq}. {@link #poll} and {@link #requestNotify} allocate nothing; one thread
 * polls a CQ at a time (libibverbs serializes internally, but completions are consumed in
 * order by one consumer). Close it after its QPs, before its channel and device.
 */
public final class CompletionQueue extends Resource {

    private final Device device;
    private final CompletionChannel channel;
    private final MemorySegment cq;
    /** The provider's poll_cq, looked up once (each lookup allocates under C1). */
    private final MemorySegment pollFn;
    private final long address;
    private final int capacity;

    CompletionQueue(Device device, int capacity, CompletionChannel channel) {
        this.device = device;
        this.channel = channel;
        this.cq = NativeChecks.pointer("ibv_create_cq", IbvCalls.ibvCreateCq(device.handle(), capacity,
                MemorySegment.NULL, channel == null ? MemorySegment.NULL : channel.handle(), 0), ibv_cq.layout().byteSize());
        this.capacity = ibv_cq.cqe(cq);
        this.pollFn = VerbsInline.pollCqFunction(cq);
        this.address = cq.address();
        if (channel != null) {
            channel.register(this);
        }
        opened();
    }

    public Device device() {
        return device;
    }

    /** The channel given at creation, or null. */
    public CompletionChannel channel() {
        return channel;
    }

    /** The actual number of entries the provider gave (at least the requested capacity). */
    public int capacity() {
        return capacity;
    }

    /** The {@code struct ibv_cq *}. */
    public MemorySegment handle() {
        checkOpen();
        return cq;
    }

    /**
     * Polls up to {@code out.capacity()} completions into {@code out} (overwriting it).
     *
     * @return how many were written, 0 when the CQ is empty
     */
    public int poll(WorkCompletions out) {
        checkOpen();
        return NativeChecks.polled(VerbsInline.ibvPollCq(pollFn, address, out.capacity(), out.address()));
    }

    /**
     * Arms the CQ for one event on its channel. Poll again after arming to catch
     * completions that arrived before it (the usual arm-then-drain loop).
     */
    public void requestNotify(boolean solicitedOnly) {
        checkOpen();
        NativeChecks.returned("ibv_req_notify_cq", VerbsInline.ibvReqNotifyCq(cq, solicitedOnly));
    }

    @Override
    void release() {
        if (channel != null) {
            channel.unregister(cq.address());
        }
        NativeChecks.status("ibv_destroy_cq", IbvCalls.ibvDestroyCq(cq));
    }
}
