package org.rpcrdma.nfs4;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.rpcrdma.oncrpc.RpcDispatcher;
import org.rpcrdma.oncrpc.RpcProcedure;
import org.rpcrdma.oncrpc.RpcServerCall;
import org.rpcrdma.oncrpc.XdrCodec;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.xdr.XdrException;
import org.rpcrdma.xdr.XdrReader;

/**
 * A scripted NFSv4.1 server for host tests: decodes each COMPOUND's operations by hand
 * from RFC 5662 (not with the client's codecs), checks SEQUENCE's slot rules as a server
 * must (RFC 8881 §2.10.6.1), answers with bytes built by {@link XdrBytes}, and can send a
 * CB_RECALL on the client's back channel. One client, one session, one file.
 */
final class FakeNfsd {
    static final long CLIENT_ID = 0x1122_3344_5566_7788L;
    static final byte[] SESSION = XdrBytes.seq(16, 0xc0);
    static final byte[] FH = XdrBytes.seq(24, 0x11);
    static final byte[] OPEN_OTHER = XdrBytes.seq(12, 0x21);
    static final byte[] DELEG_OTHER = XdrBytes.seq(12, 0x41);
    static final int SLOTS = 2;

    final RpcDispatcher dispatcher = new RpcDispatcher();
    final List<String> ops = new ArrayList<>(); // every operation received, by name, in order
    final int[] lastSeq = new int[SLOTS];
    final CompletableFuture<Stateid> delegReturned = new CompletableFuture<>();
    final AtomicInteger graceAnswers = new AtomicInteger();
    volatile boolean bindBackChannel = true;
    volatile Connection connection;
    volatile int misordered;
    volatile int replays;
    /** SEQUENCE answers SEQ4_STATUS_CB_PATH_DOWN until a BIND_CONN_TO_SESSION names a back channel. */
    volatile boolean pathDown;
    /** Each BIND_CONN_TO_SESSION's csa_dir, in order. */
    final List<Integer> binds = new java.util.concurrent.CopyOnWriteArrayList<>();
    final CompletableFuture<Integer> firstBind = new CompletableFuture<>();
    /** Whether a BIND_CONN_TO_SESSION for the back channel clears {@link #pathDown} (nfsd's once its probe succeeds). */
    volatile boolean bindClearsPathDown = true;
    /** The next COMPOUND: answered at once, or held unanswered (executed first, or not at all) until {@link #answerHeld}. */
    volatile Hold hold = Hold.NONE;
    private RpcServerCall<byte[]> held;
    private byte[] heldAnswer;

    enum Hold { NONE, EXECUTE_THEN_HOLD, HOLD_UNEXECUTED }

    FakeNfsd() {
        dispatcher.program(Nfs4.PROGRAM, Nfs4.VERSION).procedure(new RpcProcedure<>(1,
                XdrCodec.of((w, v) -> { }, FakeNfsd::readCompound), XdrCodec.<byte[]>of((w, b) -> w.writeFixedOpaque(b),
                        r -> null)), (req, call) -> {
                            connection = call.connection();
                            Hold h = hold;
                            if (h == Hold.NONE) {
                                call.reply(answer(req));
                                return;
                            }
                            hold = Hold.NONE;
                            synchronized (this) {
                                held = call;
                                heldAnswer = h == Hold.EXECUTE_THEN_HOLD ? answer(req) : null;
                            }
                        });
    }

    /**
     * Answers the held COMPOUND now (late: its caller has given up): with the answer it
     * executed, or SYSTEM_ERR for one never executed.
     */
    synchronized void answerHeld() {
        if (heldAnswer != null) {
            held.reply(heldAnswer);
        } else {
            held.replySystemErr();
        }
        held = null;
    }

    /** The decoded operations of a COMPOUND: code, then its arguments as read. */
    record Req(List<Object[]> ops) {}

    static Req readCompound(XdrReader r) throws XdrException {
        r.readOpaque(1024); // tag
        if (r.readInt() != 1) {
            throw new XdrException("minorversion");
        }
        int n = r.readArrayLength(16, 4);
        List<Object[]> ops = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int op = r.readInt();
            ops.add(switch (op) {
                case 42 -> new Object[] {op, r.readFixedOpaque(8), r.readOpaque(1024), r.readInt(), r.readInt(),
                    r.readInt()};
                case 43 -> {
                    Object[] a = {op, r.readLong(), r.readInt(), r.readInt(), attrs(r), attrs(r), r.readInt(), 0};
                    int sec = r.readArrayLength(4, 4);
                    for (int k = 0; k < sec; k++) {
                        if (r.readInt() == 1) { // authsys_parms
                            r.readInt();
                            r.readOpaque(255);
                            r.readInt();
                            r.readInt();
                            r.skip(4L * r.readArrayLength(16, 4));
                            a[7] = 1;
                        }
                    }
                    yield a;
                }
                case 53 -> new Object[] {op, r.readFixedOpaque(16), r.readInt(), r.readInt(), r.readInt(),
                    r.readBoolean()};
                case 58 -> new Object[] {op, r.readBoolean()};
                case 41 -> new Object[] {op, r.readFixedOpaque(16), r.readInt(), r.readBoolean()};
                case 24, 10 -> new Object[] {op};
                case 22 -> new Object[] {op, r.readOpaque(128)};
                case 18 -> new Object[] {op, r.readInt(), r.readInt(), r.readInt(), r.readLong(), r.readOpaque(1024),
                    r.readInt(), r.readInt(), new String(r.readOpaque(1024))};
                case 9 -> new Object[] {op, r.readArrayLength(8, 4) > 0 ? r.readInt() : 0};
                case 8 -> new Object[] {op, new Stateid(r.readInt(), r.readFixedOpaque(12))};
                case 4 -> new Object[] {op, r.readInt(), new Stateid(r.readInt(), r.readFixedOpaque(12))};
                case 44 -> new Object[] {op, r.readFixedOpaque(16)};
                case 57 -> new Object[] {op, r.readLong()};
                default -> throw new XdrException("operation " + op + " not scripted");
            });
        }
        return new Req(ops);
    }

    private static int[] attrs(XdrReader r) throws XdrException {
        int[] a = {r.readInt(), r.readInt(), r.readInt(), r.readInt(), r.readInt(), r.readInt()};
        r.skip(4L * r.readArrayLength(1, 4));
        return a;
    }

    /** COMPOUND4res for {@code req}: each op answered until one fails. */
    synchronized byte[] answer(Req req) {
        XdrBytes body = new XdrBytes();
        int status = 0;
        int count = 0;
        for (Object[] a : req.ops()) {
            int op = (int) a[0];
            ops.add(name(op));
            count++;
            XdrBytes res = new XdrBytes();
            int st = 0;
            switch (op) {
                case 42 -> res.u64(CLIENT_ID).u32(1, 0x00010000, 0).u64(1).str("fake").str("scope").u32(0);
                case 43 -> {
                    int flags = bindBackChannel ? (int) a[3] & Nfs4.CREATE_SESSION4_FLAG_CONN_BACK_CHAN : 0;
                    int[] fore = (int[]) a[4];
                    int[] back = (int[]) a[5];
                    res.fixed(SESSION).u32((int) a[2], flags).u32(0, fore[1], fore[2], fore[3], fore[4], SLOTS, 0)
                            .u32(0, back[1], back[2], 0, back[4], back[5], 0);
                    if (flags != 0 && (int) a[6] == Nfs4.CB_PROGRAM && (int) a[7] == 1) {
                        connection.markBackchannelReady();
                    }
                }
                case 53 -> {
                    int seq = (int) a[2];
                    int slot = (int) a[3];
                    if (slot >= SLOTS) {
                        st = Nfs4.NFS4ERR_BADSLOT;
                    } else if (seq == lastSeq[slot]) { // a retry of the last request; nothing cached (RFC 8881 §2.10.6.1.3)
                        replays++;
                        st = Nfs4.NFS4ERR_RETRY_UNCACHED_REP;
                    } else if (seq != lastSeq[slot] + 1) {
                        misordered++;
                        st = Nfs4.NFS4ERR_SEQ_MISORDERED;
                    } else {
                        lastSeq[slot] = seq;
                        res.fixed(SESSION).u32(seq, slot, SLOTS - 1, SLOTS - 1,
                                pathDown ? Nfs4.SEQ4_STATUS_CB_PATH_DOWN : 0);
                    }
                }
                case 18 -> {
                    if (graceAnswers.getAndDecrement() > 0) {
                        st = Nfs4.NFS4ERR_GRACE;
                    } else {
                        res.u32(1).fixed(OPEN_OTHER).u32(1).u64(1).u64(2).u32(4).u32(0)
                                .u32(Nfs4.OPEN_DELEGATE_READ).u32(1).fixed(DELEG_OTHER).u32(0).u32(0, 0, 0).str("");
                    }
                }
                case 41 -> { // BIND_CONN_TO_SESSION: alone, no SEQUENCE (RFC 8881 §18.34)
                    int dir = (int) a[2];
                    if (!java.util.Arrays.equals(SESSION, (byte[]) a[1])) {
                        st = Nfs4.NFS4ERR_BADSESSION;
                    } else if (req.ops().size() != 1) {
                        st = 10081; // NFS4ERR_NOT_ONLY_OP
                    } else {
                        binds.add(dir);
                        firstBind.complete(dir);
                        boolean back = (dir & Nfs4.CDFC4_BACK) != 0;
                        res.fixed(SESSION).u32(back ? Nfs4.CDFS4_BOTH : Nfs4.CDFS4_FORE).u32((boolean) a[3] ? 1 : 0);
                        if (back && bindClearsPathDown) {
                            pathDown = false;
                        }
                    }
                }
                case 10 -> res.opaque(FH);
                case 9 -> res.u32(1, 1 << 4).opaque(new XdrBytes().u64(6).bytes());
                case 8 -> delegReturned.complete((Stateid) a[1]);
                case 4 -> res.u32(2).fixed(OPEN_OTHER);
                default -> { }
            }
            body.u32(op, st).fixed(res.bytes());
            if (st != 0) {
                status = st;
                break;
            }
        }
        return new XdrBytes().u32(status).str("").u32(count).fixed(body.bytes()).bytes();
    }

    /** CB_COMPOUND {CB_SEQUENCE slot 0, CB_RECALL of the delegation}, as an RPC call with {@code xid}. */
    static byte[] recallCall(int xid, int cbSeq) {
        return new XdrBytes().u32(xid, 0, 2, Nfs4.CB_PROGRAM, 1, 1).u32(0, 0, 0, 0) // AUTH_NONE cred and verifier
                .str("").u32(1, 0, 2)
                .u32(11).fixed(SESSION).u32(cbSeq, 0, 0, 0, 0)
                .u32(4).u32(1).fixed(DELEG_OTHER).u32(0).opaque(FH)
                .bytes();
    }

    synchronized List<String> ops() {
        return List.copyOf(ops);
    }

    private static String name(int op) {
        return switch (op) {
            case 42 -> "EXCHANGE_ID";
            case 43 -> "CREATE_SESSION";
            case 53 -> "SEQUENCE";
            case 58 -> "RECLAIM_COMPLETE";
            case 41 -> "BIND_CONN_TO_SESSION";
            case 24 -> "PUTROOTFH";
            case 22 -> "PUTFH";
            case 10 -> "GETFH";
            case 18 -> "OPEN";
            case 9 -> "GETATTR";
            case 8 -> "DELEGRETURN";
            case 4 -> "CLOSE";
            case 44 -> "DESTROY_SESSION";
            case 57 -> "DESTROY_CLIENTID";
            default -> "op" + op;
        };
    }
}
