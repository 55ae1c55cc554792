package org.rpcrdma.oncrpc;

/**
 * While a server decodes the arguments of a call whose bytes were pulled by RDMA Read into
 * memory of their own ({@code IncomingCall.pulled()}, RFC 8166 §3.4.5): a DDP-eligible
 * item ({@link Codecs#payload}) may then be a view of that memory instead of a heap copy,
 * and the dispatcher keeps the call's message until the call is answered if one was
 * given. One holder per thread, reused: a call decodes with no allocation for it.
 */
final class ArgumentViews {
    private static final ThreadLocal<ArgumentViews> CURRENT = ThreadLocal.withInitial(ArgumentViews::new);

    private boolean allowed;
    private boolean given;

    private ArgumentViews() {}

    /** Starts decoding a call's arguments on this thread; views are given only if {@code allowed}. */
    static ArgumentViews begin(boolean allowed) {
        ArgumentViews v = CURRENT.get();
        v.allowed = allowed;
        v.given = false;
        return v;
    }

    /** Ends the decode started by {@link #begin}: whether a view of the message was given. */
    boolean end() {
        boolean g = given;
        allowed = false;
        given = false;
        return g;
    }

    /** Whether the item being decoded may be a view of the message (and is: the message is then kept). */
    static boolean give() {
        ArgumentViews v = CURRENT.get();
        if (!v.allowed) {
            return false;
        }
        v.given = true;
        return true;
    }
}
