package org.rpcrdma.nfs4.server;

import java.nio.charset.StandardCharsets;
import org.rpcrdma.nfs4.ChannelAttrs;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.nfs4.server.CompoundCodec.OpResult;
import org.rpcrdma.transport.wire.RpcRdma;

/**
 * EXCHANGE_ID, CREATE_SESSION, SEQUENCE, BIND_CONN_TO_SESSION, DESTROY_SESSION and
 * DESTROY_CLIENTID (RFC 8881 §18.35-18.37, §18.46, §18.50, §18.34).
 */
final class SessionHandlers {
    /** Fore channel slots we give a session at most. */
    static final int MAX_SLOTS = 64;
    private static final byte[] OWNER = "panama-rpcrdma".getBytes(StandardCharsets.UTF_8);

    private final ClientTable clients;
    private final int inlineThreshold;
    private final BackChannelProbe probe;

    SessionHandlers(ClientTable clients, int inlineThreshold, BackChannelProbe probe) {
        this.clients = clients;
        this.inlineThreshold = inlineThreshold;
        this.probe = probe;
    }

    OpResult exchangeId(OpArgs.ExchangeId a) {
        if (a.protect() != Nfs4.SP4_NONE) {
            return OpResult.error(Nfs4.OP_EXCHANGE_ID, Nfs4.NFS4ERR_NOTSUPP); // only SP4_NONE (§18.35.3)
        }
        ClientTable.Exchanged x = clients.exchangeId(a.owner(), a.verifier(), System.nanoTime());
        int flags = Nfs4.EXCHGID4_FLAG_USE_NON_PNFS | (x.confirmed() ? Nfs4.EXCHGID4_FLAG_CONFIRMED_R : 0);
        return OpResult.ok(Nfs4.OP_EXCHANGE_ID, (w, v) -> {
            w.writeLong(x.clientId()).writeInt(x.sequence()).writeInt(flags).writeInt(Nfs4.SP4_NONE);
            w.writeLong(0).writeOpaque(OWNER); // server_owner4: one server, no trunking
            w.writeOpaque(OWNER); // eir_server_scope
            w.writeInt(1).writeString("rpcrdma.org").writeString("panama-rpcrdma NFSv4.1 server")
                    .writeLong(0).writeInt(0);
        });
    }

    /**
     * CREATE_SESSION (§18.36): the fore channel's limits are the client's, lowered to ours;
     * the back channel's are the client's, with requests no larger than our inline
     * threshold (a callback travels inline, RFC 8167 §5); the back channel is this
     * connection when the client asks for it (CONN_BACK_CHAN).
     */
    OpResult createSession(OpArgs.CreateSession a, CompoundState st) {
        ChannelAttrs f = a.fore();
        ChannelAttrs fore = new ChannelAttrs(0, Math.min(f.maxRequestSize(), OpArgs.MAX_IO + 64 * 1024),
                Math.min(f.maxResponseSize(), OpArgs.MAX_IO + 64 * 1024), Math.min(f.maxResponseSizeCached(), 64 * 1024),
                Math.min(f.maxOperations(), CompoundCodec.MAX_OPS), Math.max(1, Math.min(f.maxRequests(), MAX_SLOTS)), -1);
        ChannelAttrs b = a.back();
        // RFC 8167 §5.3: a callback goes inline (RDMA_MSG), behind the transport header
        int inlineCall = inlineThreshold - RpcRdma.INLINE_MSG_HEADER_BYTES;
        ChannelAttrs back = new ChannelAttrs(0, Math.min(b.maxRequestSize(), inlineCall), b.maxResponseSize(),
                b.maxResponseSizeCached(), b.maxOperations(), b.maxRequests(), -1);
        Session s = clients.createSession(a.clientId(), a.sequence(), fore, back, a.cbProgram(), System.nanoTime());
        boolean backChan = (a.flags() & Nfs4.CREATE_SESSION4_FLAG_CONN_BACK_CHAN) != 0;
        if (backChan && s.backChannel() == null) {
            s.bindBackChannel(st.connection);
            probe.probe(s);
        }
        int flags = backChan ? Nfs4.CREATE_SESSION4_FLAG_CONN_BACK_CHAN : 0;
        int seq = a.sequence();
        return OpResult.ok(Nfs4.OP_CREATE_SESSION, (w, v) -> {
            w.writeFixedOpaque(s.id).writeInt(seq).writeInt(flags);
            s.fore.encode(w);
            s.back.encode(w);
        });
    }

    OpResult destroySession(OpArgs.DestroySession a) {
        clients.destroySession(a.sessionId());
        return OpResult.ok(Nfs4.OP_DESTROY_SESSION, null);
    }

    OpResult destroyClientId(OpArgs.DestroyClientId a) {
        clients.destroyClient(a.clientId());
        return OpResult.ok(Nfs4.OP_DESTROY_CLIENTID, null);
    }

    /** BIND_CONN_TO_SESSION (§18.34): a connection for the back channel becomes the session's. */
    OpResult bindConn(OpArgs.BindConn a, CompoundState st) {
        Session s = clients.session(a.sessionId());
        int dir = switch (a.dir()) {
            case 1 -> Nfs4.CDFS4_FORE;
            case 2 -> Nfs4.CDFS4_BACK;
            case 3, 7 -> Nfs4.CDFS4_BOTH;
            default -> throw new NfsError(Nfs4.NFS4ERR_INVAL, "channel_dir_from_client4 " + a.dir());
        };
        if ((dir & Nfs4.CDFS4_BACK) != 0) {
            s.bindBackChannel(st.connection);
            probe.probe(s);
        }
        byte[] id = s.id;
        return OpResult.ok(Nfs4.OP_BIND_CONN_TO_SESSION, (w, v) -> w.writeFixedOpaque(id).writeInt(dir).writeBoolean(false));
    }

    /** SEQUENCE's admission through the slot's reply cache (§2.10.6.1); on RUN the state knows its session and slot. */
    ReplyCache.Admission sequence(OpArgs.Sequence a, CompoundState st) {
        Session s;
        try {
            s = clients.session(a.sessionId());
        } catch (NfsError e) {
            return new ReplyCache.Admission(e.status, null);
        }
        ReplyCache.Admission adm = s.slots.admit(a.slotId(), a.sequenceId());
        if (adm == ReplyCache.Admission.RUN) {
            st.session = s;
            st.slot = a.slotId();
            st.cacheThis = a.cacheThis();
        }
        return adm;
    }

    OpResult sequenceResult(OpArgs.Sequence a, CompoundState st) {
        Session s = st.session;
        int highest = s.slots.highestSlotId();
        int flags = s.backChannel() != null && !s.callbackPathUp() && probe.probed(s) ? Nfs4.SEQ4_STATUS_CB_PATH_DOWN : 0;
        return OpResult.ok(Nfs4.OP_SEQUENCE, (w, v) -> w.writeFixedOpaque(s.id).writeInt(a.sequenceId())
                .writeInt(a.slotId()).writeInt(highest).writeInt(highest).writeInt(flags));
    }
}
