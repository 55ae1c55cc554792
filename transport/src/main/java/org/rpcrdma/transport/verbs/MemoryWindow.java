package org.rpcrdma.transport.verbs;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.bindings.VerbsInline;
import org.rpcrdma.bindings.ffi.ibverbs.IbVerbs;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_mw;

/**
 * A type-2 memory window. Bind it by posting {@link SendBatch#bindWindow}; every bind uses
 * a fresh rkey ({@link #nextRkey()}, ibv_inc_rkey) so an old rkey a peer kept can no longer
 * reach memory (RFC 8166 section 6.1 wants rkeys exposed for one RPC only). Invalidate with
 * {@link SendBatch#localInvalidate} or by the peer's Send with Invalidate.
 * Not thread-safe: the owner of the QP that binds it serializes binds.
 */
public final class MemoryWindow extends Resource {
    private final ProtectionDomain pd;
    private final MemorySegment mw;
    private int rkey;

    MemoryWindow(ProtectionDomain pd) {
        this.pd = pd;
        this.mw = NativeChecks.pointer("ibv_alloc_mw", VerbsInline.ibvAllocMw(pd.handle(), IbVerbs.IBV_MW_TYPE_2()),
                ibv_mw.layout().byteSize());
        this.rkey = ibv_mw.rkey(mw);
        opened();
    }

    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** The {@code struct ibv_mw *}. */
    public MemorySegment handle() {
        checkOpen();
        return mw;
    }

    /** The rkey of the latest bind (or the allocated rkey before any bind). */
    public int rkey() {
        checkOpen();
        return rkey;
    }

    /** The rkey the next bind will use: the current one with its 8-bit tag incremented. */
    public int nextRkey() {
        checkOpen();
        return VerbsInline.ibvIncRkey(rkey);
    }

    void rkeyPosted(int newRkey) {
        this.rkey = newRkey;
        // Providers read ibv_mw.rkey as the window's current key when the next bind is
        // posted (Soft-RoCE passes it to the kernel as mw_rkey and refuses a mismatch with
        // MW_BIND_ERR), but none updates it for a type-2 bind posted as a work request.
        ibv_mw.rkey(mw, newRkey);
    }

    @Override
    void release() {
        NativeChecks.returned("ibv_dealloc_mw", VerbsInline.ibvDeallocMw(mw));
    }
}
