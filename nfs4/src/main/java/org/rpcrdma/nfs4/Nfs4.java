package org.rpcrdma.nfs4;

/**
 * The numbers of NFSv4.1 this client and the server ({@code org.rpcrdma.nfs4.server}) use, from the XDR of RFC 5662 (RFC 8881's protocol
 * description): programs, operation codes, status codes and flags. Names follow the RFC's.
 */
public final class Nfs4 {
    private Nfs4() {}

    /** NFS program and version (RFC 5662 {@code NFS4_PROGRAM}, {@code NFS_V4}); COMPOUND is procedure 1. */
    public static final int PROGRAM = 100003;
    public static final int VERSION = 4;
    public static final int PROC_COMPOUND = 1;
    /** The callback program number we announce in CREATE_SESSION ({@code csa_cb_program}); CB_COMPOUND is its procedure 1. */
    public static final int CB_PROGRAM = 0x40000000;
    public static final int CB_VERSION = 1;
    public static final int CB_PROC_COMPOUND = 1;
    public static final int MINOR_VERSION = 1;

    // nfs_opnum4 (RFC 5662)
    public static final int OP_ACCESS = 3;
    public static final int OP_COMMIT = 5;
    public static final int OP_CREATE = 6;
    public static final int OP_LINK = 11;
    public static final int OP_LOOKUPP = 16;
    public static final int OP_OPEN_DOWNGRADE = 21;
    public static final int OP_READLINK = 27;
    public static final int OP_REMOVE = 28;
    public static final int OP_RENAME = 29;
    public static final int OP_RESTOREFH = 31;
    public static final int OP_SAVEFH = 32;
    public static final int OP_SECINFO = 33;
    public static final int OP_SETATTR = 34;
    public static final int OP_FREE_STATEID = 45;
    public static final int OP_SECINFO_NO_NAME = 52;
    public static final int OP_TEST_STATEID = 55;
    /** The lowest and highest operation codes of NFSv4.1 (ACCESS .. RECLAIM_COMPLETE); others are OP_ILLEGAL. */
    public static final int OP_FIRST = 3;
    public static final int OP_LAST_V41 = 58;
    public static final int OP_CLOSE = 4;
    public static final int OP_DELEGRETURN = 8;
    public static final int OP_GETATTR = 9;
    public static final int OP_GETFH = 10;
    public static final int OP_LOOKUP = 15;
    public static final int OP_OPEN = 18;
    public static final int OP_PUTFH = 22;
    public static final int OP_PUTROOTFH = 24;
    public static final int OP_READ = 25;
    public static final int OP_READDIR = 26;
    public static final int OP_WRITE = 38;
    public static final int OP_BIND_CONN_TO_SESSION = 41;
    public static final int OP_EXCHANGE_ID = 42;
    public static final int OP_CREATE_SESSION = 43;
    public static final int OP_DESTROY_SESSION = 44;
    public static final int OP_SEQUENCE = 53;
    public static final int OP_DESTROY_CLIENTID = 57;
    public static final int OP_RECLAIM_COMPLETE = 58;
    public static final int OP_ILLEGAL = 10044;

    // nfs_cb_opnum4 (RFC 5662): CB_GETATTR (3) .. CB_NOTIFY_DEVICEID (14) are NFSv4.1's
    public static final int OP_CB_GETATTR = 3;
    public static final int OP_CB_RECALL = 4;
    public static final int OP_CB_SEQUENCE = 11;
    public static final int OP_CB_NOTIFY_DEVICEID = 14;
    public static final int OP_CB_ILLEGAL = 10044;
    public static final int CB_PROC_NULL = 0;

    // nfsstat4 (RFC 5662)
    public static final int NFS4_OK = 0;
    public static final int NFS4ERR_PERM = 1;
    public static final int NFS4ERR_NOENT = 2;
    public static final int NFS4ERR_IO = 5;
    public static final int NFS4ERR_ACCESS = 13;
    public static final int NFS4ERR_EXIST = 17;
    public static final int NFS4ERR_XDEV = 18;
    public static final int NFS4ERR_NOTDIR = 20;
    public static final int NFS4ERR_ISDIR = 21;
    public static final int NFS4ERR_INVAL = 22;
    public static final int NFS4ERR_FBIG = 27;
    public static final int NFS4ERR_NOSPC = 28;
    public static final int NFS4ERR_NAMETOOLONG = 63;
    public static final int NFS4ERR_NOTEMPTY = 66;
    public static final int NFS4ERR_STALE = 70;
    public static final int NFS4ERR_BAD_COOKIE = 10003;
    public static final int NFS4ERR_TOOSMALL = 10005;
    public static final int NFS4ERR_BADTYPE = 10007;
    public static final int NFS4ERR_SHARE_DENIED = 10015;
    public static final int NFS4ERR_NOFILEHANDLE = 10020;
    public static final int NFS4ERR_STALE_CLIENTID = 10022;
    public static final int NFS4ERR_OLD_STATEID = 10024;
    public static final int NFS4ERR_SYMLINK = 10029;
    public static final int NFS4ERR_RESTOREFH = 10030;
    public static final int NFS4ERR_ATTRNOTSUPP = 10032;
    public static final int NFS4ERR_NO_GRACE = 10033;
    public static final int NFS4ERR_LOCKS_HELD = 10037;
    public static final int NFS4ERR_OPENMODE = 10038;
    public static final int NFS4ERR_BADOWNER = 10039;
    public static final int NFS4ERR_BADNAME = 10041;
    public static final int NFS4ERR_CLID_INUSE = 10017;
    public static final int NFS4ERR_TOO_MANY_OPS = 10070;
    public static final int NFS4ERR_NOT_ONLY_OP = 10081;
    public static final int NFS4ERR_CLIENTID_BUSY = 10074;
    public static final int NFS4ERR_BADHANDLE = 10001;
    public static final int NFS4ERR_NOTSUPP = 10004;
    public static final int NFS4ERR_SERVERFAULT = 10006;
    public static final int NFS4ERR_DELAY = 10008;
    public static final int NFS4ERR_GRACE = 10013;
    public static final int NFS4ERR_MINOR_VERS_MISMATCH = 10021;
    public static final int NFS4ERR_BAD_STATEID = 10025;
    public static final int NFS4ERR_BADXDR = 10036;
    public static final int NFS4ERR_OP_ILLEGAL = 10044;
    public static final int NFS4ERR_BADSESSION = 10052;
    public static final int NFS4ERR_BADSLOT = 10053;
    public static final int NFS4ERR_SEQ_MISORDERED = 10063;
    public static final int NFS4ERR_SEQUENCE_POS = 10064;
    public static final int NFS4ERR_RETRY_UNCACHED_REP = 10068;
    public static final int NFS4ERR_OP_NOT_IN_SESSION = 10071;
    public static final int NFS4ERR_SEQ_FALSE_RETRY = 10076;

    // EXCHANGE_ID, CREATE_SESSION, SEQUENCE flags (RFC 5662)
    public static final int CREATE_SESSION4_FLAG_CONN_BACK_CHAN = 0x00000002;
    public static final int EXCHGID4_FLAG_USE_NON_PNFS = 0x00010000;
    public static final int EXCHGID4_FLAG_CONFIRMED_R = 0x80000000;
    public static final int SEQ4_STATUS_CB_PATH_DOWN = 0x00000001;
    public static final int SEQ4_STATUS_CB_PATH_DOWN_SESSION = 0x00000200;
    public static final int SEQ4_STATUS_BACKCHANNEL_FAULT = 0x00000400;
    /** The SEQ4_STATUS bits that say the server has no back channel path to us (RFC 8881 §18.46.3). */
    public static final int SEQ4_STATUS_CB_PATH_FLAGS = SEQ4_STATUS_CB_PATH_DOWN | SEQ4_STATUS_CB_PATH_DOWN_SESSION;

    // BIND_CONN_TO_SESSION channel directions (RFC 5662)
    public static final int CDFC4_FORE = 0x1;
    public static final int CDFC4_BACK = 0x2;
    public static final int CDFC4_FORE_OR_BOTH = 0x3;
    public static final int CDFS4_FORE = 0x1;
    public static final int CDFS4_BACK = 0x2;
    public static final int CDFS4_BOTH = 0x3;

    // OPEN (RFC 5662)
    public static final int OPEN4_SHARE_ACCESS_READ = 1;
    public static final int OPEN4_SHARE_ACCESS_WRITE = 2;
    public static final int OPEN4_SHARE_ACCESS_BOTH = 3;
    public static final int OPEN4_SHARE_ACCESS_WANT_READ_DELEG = 0x0100;
    public static final int OPEN4_SHARE_ACCESS_WANT_NO_DELEG = 0x0400;
    public static final int OPEN4_SHARE_DENY_NONE = 0;
    public static final int OPEN4_NOCREATE = 0;
    public static final int CLAIM_NULL = 0;
    public static final int OPEN_DELEGATE_NONE = 0;
    public static final int OPEN_DELEGATE_READ = 1;
    public static final int OPEN_DELEGATE_WRITE = 2;
    public static final int OPEN_DELEGATE_NONE_EXT = 3;
    public static final int WND4_CONTENTION = 7;
    public static final int WND4_RESOURCE = 8;
    public static final int NFS_LIMIT_SIZE = 1;
    public static final int NFS_LIMIT_BLOCKS = 2;

    // WRITE stable_how4
    public static final int UNSTABLE4 = 0;
    public static final int FILE_SYNC4 = 2;

    /** state_protect_how4 SP4_NONE; callback_sec_parms4 flavors are ONC RPC's (AUTH_SYS = 1). */
    public static final int SP4_NONE = 0;

    /** fattr4 attribute numbers (RFC 5662 {@code FATTR4_*}): bit n of the bitmap's word n / 32. */
    public static final int FATTR4_TYPE = 1;
    public static final int FATTR4_CHANGE = 3;
    public static final int FATTR4_SIZE = 4;
    public static final int FATTR4_FILEID = 20;

    /** Bounds from RFC 5662: NFS4_FHSIZE, NFS4_OPAQUE_LIMIT, NFS4_SESSIONID_SIZE, NFS4_VERIFIER_SIZE. */
    public static final int NFS4_FHSIZE = 128;
    public static final int NFS4_OPAQUE_LIMIT = 1024;
    public static final int NFS4_SESSIONID_SIZE = 16;
    public static final int NFS4_VERIFIER_SIZE = 8;
    /** Bounds of ours for what the RFC leaves unbounded: a tag, a name, a bitmap, an ACE's who. */
    public static final int MAX_TAG = 1024;
    public static final int MAX_NAME = 1024;
    public static final int MAX_BITMAP_WORDS = 8;
    /** COMPOUND ops we accept in one CB_COMPOUND, and referring-call list entries. */
    public static final int MAX_CB_OPS = 16;
    public static final int MAX_REFERRING = 64;
}
