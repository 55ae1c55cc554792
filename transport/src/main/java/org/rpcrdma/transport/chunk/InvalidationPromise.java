package org.rpcrdma.transport.chunk;

import org.rpcrdma.transport.ChunksUnavailableException;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * What R in our RFC 8797 private data promises. R tells the peer that every rkey we expose
 * may be invalidated by its Send with Invalidate (§3.2, §4.1: a requester that mixes keys
 * that may be with keys that must not be is not supported). On verbs only a type-2 memory
 * window can be (userspace has no fast registration; a registration made by ibv_reg_mr
 * cannot: rxe fails the receive that names it, and the QP with it). So R goes out only when
 * the link exposes memory through windows the device really gave us, whatever the option
 * says; and while we set R an exposure that finds no free window fails (a typed
 * {@link ChunksUnavailableException} for its call, nothing sent) rather than register.
 */
public final class InvalidationPromise {
    private InvalidationPromise() {}

    /**
     * Whether our private data sets R.
     *
     * @param wanted  the option ({@link RpcRdmaOptions#remoteInvalidation})
     * @param windows the link exposes through memory windows (the device has them and gave one)
     */
    public static boolean advertise(boolean wanted, boolean windows) {
        return wanted && windows;
    }

    /**
     * Whether an exposure that finds no free window may fall back to a registration of its
     * own: only if our private data did not set R. What we set rules, not what was
     * negotiated: Linux's nfsd clears R yet invalidates the keys of a client that set it.
     */
    static boolean mayRegister(boolean advertised) {
        return !advertised;
    }
}
