package org.rpcrdma.transport.verbs;

import org.rpcrdma.bindings.ffi.ibverbs.IbVerbs;

/** {@code enum ibv_access_flags} values for {@link ProtectionDomain#register} and window binds. */
public final class Access {
    public static final int LOCAL_WRITE = IbVerbs.IBV_ACCESS_LOCAL_WRITE();
    public static final int REMOTE_WRITE = IbVerbs.IBV_ACCESS_REMOTE_WRITE();
    public static final int REMOTE_READ = IbVerbs.IBV_ACCESS_REMOTE_READ();
    public static final int REMOTE_ATOMIC = IbVerbs.IBV_ACCESS_REMOTE_ATOMIC();
    /** Needed on an MR that windows are bound to. */
    public static final int MW_BIND = IbVerbs.IBV_ACCESS_MW_BIND();

    private Access() {
    }
}
