package org.rpcrdma.nfs4;

import java.util.ArrayList;
import java.util.List;
import org.rpcrdma.oncrpc.RpcProcedure;
import org.rpcrdma.oncrpc.XdrCodec;
import org.rpcrdma.xdr.XdrException;
import org.rpcrdma.xdr.XdrReader;
import org.rpcrdma.xdr.XdrWriter;

/**
 * The XDR of CB_COMPOUND (RFC 5662, RFC 8881 §20.2): the arguments a server sends on the
 * back channel, decoded with every length bounded, and the results we answer.
 *
 * <p>Arguments: {@code utf8str_cs tag; uint32_t minorversion; uint32_t callback_ident;
 * nfs_cb_argop4 argarray<>;}. Only CB_SEQUENCE and CB_RECALL are decoded; at the first
 * other operation decoding stops and records its code ({@link Args#stoppedAt}), because
 * processing stops at that operation anyway (it is answered NFS4ERR_NOTSUPP, or
 * CB_ILLEGAL / NFS4ERR_OP_ILLEGAL for a code outside the protocol, §20.2.3 and §20.14)
 * and nothing after it is needed.
 */
public final class CbCompound {
    private CbCompound() {}

    /** CB_SEQUENCE4args (RFC 5662); the referring call lists are counted, not kept. */
    public record SequenceArgs(byte[] sessionId, int sequenceId, int slotId, int highestSlotId, boolean cacheThis,
            int referringCalls) {}

    /** CB_RECALL4args (RFC 5662). */
    public record RecallArgs(Stateid stateid, boolean truncate, byte[] fh) {}

    /**
     * Decoded CB_COMPOUND4args: {@code ops} holds {@link SequenceArgs} and
     * {@link RecallArgs}; {@code stoppedAt} is the code of the first operation not
     * decoded, or -1 if all were.
     */
    public record Args(String tag, int minorVersion, int callbackIdent, List<Object> ops, int stoppedAt) {}

    /** One nfs_cb_resop4: the operation's code and status, and for a successful CB_SEQUENCE its resok. */
    public record OpResult(int op, int status, SequenceResult sequence) {
        static OpResult of(int op, int status) {
            return new OpResult(op, status, null);
        }
    }

    /** CB_SEQUENCE4resok (RFC 5662). */
    public record SequenceResult(byte[] sessionId, int sequenceId, int slotId, int highestSlotId,
            int targetHighestSlotId) {}

    /** CB_COMPOUND4res: status, tag, results. */
    public record Result(int status, String tag, List<OpResult> results) {}

    static final XdrCodec<Args> ARGS = XdrCodec.of((w, a) -> {
        throw new UnsupportedOperationException("the client does not send CB_COMPOUND");
    }, CbCompound::decodeArgs);

    static final XdrCodec<Result> RESULT = XdrCodec.of(CbCompound::encodeResult, r -> {
        throw new XdrException("the client does not decode CB_COMPOUND results");
    });

    /** CB_COMPOUND: procedure 1 of the callback program. */
    static final RpcProcedure<Args, Result> PROCEDURE = new RpcProcedure<>(Nfs4.CB_PROC_COMPOUND, ARGS, RESULT);

    static Args decodeArgs(XdrReader r) throws XdrException {
        String tag = r.readString(Nfs4.MAX_TAG);
        int minor = r.readInt();
        int ident = r.readInt();
        int n = r.readArrayLength(Nfs4.MAX_CB_OPS, 4);
        List<Object> ops = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int op = r.readInt();
            switch (op) {
                case Nfs4.OP_CB_SEQUENCE -> ops.add(sequence(r));
                case Nfs4.OP_CB_RECALL -> ops.add(new RecallArgs(Stateid.decode(r), r.readBoolean(),
                        r.readOpaque(Nfs4.NFS4_FHSIZE)));
                default -> {
                    return new Args(tag, minor, ident, ops, op);
                }
            }
        }
        return new Args(tag, minor, ident, ops, -1);
    }

    private static SequenceArgs sequence(XdrReader r) throws XdrException {
        byte[] session = r.readFixedOpaque(Nfs4.NFS4_SESSIONID_SIZE);
        int seq = r.readInt();
        int slot = r.readInt();
        int highest = r.readInt();
        boolean cache = r.readBoolean();
        int lists = r.readArrayLength(Nfs4.MAX_REFERRING, Nfs4.NFS4_SESSIONID_SIZE + 4);
        int calls = 0;
        for (int i = 0; i < lists; i++) { // referring_call_list4 { sessionid4; referring_call4 <> }
            r.readFixedOpaque(Nfs4.NFS4_SESSIONID_SIZE);
            int k = r.readArrayLength(Nfs4.MAX_REFERRING, 8);
            r.skip(8L * k); // referring_call4 { sequenceid4; slotid4; }
            calls += k;
        }
        return new SequenceArgs(session, seq, slot, highest, cache, calls);
    }

    static void encodeResult(XdrWriter w, Result res) {
        w.writeInt(res.status());
        w.writeString(res.tag());
        w.writeInt(res.results().size());
        for (OpResult o : res.results()) {
            w.writeInt(o.op()).writeInt(o.status());
            if (o.sequence() != null) {
                SequenceResult s = o.sequence();
                w.writeFixedOpaque(s.sessionId()).writeInt(s.sequenceId()).writeInt(s.slotId())
                        .writeInt(s.highestSlotId()).writeInt(s.targetHighestSlotId());
            }
        }
    }
}
