package org.rpcrdma.nfs4;

import org.rpcrdma.xdr.AuthSys;
import org.rpcrdma.xdr.XdrException;
import org.rpcrdma.xdr.XdrReader;

/**
 * The operations that make and end a client ID and a session (RFC 8881 §18.35-18.37,
 * §18.46, §18.50-18.51), encoded from RFC 5662's XDR.
 */
public final class SessionOps {
    private SessionOps() {}

    /** EXCHANGE_ID4resok, with the server's owner, scope and implementation id (RFC 5662). */
    public record ExchangeIdResult(long clientId, int sequenceId, int flags, long serverMinorId,
            byte[] serverMajorId, byte[] serverScope, String implDomain, String implName) {}

    /** CREATE_SESSION4resok (RFC 5662). */
    public record SessionResult(byte[] sessionId, int sequence, int flags, ChannelAttrs fore, ChannelAttrs back) {}

    /** SEQUENCE4resok (RFC 5662); {@code statusFlags} are SEQ4_STATUS_* bits. */
    public record SequenceResult(byte[] sessionId, int sequenceId, int slotId, int highestSlotId,
            int targetHighestSlotId, int statusFlags) {}

    /** BIND_CONN_TO_SESSION4resok (RFC 5662): the session and the channels the connection now serves (CDFS4_*). */
    public record BindResult(byte[] sessionId, int dir, boolean rdmaMode) {
        public boolean backChannel() {
            return (dir & Nfs4.CDFS4_BACK) != 0;
        }
    }

    /**
     * EXCHANGE_ID: {@code client_owner4 {verifier4 co_verifier; opaque co_ownerid<>}},
     * eia_flags 0, SP4_NONE state protection, no implementation id.
     */
    public static Op<ExchangeIdResult> exchangeId(byte[] verifier, byte[] ownerId) {
        if (verifier.length != Nfs4.NFS4_VERIFIER_SIZE || ownerId.length > Nfs4.NFS4_OPAQUE_LIMIT) {
            throw new IllegalArgumentException("verifier4 is 8 bytes and co_ownerid at most 1024");
        }
        byte[] v = verifier.clone();
        byte[] o = ownerId.clone();
        return new Op<>(Nfs4.OP_EXCHANGE_ID, "EXCHANGE_ID", (w, x) -> w.writeFixedOpaque(v).writeOpaque(o)
                .writeInt(0).writeInt(Nfs4.SP4_NONE).writeInt(0), SessionOps::exchangeIdResult);
    }

    private static ExchangeIdResult exchangeIdResult(XdrReader r) throws XdrException {
        long clientId = r.readLong();
        int seq = r.readInt();
        int flags = r.readInt();
        int how = r.readInt();
        if (how != Nfs4.SP4_NONE) { // we asked for SP4_NONE (RFC 8881 §18.35.3: the server must answer it)
            throw new XdrException("EXCHANGE_ID answered state protection " + how + " to SP4_NONE");
        }
        long minor = r.readLong();
        byte[] major = r.readOpaque(Nfs4.NFS4_OPAQUE_LIMIT);
        byte[] scope = r.readOpaque(Nfs4.NFS4_OPAQUE_LIMIT);
        String domain = "";
        String name = "";
        if (r.readArrayLength(1, 20) == 1) { // nfs_impl_id4: two strings and an nfstime4
            domain = r.readString(Nfs4.NFS4_OPAQUE_LIMIT);
            name = r.readString(Nfs4.NFS4_OPAQUE_LIMIT);
            r.readLong(); // nii_date.seconds
            r.readInt(); // nii_date.nseconds
        }
        return new ExchangeIdResult(clientId, seq, flags, minor, major, scope, domain, name);
    }

    /**
     * CREATE_SESSION with a back channel on this connection when {@code flags} has
     * CREATE_SESSION4_FLAG_CONN_BACK_CHAN: program {@code cbProgram}, one AUTH_SYS
     * callback_sec_parms4 ({@code cbSec}), or AUTH_NONE when null.
     */
    public static Op<SessionResult> createSession(long clientId, int sequence, int flags, ChannelAttrs fore,
            ChannelAttrs back, int cbProgram, AuthSys cbSec) {
        return new Op<>(Nfs4.OP_CREATE_SESSION, "CREATE_SESSION", (w, x) -> {
            w.writeLong(clientId).writeInt(sequence).writeInt(flags);
            fore.encode(w);
            back.encode(w);
            w.writeInt(cbProgram);
            w.writeInt(1); // csa_sec_parms<>: one entry
            if (cbSec == null) {
                w.writeInt(0); // AUTH_NONE: void
            } else { // AUTH_SYS: authsys_parms (RFC 5531 Appendix A)
                w.writeInt(1).writeInt(cbSec.stamp()).writeString(cbSec.machineName()).writeInt(cbSec.uid())
                        .writeInt(cbSec.gid());
                int[] gids = cbSec.gids();
                w.writeInt(gids.length);
                for (int g : gids) {
                    w.writeInt(g);
                }
            }
        }, r -> new SessionResult(r.readFixedOpaque(Nfs4.NFS4_SESSIONID_SIZE), r.readInt(), r.readInt(),
                ChannelAttrs.decode(r), ChannelAttrs.decode(r)));
    }

    /** SEQUENCE (RFC 8881 §18.46): the first operation of every COMPOUND in a session. */
    public static Op<SequenceResult> sequence(byte[] sessionId, int sequenceId, int slotId, int highestSlotId,
            boolean cacheThis) {
        byte[] s = checkSession(sessionId);
        return new Op<>(Nfs4.OP_SEQUENCE, "SEQUENCE", (w, x) -> w.writeFixedOpaque(s).writeInt(sequenceId)
                .writeInt(slotId).writeInt(highestSlotId).writeBoolean(cacheThis),
                r -> new SequenceResult(r.readFixedOpaque(Nfs4.NFS4_SESSIONID_SIZE), r.readInt(), r.readInt(),
                        r.readInt(), r.readInt(), r.readInt()));
    }

    /**
     * BIND_CONN_TO_SESSION (RFC 8881 §18.34): associates the connection it is sent on with
     * the session, for {@code dir} (CDFC4_*). Alone in its COMPOUND, without SEQUENCE.
     * {@code bctsa_use_conn_in_rdma_mode} is false: it is for a connection that starts in
     * TCP mode and moves to RDMA (RFC 8881 §2.10.5.1), and ours is RDMA from the start.
     */
    public static Op<BindResult> bindConnToSession(byte[] sessionId, int dir) {
        byte[] s = checkSession(sessionId);
        return new Op<>(Nfs4.OP_BIND_CONN_TO_SESSION, "BIND_CONN_TO_SESSION", (w, x) -> w.writeFixedOpaque(s)
                .writeInt(dir).writeBoolean(false), r -> new BindResult(r.readFixedOpaque(Nfs4.NFS4_SESSIONID_SIZE),
                        r.readInt(), r.readBoolean()));
    }

    /** RECLAIM_COMPLETE (RFC 8881 §18.51): nothing to reclaim, so OPEN may follow. */
    public static Op<Void> reclaimComplete(boolean oneFs) {
        return new Op<>(Nfs4.OP_RECLAIM_COMPLETE, "RECLAIM_COMPLETE", (w, x) -> w.writeBoolean(oneFs), r -> null);
    }

    /** DESTROY_SESSION (RFC 8881 §18.37). */
    public static Op<Void> destroySession(byte[] sessionId) {
        byte[] s = checkSession(sessionId);
        return new Op<>(Nfs4.OP_DESTROY_SESSION, "DESTROY_SESSION", (w, x) -> w.writeFixedOpaque(s), r -> null);
    }

    /** DESTROY_CLIENTID (RFC 8881 §18.50). */
    public static Op<Void> destroyClientId(long clientId) {
        return new Op<>(Nfs4.OP_DESTROY_CLIENTID, "DESTROY_CLIENTID", (w, x) -> w.writeLong(clientId), r -> null);
    }

    private static byte[] checkSession(byte[] sessionId) {
        if (sessionId.length != Nfs4.NFS4_SESSIONID_SIZE) {
            throw new IllegalArgumentException("sessionid4 is 16 bytes, given " + sessionId.length);
        }
        return sessionId.clone();
    }
}
