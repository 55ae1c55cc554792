package org.rpcrdma.nfs4.server;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.rpcrdma.nfs4.ChannelAttrs;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.nfs4.Stateid;
import org.rpcrdma.oncrpc.Codecs;
import org.rpcrdma.oncrpc.XdrCodec;
import org.rpcrdma.xdr.XdrException;
import org.rpcrdma.xdr.XdrReader;

/**
 * The arguments of the operations this server implements (nfs_argop4 of RFC 5662), decoded
 * with every length bounded. An operation code it does not implement ends the decode
 * ({@link Unsupported}): processing stops at that operation anyway (RFC 8881 §16.2.3), so
 * what follows it is not needed.
 */
sealed interface OpArgs {
    /** A code we do not decode: NFS4ERR_NOTSUPP, or NFS4ERR_OP_ILLEGAL outside NFSv4.1's codes. */
    record Unsupported(int code) implements OpArgs {}
    /** An operation with no arguments (PUTROOTFH, GETFH, SAVEFH, RESTOREFH, LOOKUPP, READLINK). */
    record Plain(int code) implements OpArgs {}
    record Sequence(byte[] sessionId, int sequenceId, int slotId, int highestSlotId, boolean cacheThis) implements OpArgs {}
    record ExchangeId(byte[] verifier, byte[] owner, int flags, int protect) implements OpArgs {}
    record CreateSession(long clientId, int sequence, int flags, ChannelAttrs fore, ChannelAttrs back, int cbProgram)
            implements OpArgs {}
    record DestroySession(byte[] sessionId) implements OpArgs {}
    record DestroyClientId(long clientId) implements OpArgs {}
    record BindConn(byte[] sessionId, int dir, boolean rdmaMode) implements OpArgs {}
    record ReclaimComplete(boolean oneFs) implements OpArgs {}
    record Secinfo(String name) implements OpArgs {} // name null: SECINFO_NO_NAME
    record PutFh(byte[] fh) implements OpArgs {}
    record Lookup(String name) implements OpArgs {}
    record Access(int access) implements OpArgs {}
    record Getattr(int[] mask) implements OpArgs {}
    record Setattr(Stateid stateid, NewAttrs.Raw attrs) implements OpArgs {}
    record Readdir(long cookie, byte[] verifier, int dirCount, int maxCount, int[] mask) implements OpArgs {}
    record Create(int type, String linkText, String name, NewAttrs.Raw attrs) implements OpArgs {}
    record Remove(String name) implements OpArgs {}
    record Rename(String oldName, String newName) implements OpArgs {}
    record Link(String name) implements OpArgs {}
    /** OPEN; {@code createMode} -1 for OPEN4_NOCREATE; {@code name} null for CLAIM_FH. */
    record Open(int seqid, int access, int deny, long clientId, byte[] owner, int createMode, NewAttrs.Raw attrs,
            byte[] verifier, int claim, String name) implements OpArgs {}
    record Close(int seqid, Stateid stateid) implements OpArgs {}
    record OpenDowngrade(Stateid stateid, int seqid, int access, int deny) implements OpArgs {}
    record Read(Stateid stateid, long offset, int count) implements OpArgs {}
    /** WRITE; {@code data} a view of the pulled read chunk when it came by RDMA Read. */
    record Write(Stateid stateid, long offset, int stable, MemorySegment data) implements OpArgs {}
    record Commit(long offset, int count) implements OpArgs {}
    record TestStateid(List<Stateid> stateids) implements OpArgs {}
    record FreeStateid(Stateid stateid) implements OpArgs {}
    record Delegreturn(Stateid stateid) implements OpArgs {}

    /** The largest READ and WRITE served (maxread, maxwrite). */
    int MAX_IO = 1 << 20;
    XdrCodec<MemorySegment> WRITE_DATA = Codecs.payload(MAX_IO);

    static OpArgs decode(int op, XdrReader r) throws XdrException {
        return switch (op) {
            case Nfs4.OP_SEQUENCE -> new Sequence(r.readFixedOpaque(Nfs4.NFS4_SESSIONID_SIZE), r.readInt(), r.readInt(),
                    r.readInt(), r.readBoolean());
            case Nfs4.OP_EXCHANGE_ID -> exchangeId(r);
            case Nfs4.OP_CREATE_SESSION -> createSession(r);
            case Nfs4.OP_DESTROY_SESSION -> new DestroySession(r.readFixedOpaque(Nfs4.NFS4_SESSIONID_SIZE));
            case Nfs4.OP_DESTROY_CLIENTID -> new DestroyClientId(r.readLong());
            case Nfs4.OP_BIND_CONN_TO_SESSION -> new BindConn(r.readFixedOpaque(Nfs4.NFS4_SESSIONID_SIZE), r.readInt(),
                    r.readBoolean());
            case Nfs4.OP_RECLAIM_COMPLETE -> new ReclaimComplete(r.readBoolean());
            case Nfs4.OP_SECINFO_NO_NAME -> {
                r.readInt(); // secinfo_style4: current or parent, the same answer here
                yield new Secinfo(null);
            }
            case Nfs4.OP_SECINFO -> new Secinfo(name(r));
            case Nfs4.OP_PUTFH -> new PutFh(r.readOpaque(Nfs4.NFS4_FHSIZE));
            case Nfs4.OP_PUTROOTFH, Nfs4.OP_GETFH, Nfs4.OP_SAVEFH, Nfs4.OP_RESTOREFH, Nfs4.OP_LOOKUPP,
                    Nfs4.OP_READLINK -> new Plain(op);
            case Nfs4.OP_LOOKUP -> new Lookup(name(r));
            case Nfs4.OP_ACCESS -> new Access(r.readInt());
            case Nfs4.OP_GETATTR -> new Getattr(bitmap(r));
            case Nfs4.OP_SETATTR -> new Setattr(stateid(r), NewAttrs.Raw.decode(r));
            case Nfs4.OP_READDIR -> new Readdir(r.readLong(), r.readFixedOpaque(Nfs4.NFS4_VERIFIER_SIZE), r.readInt(),
                    r.readInt(), bitmap(r));
            case Nfs4.OP_CREATE -> create(r);
            case Nfs4.OP_REMOVE -> new Remove(name(r));
            case Nfs4.OP_RENAME -> new Rename(name(r), name(r));
            case Nfs4.OP_LINK -> new Link(name(r));
            case Nfs4.OP_OPEN -> open(r);
            case Nfs4.OP_CLOSE -> new Close(r.readInt(), stateid(r));
            case Nfs4.OP_OPEN_DOWNGRADE -> new OpenDowngrade(stateid(r), r.readInt(), r.readInt(), r.readInt());
            case Nfs4.OP_READ -> new Read(stateid(r), r.readLong(), r.readInt());
            case Nfs4.OP_WRITE -> new Write(stateid(r), r.readLong(), r.readInt(), WRITE_DATA.decode(r));
            case Nfs4.OP_COMMIT -> new Commit(r.readLong(), r.readInt());
            case Nfs4.OP_TEST_STATEID -> {
                int n = r.readArrayLength(1024, 16);
                List<Stateid> l = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    l.add(stateid(r));
                }
                yield new TestStateid(l);
            }
            case Nfs4.OP_FREE_STATEID -> new FreeStateid(stateid(r));
            case Nfs4.OP_DELEGRETURN -> new Delegreturn(stateid(r));
            default -> new Unsupported(op);
        };
    }

    static String name(XdrReader r) throws XdrException {
        return r.readString(Nfs4.MAX_NAME);
    }

    static Stateid stateid(XdrReader r) throws XdrException {
        return new Stateid(r.readInt(), r.readFixedOpaque(Stateid.OTHER_SIZE));
    }

    static int[] bitmap(XdrReader r) throws XdrException {
        int n = r.readArrayLength(Nfs4.MAX_BITMAP_WORDS, 4);
        int[] m = new int[n];
        for (int i = 0; i < n; i++) {
            m[i] = r.readInt();
        }
        return m;
    }

    private static ExchangeId exchangeId(XdrReader r) throws XdrException {
        byte[] verifier = r.readFixedOpaque(Nfs4.NFS4_VERIFIER_SIZE);
        byte[] owner = r.readOpaque(Nfs4.NFS4_OPAQUE_LIMIT);
        int flags = r.readInt();
        int how = r.readInt();
        if (how == 1) { // SP4_MACH_CRED: state_protect_ops4, two bitmaps (we answer SP4_NONE-less: NOTSUPP)
            bitmap(r);
            bitmap(r);
        } else if (how != Nfs4.SP4_NONE) {
            return new ExchangeId(verifier, owner, flags, how); // SP4_SSV: refused before its body matters
        }
        if (r.readArrayLength(1, 16) == 1) { // nfs_impl_id4
            r.readString(Nfs4.NFS4_OPAQUE_LIMIT);
            r.readString(Nfs4.NFS4_OPAQUE_LIMIT);
            r.readLong();
            r.readInt();
        }
        return new ExchangeId(verifier, owner, flags, how);
    }

    private static CreateSession createSession(XdrReader r) throws XdrException {
        long clientId = r.readLong();
        int seq = r.readInt();
        int flags = r.readInt();
        ChannelAttrs fore = ChannelAttrs.decode(r);
        ChannelAttrs back = ChannelAttrs.decode(r);
        int program = r.readInt();
        int n = r.readArrayLength(16, 4);
        for (int i = 0; i < n; i++) { // callback_sec_parms4: we call back with AUTH_NONE, which every client takes
            switch (r.readInt()) {
                case 0 -> { }
                case 1 -> { // authsys_parms
                    r.readInt();
                    r.readString(255);
                    r.readInt();
                    r.readInt();
                    int g = r.readArrayLength(16, 4);
                    r.skip(4L * g);
                }
                case 6 -> { // gss_cb_handles4
                    r.readInt();
                    r.readOpaque(Nfs4.NFS4_OPAQUE_LIMIT);
                    r.readOpaque(Nfs4.NFS4_OPAQUE_LIMIT);
                }
                default -> throw new XdrException("callback_sec_parms4 flavor unknown");
            }
        }
        return new CreateSession(clientId, seq, flags, fore, back, program);
    }

    private static Create create(XdrReader r) throws XdrException {
        int type = r.readInt();
        String link = null;
        if (type == 5) { // NF4LNK: linktext4
            link = r.readString(4096);
        } else if (type == 3 || type == 4) { // NF4BLK, NF4CHR: specdata4
            r.readInt();
            r.readInt();
        }
        return new Create(type, link, name(r), NewAttrs.Raw.decode(r));
    }

    private static Open open(XdrReader r) throws XdrException {
        int seqid = r.readInt();
        int access = r.readInt();
        int deny = r.readInt();
        long clientId = r.readLong();
        byte[] owner = r.readOpaque(Nfs4.NFS4_OPAQUE_LIMIT);
        int createMode = -1;
        NewAttrs.Raw attrs = NewAttrs.Raw.EMPTY;
        byte[] verifier = null;
        if (r.readInt() == 1) { // OPEN4_CREATE: createhow4
            createMode = r.readInt();
            switch (createMode) {
                case 0, 1 -> attrs = NewAttrs.Raw.decode(r); // UNCHECKED4, GUARDED4
                case 2 -> verifier = r.readFixedOpaque(Nfs4.NFS4_VERIFIER_SIZE); // EXCLUSIVE4
                case 3 -> { // EXCLUSIVE4_1
                    verifier = r.readFixedOpaque(Nfs4.NFS4_VERIFIER_SIZE);
                    attrs = NewAttrs.Raw.decode(r);
                }
                default -> throw new XdrException("createmode4 " + createMode);
            }
        }
        int claim = r.readInt();
        String name = null;
        switch (claim) {
            case 0, 3 -> name = name(r); // CLAIM_NULL, CLAIM_DELEGATE_PREV
            case 1 -> r.readInt(); // CLAIM_PREVIOUS: open_delegation_type4
            case 2 -> { // CLAIM_DELEGATE_CUR
                stateid(r);
                name = name(r);
            }
            case 4, 5 -> { } // CLAIM_FH, CLAIM_DELEG_PREV_FH
            case 6 -> stateid(r); // CLAIM_DELEG_CUR_FH
            default -> throw new XdrException("open_claim_type4 " + claim);
        }
        return new Open(seqid, access, deny, clientId, owner, createMode, attrs, verifier, claim, name);
    }
}
