package org.rpcrdma.xdr;

/** ONC RPC Version 2 constants (RFC 5531 §8, §9 and Appendix A). */
public final class OncRpc {
    private OncRpc() {}

    /** rpcvers in every Call (RFC 5531 §9). */
    public static final int RPC_VERSION = 2;

    /** msg_type CALL. */
    public static final int CALL = 0;
    /** msg_type REPLY. */
    public static final int REPLY = 1;

    /** reply_stat: the call was accepted (an accept_stat follows). */
    public static final int MSG_ACCEPTED = 0;
    /** reply_stat: the call was denied (a reject_stat follows). */
    public static final int MSG_DENIED = 1;

    /** accept_stat: executed successfully; results follow. */
    public static final int SUCCESS = 0;
    /** accept_stat: program not exported. */
    public static final int PROG_UNAVAIL = 1;
    /** accept_stat: program version not supported; low and high follow. */
    public static final int PROG_MISMATCH = 2;
    /** accept_stat: procedure not supported. */
    public static final int PROC_UNAVAIL = 3;
    /** accept_stat: arguments could not be decoded. */
    public static final int GARBAGE_ARGS = 4;
    /** accept_stat: memory allocation failure or similar. */
    public static final int SYSTEM_ERR = 5;

    /** reject_stat: RPC version is not 2; low and high follow. */
    public static final int RPC_MISMATCH = 0;
    /** reject_stat: authentication failed; an auth_stat follows. */
    public static final int AUTH_ERROR = 1;

    /** auth_stat values (RFC 5531 §9), including the RPCSEC_GSS ones. */
    public static final int AUTH_OK = 0;
    public static final int AUTH_BADCRED = 1;
    public static final int AUTH_REJECTEDCRED = 2;
    public static final int AUTH_BADVERF = 3;
    public static final int AUTH_REJECTEDVERF = 4;
    public static final int AUTH_TOOWEAK = 5;
    public static final int AUTH_INVALIDRESP = 6;
    public static final int AUTH_FAILED = 7;
    public static final int AUTH_KERB_GENERIC = 8;
    public static final int AUTH_TIMEEXPIRE = 9;
    public static final int AUTH_TKT_FILE = 10;
    public static final int AUTH_DECODE = 11;
    public static final int AUTH_NET_ADDR = 12;
    public static final int RPCSEC_GSS_CREDPROBLEM = 13;
    public static final int RPCSEC_GSS_CTXPROBLEM = 14;

    /** auth_flavor AUTH_NONE (RFC 5531 §8.2, Appendix A). */
    public static final int AUTH_NONE = 0;
    /** auth_flavor AUTH_SYS. */
    public static final int AUTH_SYS = 1;

    /** Largest opaque_auth body (RFC 5531 §8.2). */
    public static final int MAX_AUTH_BYTES = 400;
}
