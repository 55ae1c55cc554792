package org.rpcrdma.transport;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.rpcrdma.transport.ConformancePlayer.LinkKind;
import org.rpcrdma.transport.wire.ConnectPrivate;
import org.rpcrdma.transport.wire.ConnectSettings;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaDecoder;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * RPC-over-RDMA Version 1 rules as the texts state them (RFC 8166 §3-5 as the
 * implementation-experience draft reads it, RFC 8167 §2-6, RFC 8797 §3-5), each with a
 * case built as raw bytes and the outcome the text requires. Encoded from the texts, not
 * from what the code does: where the code differs, {@link #DIVERGENCES} says so by name
 * and why. {@link ConformancePlayer} plays the table over a link.
 *
 * <p>Outcome vocabulary. What our endpoint sent back, per message: {@code RDMA_MSG reply
 * <accept_stat> <n>B}, {@code RDMA_NOMSG reply chunk <n>B}, {@code write[<bytes>,...]},
 * {@code RDMA_ERROR ERR_VERS <low>..<high>}, {@code RDMA_ERROR ERR_CHUNK}; several joined
 * by {@code "; "}, none {@code no reply}, a lost connection {@code connection closed}.
 * How a call of ours ended: {@code delivered <n>B}, {@code dropped} (the hostile message
 * was ignored and the proper reply that followed delivered), {@code fails <Exception>}.
 * A required outcome may list alternatives the text allows, separated by {@code " | "}.
 */
final class ConformanceTable {
    private ConformanceTable() {}

    /** Which of our endpoints a rule plays against; NONE: the connection settings, no connection. */
    enum Side { SERVER, CLIENT, NONE }

    @FunctionalInterface
    interface Case {
        String play(Ctx x) throws Exception;
    }

    record Rule(String id, String ref, String rule, Side side, String required, Case play) {}

    /** A known divergence: the rule, the links it shows on, and why. */
    record Divergence(String id, Set<LinkKind> links, String reason) {}

    private static final Set<LinkKind> BOTH = Set.of(LinkKind.MEMORY, LinkKind.VERBS);

    /** Divergences from the texts known today, each with its reason. */
    static final List<Divergence> DIVERGENCES = List.of();

    static Divergence divergence(String id, LinkKind link) {
        for (Divergence d : DIVERGENCES) {
            if (d.id().equals(id) && d.links().contains(link)) {
                return d;
            }
        }
        return null;
    }

    static boolean matches(String required, String observed) {
        for (String alt : required.split(" \\| ")) {
            if (alt.equals(observed)) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ the bytes

    /** Program number of the calls the table makes; the handler serves it. */
    static final int PROG = 0x20000099;
    static final int P_NULL = 0;
    static final int P_ECHO = 1;
    /** Results of {@code first argument word} bytes of {@link #pattern}. */
    static final int P_SIZED = 2;
    /** A DDP-eligible result of {@code first argument word} bytes, placed in the write chunk. */
    static final int P_DDP = 3;
    /** Held: answered (echo) when the case ends. */
    static final int P_HOLD = 4;
    /** Results: the argument length and {@link Arrays#hashCode(byte[])} of the arguments (a long call's check). */
    static final int P_SUM = 5;
    /** Results a raw server sends as "the proper reply": tells a dropped hostile message from a used one. */
    static final byte[] PROPER = {'P', 'R', 'O', 'P'};

    private static final AtomicInteger XIDS = new AtomicInteger(0x7C0F0000);

    static byte[] pattern(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 7 + 1);
        }
        return b;
    }

    /** XDR words and bytes, built by hand: the cases encode from the text, not through our encoder. */
    static final class M {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        static M hdr(int xid, int vers, int credit, int proc) {
            return new M().w(xid, vers, credit, proc);
        }

        M w(int... words) {
            for (int v : words) {
                out.write(v >>> 24);
                out.write(v >>> 16);
                out.write(v >>> 8);
                out.write(v);
            }
            return this;
        }

        M seg(int handle, int length, long offset) {
            return w(handle, length, (int) (offset >>> 32), (int) offset);
        }

        /** One read segment (a read list entry follows a 1). */
        M read(int position, int handle, int length, long offset) {
            return w(1, position).seg(handle, length, offset);
        }

        M bytes(byte[] b) {
            out.writeBytes(b);
            return this;
        }

        byte[] b() {
            return out.toByteArray();
        }
    }

    static byte[] word(int v) {
        return new M().w(v).b();
    }

    static byte[] cat(byte[]... parts) {
        M m = new M();
        for (byte[] p : parts) {
            m.bytes(p);
        }
        return m.b();
    }

    /** An RPC CALL of {@link #PROG} version 1, AUTH_NONE, from its XID on. */
    static byte[] call(int xid, int proc, byte[] args) {
        return new M().w(xid, OncRpc.CALL, 2, PROG, 1, proc, 0, 0, 0, 0).bytes(args).b();
    }

    /** An accepted SUCCESS REPLY carrying {@code results}. */
    static byte[] reply(int xid, byte[] results) {
        return new M().w(xid, OncRpc.REPLY, OncRpc.MSG_ACCEPTED, 0, 0, OncRpc.SUCCESS).bytes(results).b();
    }

    /** RDMA_MSG, version 1, three empty lists, then {@code rpc}. */
    static byte[] msg(int xid, int credit, byte[] rpc) {
        return M.hdr(xid, 1, credit, RpcRdma.RDMA_MSG).w(0, 0, 0).bytes(rpc).b();
    }

    static int word(byte[] b, int i) {
        return Xdr.getInt(MemorySegment.ofArray(b), 4L * i);
    }

    /** Decodes a message our endpoint sent (observation only), or null if it does not decode. */
    static RpcRdmaHeader decode(byte[] m) {
        RpcRdmaHeader h = new RpcRdmaHeader(64, 8, 64, 64);
        try {
            RpcRdmaDecoder.decode(MemorySegment.ofArray(m), 0, m.length, h);
            return h;
        } catch (RuntimeException | org.rpcrdma.transport.wire.RpcRdmaProtocolException e) {
            return null;
        }
    }

    /** One message our endpoint sent, in the outcome vocabulary; {@code xid}: the one it should carry. */
    static String describe(byte[] m, int xid) {
        if (m.length < 16) {
            return "short message of " + m.length + "B";
        }
        String p = word(m, 0) == xid ? "" : "xid " + ConformancePlayer.hex(word(m, 0)) + " ";
        if (word(m, 1) != 1) {
            return p + "version " + word(m, 1);
        }
        int proc = word(m, 3);
        if (proc == RpcRdma.RDMA_ERROR) {
            int err = m.length >= 20 ? word(m, 4) : -1;
            if (err == RpcRdma.ERR_VERS && m.length == 28) {
                return p + "RDMA_ERROR ERR_VERS " + word(m, 5) + ".." + word(m, 6);
            }
            if (err == RpcRdma.ERR_CHUNK && m.length == 20) {
                return p + "RDMA_ERROR ERR_CHUNK";
            }
            return p + "RDMA_ERROR " + err + " of " + m.length + "B";
        }
        RpcRdmaHeader h = decode(m);
        if (h == null) {
            return p + "undecodable " + RpcRdma.procName(proc);
        }
        StringBuilder s = new StringBuilder(p);
        if (proc == RpcRdma.RDMA_NOMSG) {
            s.append("RDMA_NOMSG reply chunk ").append(h.hasReplyChunk() ? h.replyChunk().totalLength() : -1)
                    .append('B');
        } else {
            int off = h.headerLength();
            int type = m.length >= off + 8 ? word(m, off / 4 + 1) : -1;
            if (type == OncRpc.CALL) {
                s.append(RpcRdma.procName(proc)).append(" call");
            } else if (m.length >= off + 24) {
                if (word(m, off / 4) != word(m, 0)) {
                    s.append("rpc-xid≠ ");
                }
                s.append(RpcRdma.procName(proc)).append(" reply ")
                        .append(word(m, off / 4 + 5) == OncRpc.SUCCESS ? "SUCCESS" : "stat " + word(m, off / 4 + 5))
                        .append(' ').append(m.length - off - 24).append('B');
            } else {
                s.append(RpcRdma.procName(proc)).append(" of ").append(m.length - off).append("B inline");
            }
        }
        if (!h.writeList().isEmpty()) {
            s.append(" write[");
            for (int c = 0; c < h.writeList().chunkCount(); c++) {
                s.append(c == 0 ? "" : ",");
                for (int j = 0; j < h.writeList().chunkSegmentCount(c); j++) {
                    s.append(j == 0 ? "" : "+").append(h.writeList().length(c, j));
                }
            }
            s.append(']');
        }
        return s.toString();
    }

    // ------------------------------------------------------------------ the responder's handler

    /**
     * What our endpoints serve in the table: NULL, echo, sized results, a DDP result, and
     * held calls (answered when the case ends).
     */
    static final class Handler implements CallHandler {
        private final ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();

        @Override
        public void handle(IncomingCall call) {
            byte[] in = call.message().toByteArray();
            int proc = word(in, 5);
            byte[] args = Arrays.copyOfRange(in, 40, in.length);
            int first = args.length >= 4 ? word(args, 0) : 0;
            try {
                serve(call, proc, args, first);
            } catch (ReplyRefusedException e) {
                // the transport answered the requester (ERR_CHUNK): what the case observes
            }
        }

        private void serve(IncomingCall call, int proc, byte[] args, int first) {
            switch (proc) {
                case P_NULL -> call.reply(MemorySegment.ofArray(reply(call.xid(), new byte[0])));
                case P_SIZED -> call.reply(MemorySegment.ofArray(reply(call.xid(), pattern(first))));
                case P_DDP -> call.reply(MemorySegment.ofArray(reply(call.xid(), word(first))),
                        MemorySegment.ofArray(pattern(first)));
                case P_HOLD -> held.add(call);
                case P_SUM -> call.reply(MemorySegment.ofArray(reply(call.xid(), cat(word(args.length),
                        word(Arrays.hashCode(args))))));
                default -> call.reply(MemorySegment.ofArray(reply(call.xid(), args)));
            }
        }

        /** Answers every held call (echo of nothing). */
        void releaseHeld() {
            IncomingCall c;
            while ((c = held.poll()) != null) {
                try {
                    c.reply(MemorySegment.ofArray(reply(c.xid(), new byte[0])));
                } catch (RuntimeException e) {
                    // its connection is gone
                }
            }
        }
    }

    // ------------------------------------------------------------------ what a case can do

    /** A case's view of its session: the raw peer, our endpoint, and the helpers to play and observe. */
    static final class Ctx {
        final ConformancePlayer player;
        final ConformancePlayer.Session s;
        final Handler handler;
        /** Our endpoint is the server (its responder serves forward calls). */
        final boolean onServer;

        Ctx(ConformancePlayer player, ConformancePlayer.Session s, Handler handler, boolean onServer) {
            this.player = player;
            this.s = s;
            this.handler = handler;
            this.onServer = onServer;
        }

        Connection dut() {
            return s.dut();
        }

        RawPeer raw() {
            return s.raw();
        }

        int xid() {
            return XIDS.incrementAndGet();
        }

        long w() {
            return player.waitMs;
        }

        void send(byte[]... msgs) {
            for (byte[] m : msgs) {
                raw().send(m);
            }
        }

        /**
         * Sends {@code msgs} to our responder, then a NULL call; returns what came back before
         * the NULL call's reply (messages are answered in order), described against
         * {@code xid}. Used where the reply, if any, is sent while the message is taken in.
         */
        String answers(int xid, byte[]... msgs) throws InterruptedException {
            send(msgs);
            int probe = xid();
            List<String> seen = new ArrayList<>();
            if (!dut().isOpen() || !raw().conn.isOpen()) {
                return "connection closed";
            }
            try {
                raw().send(msg(probe, 1, call(probe, P_NULL, new byte[0])));
            } catch (RuntimeException e) {
                return "connection closed";
            }
            long end = System.nanoTime() + w() * 1_000_000;
            while (System.nanoTime() - end < 0) {
                byte[] m = raw().next(20);
                if (m == null) {
                    if (!dut().isOpen() || !raw().conn.isOpen()) {
                        return "connection closed";
                    }
                    continue;
                }
                if (m.length >= 4 && word(m, 0) == probe) {
                    return seen.isEmpty() ? "no reply" : String.join("; ", seen);
                }
                seen.add(describe(m, xid));
            }
            return "probe unanswered after " + String.join("; ", seen);
        }

        /** Sends {@code msg} and waits for our endpoint's message carrying {@code xid}. */
        String answer(int xid, byte[] msg) throws InterruptedException {
            send(msg);
            byte[] m = awaitXid(xid);
            if (m == null) {
                return dut().isOpen() && raw().conn.isOpen() ? "no reply" : "connection closed";
            }
            return describe(m, xid);
        }

        /** The next message of our endpoint with rdma_xid {@code xid} (others are skipped), or null. */
        byte[] awaitXid(int xid) throws InterruptedException {
            long end = System.nanoTime() + w() * 1_000_000;
            while (System.nanoTime() - end < 0) {
                byte[] m = raw().next(20);
                if (m != null && m.length >= 4 && word(m, 0) == xid) {
                    return m;
                }
                if (m == null && (!dut().isOpen() || !raw().conn.isOpen())) {
                    return null;
                }
            }
            return null;
        }

        /** The next message our endpoint sends (a call of ours), or null. */
        byte[] take() throws InterruptedException {
            return raw().next(w());
        }

        /** Whether our endpoint sends nothing before the raw peer's NULL call is answered. */
        String quiet(int xid) throws InterruptedException {
            return answers(xid);
        }

        /** A forward call of our client (or a backward call of our server). */
        CompletableFuture<ReceivedMessage> ourCall(int xid, int proc, byte[] args) {
            return dut().call(MemorySegment.ofArray(ConformanceTable.call(xid, proc, args)));
        }

        String outcome(CompletableFuture<ReceivedMessage> f) {
            return ConformancePlayer.outcome(f, w());
        }

        /** The proper inline reply to {@code xid}, granting {@code credit}. */
        byte[] proper(int xid, int credit) {
            return msg(xid, credit, reply(xid, PROPER));
        }

        /** Our server may send backward calls (the raw client "announced" its backchannel). */
        void backwardReady() throws InterruptedException {
            if (!player.backwardReady()) {
                player.markBackwardReady(this);
            }
        }

        /**
         * Both directions still work, and credits are back: a NULL call from the raw peer
         * is answered, and a NULL call of ours (on the server once backward calls are
         * allowed) gets its reply granting the standard credits. Null if so, else what failed.
         */
        String probe() throws InterruptedException {
            int x = xid();
            String a = answers(x);
            if (!a.equals("no reply")) {
                return "NULL call from the raw peer: " + a;
            }
            if (!onServer || player.backwardReady()) {
                int y = xid();
                CompletableFuture<ReceivedMessage> f = ourCall(y, P_NULL, new byte[0]);
                byte[] c = awaitXid(y);
                if (c == null) {
                    return "our NULL call was not sent";
                }
                send(msg(y, onServer ? ConformancePlayer.BACKWARD_GRANT : ConformancePlayer.GRANT,
                        reply(y, new byte[0])));
                String o = outcome(f);
                if (!o.equals("delivered 0B")) {
                    return "our NULL call: " + o;
                }
            }
            return null;
        }
    }

    // ------------------------------------------------------------------ the rules

    static final List<Rule> RULES = new ArrayList<>();

    private static void rule(String id, String ref, String rule, Side side, String required, Case play) {
        RULES.add(new Rule(id, ref, rule, side, required, play));
    }

    /** Echo call {@code xid} carrying {@code args} as RDMA_MSG with the given fixed header. */
    private static byte[] echo(int xid, int vers, int credit, int proc, byte[] args) {
        return M.hdr(xid, vers, credit, proc).w(0, 0, 0).bytes(call(xid, P_ECHO, args)).b();
    }

    private static final byte[] FOUR = {1, 2, 3, 4};

    static {
        serverRules();
        clientRules();
        settingsRules();
    }

    // Rules where our server is the responder (forward) or requester (backward), the raw peer a client.
    private static void serverRules() {
        Side S = Side.SERVER;
        rule("srv-backward-call-before-ready", "RFC 8167 §6",
                "no backward call before the peer said it is prepared for them", S, "refused, nothing sent", x -> {
                    int xid = x.xid();
                    try {
                        x.ourCall(xid, P_NULL, new byte[0]);
                        return "sent: " + x.quiet(xid);
                    } catch (BackchannelNotEnabledException e) {
                        String q = x.quiet(xid);
                        return q.equals("no reply") ? "refused, nothing sent" : "refused, yet sent " + q;
                    }
                });
        // ---- header (RFC 8166 §4.1, §4.5)
        rule("srv-short-inline-call", "RFC 8166 §3.5.1, §4.2", "an inline RDMA_MSG call is answered inline", S,
                "RDMA_MSG reply SUCCESS 4B", x -> {
                    int xid = x.xid();
                    return x.answers(xid, echo(xid, 1, 1, RpcRdma.RDMA_MSG, FOUR));
                });
        rule("srv-reply-carries-xid", "RFC 8166 §4.2.1", "the reply's rdma_xid and RPC XID are the call's", S,
                "RDMA_MSG reply SUCCESS 4B", x -> {
                    int xid = 0x01020304 ^ x.xid();
                    return x.answers(xid, echo(xid, 1, 1, RpcRdma.RDMA_MSG, FOUR));
                });
        for (int v : new int[] {0, 2, 0xFFFFFFFF}) {
            rule("srv-version-" + Integer.toUnsignedString(v), "RFC 8166 §4.5.1",
                    "rdma_vers " + Integer.toUnsignedString(v) + ": ERR_VERS with the versions supported (1..1)", S,
                    "RDMA_ERROR ERR_VERS 1..1", x -> {
                        int xid = x.xid();
                        return x.answers(xid, echo(xid, v, 1, RpcRdma.RDMA_MSG, FOUR));
                    });
        }
        rule("srv-version-2-header-only", "RFC 8166 §4.5.1",
                "ERR_VERS even when nothing after the fixed header can be read", S, "RDMA_ERROR ERR_VERS 1..1", x -> {
                    int xid = x.xid();
                    return x.answers(xid, M.hdr(xid, 2, 1, RpcRdma.RDMA_MSG).b());
                });
        rule("srv-version-2-nomsg", "RFC 8166 §4.5.1", "ERR_VERS whatever rdma_proc says", S,
                "RDMA_ERROR ERR_VERS 1..1", x -> {
                    int xid = x.xid();
                    return x.answers(xid, M.hdr(xid, 2, 1, RpcRdma.RDMA_NOMSG).w(0, 0, 0).b());
                });
        rule("srv-err-vers-format", "RFC 8166 §4.1.2, §4.2.4", "ERR_VERS is xid, vers 1, credit, RDMA_ERROR, ERR_VERS,"
                + " low, high: 28 bytes", S, "28 bytes, version 1, credit >= 1", x -> {
                    int xid = x.xid();
                    x.send(echo(xid, 3, 1, RpcRdma.RDMA_MSG, FOUR));
                    byte[] m = x.awaitXid(xid);
                    return m == null ? "no reply" : m.length + " bytes, version " + word(m, 1) + ", credit "
                            + (word(m, 2) >= 1 ? ">= 1" : "0");
                });
        rule("srv-header-6-bytes", "RFC 8166 §4.5.2", "a header too short to hold an XID cannot be answered", S,
                "no reply | connection closed", x -> x.answers(0, new byte[] {0, 0, 0, 1, 0, 0}));
        rule("srv-header-12-bytes", "RFC 8166 §4.5.2", "version 1 with no rdma_proc: an XDR error, ERR_CHUNK", S,
                "RDMA_ERROR ERR_CHUNK", x -> {
                    int xid = x.xid();
                    return x.answers(xid, new M().w(xid, 1, 1).b());
                });
        for (int proc : new int[] {5, 0x7FFFFFFF, 0x80000000}) {
            rule("srv-proc-" + Integer.toUnsignedString(proc), "RFC 8166 §4.5.2",
                    "an invalid rdma_proc is an XDR error: ERR_CHUNK", S, "RDMA_ERROR ERR_CHUNK", x -> {
                        int xid = x.xid();
                        return x.answers(xid, echo(xid, 1, 1, proc, FOUR));
                    });
        }
        rule("srv-missing-lists", "RFC 8166 §4.5.2", "RDMA_MSG that ends after rdma_proc: ERR_CHUNK", S,
                "RDMA_ERROR ERR_CHUNK", x -> {
                    int xid = x.xid();
                    return x.answers(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).b());
                });
        rule("srv-list-discriminator-2", "RFC 8166 §4.5.2, §4.1.2 (XDR optional-data is 0 or 1)",
                "a list discriminator of 2 is an XDR error: ERR_CHUNK", S, "RDMA_ERROR ERR_CHUNK", x -> {
                    int xid = x.xid();
                    return x.answers(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).w(2, 0, 0, 0)
                            .bytes(call(xid, P_ECHO, FOUR)).b());
                });
        rule("srv-rdma-xid-not-rpc-xid", "RFC 8166 §4.5.2",
                "rdma_xid different from the RPC XID is an XDR error: ERR_CHUNK", S, "RDMA_ERROR ERR_CHUNK", x -> {
                    int xid = x.xid();
                    return x.answers(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).w(0, 0, 0)
                            .bytes(call(xid + 1, P_ECHO, FOUR)).b());
                });
        rule("srv-rdma-msg-without-rpc", "RFC 8166 §4.5.2", "RDMA_MSG with no RPC message after the lists: ERR_CHUNK",
                S, "RDMA_ERROR ERR_CHUNK", x -> {
                    int xid = x.xid();
                    return x.answers(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).w(0, 0, 0).b());
                });
        rule("srv-nomsg-no-chunks", "RFC 8166 §4.5.2", "RDMA_NOMSG with no chunk at all: ERR_CHUNK", S,
                "RDMA_ERROR ERR_CHUNK", x -> {
                    int xid = x.xid();
                    return x.answers(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_NOMSG).w(0, 0, 0).b());
                });
        rule("srv-err-chunk-format", "RFC 8166 §4.1.2, §4.2.4", "ERR_CHUNK is xid, vers 1, credit, RDMA_ERROR, ERR_CHUNK:"
                + " 20 bytes", S, "20 bytes, version 1", x -> {
                    int xid = x.xid();
                    x.send(M.hdr(xid, 1, 1, RpcRdma.RDMA_NOMSG).w(0, 0, 0).b());
                    byte[] m = x.awaitXid(xid);
                    return m == null ? "no reply" : m.length + " bytes, version " + word(m, 1);
                });
        // ---- RDMA_MSGP, RDMA_DONE (RFC 8166 §4.6)
        rule("srv-msgp-served-as-msg", "RFC 8166 §4.6.1", "RDMA_MSGP is taken as RDMA_MSG, its align/thresh ignored", S,
                "RDMA_MSG reply SUCCESS 4B", x -> {
                    int xid = x.xid();
                    return x.answers(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_MSGP).w(4, 1024, 0, 0, 0)
                            .bytes(call(xid, P_ECHO, FOUR)).b());
                });
        rule("srv-msgp-truncated", "RFC 8166 §4.5.2, §4.6.1", "RDMA_MSGP without align and thresh: ERR_CHUNK", S,
                "RDMA_ERROR ERR_CHUNK", x -> {
                    int xid = x.xid();
                    return x.answers(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_MSGP).b());
                });
        rule("srv-done-ignored", "RFC 8166 §4.6.2", "RDMA_DONE is ignored: no reply, the connection stays", S,
                "no reply", x -> {
                    int xid = x.xid();
                    return x.answers(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_DONE).b());
                });
        // ---- credits (RFC 8166 §3.3.1, §4.1.2)
        for (int req : new int[] {0, 1, 0xFFFFFFFF}) {
            rule("srv-credit-request-" + Integer.toUnsignedString(req), "RFC 8166 §3.3.1",
                    "any credit request is served; the grant is at least 1 and within what the responder posted", S,
                    "RDMA_MSG reply SUCCESS 4B, 1 <= grant <= receives posted", x -> {
                        int xid = x.xid();
                        x.send(echo(xid, 1, req, RpcRdma.RDMA_MSG, FOUR));
                        byte[] m = x.awaitXid(xid);
                        if (m == null) {
                            return "no reply";
                        }
                        int g = word(m, 2);
                        int posted = x.dut().postedReceives() + x.dut().heldReceives() + 1;
                        return describe(m, xid) + ", " + (g >= 1 && g <= posted ? "1 <= grant <= receives posted"
                                : "grant " + Integer.toUnsignedString(g) + " with " + posted + " receives");
                    });
        }
        rule("srv-grant-constant", "RFC 8166 §3.3.1, impl. experience §4.4",
                "the responder's grant is the same in every reply while its resources are", S, "same grant", x -> {
                    int a = x.xid();
                    int b = x.xid();
                    x.send(echo(a, 1, 1, RpcRdma.RDMA_MSG, FOUR));
                    byte[] ma = x.awaitXid(a);
                    x.send(echo(b, 1, 100, RpcRdma.RDMA_MSG, FOUR));
                    byte[] mb = x.awaitXid(b);
                    return ma == null || mb == null ? "no reply" : word(ma, 2) == word(mb, 2) ? "same grant"
                            : "grant " + word(ma, 2) + " then " + word(mb, 2);
                });
        rule("srv-credits-exceeded", "RFC 8166 §3.3.1",
                "a requester beyond its grant: the responder may end the connection or serve", S,
                "connection closed | served", x -> {
                    int first = x.xid();
                    x.send(echo(first, 1, 1, RpcRdma.RDMA_MSG, FOUR));
                    byte[] m = x.awaitXid(first);
                    if (m == null) {
                        return "no reply";
                    }
                    int grant = word(m, 2);
                    for (int i = 0; i <= grant; i++) {
                        int xid = x.xid();
                        x.send(M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).w(0, 0, 0).bytes(call(xid, P_HOLD, FOUR)).b());
                    }
                    String a = x.answers(0);
                    return a.equals("connection closed") ? a : "served";
                });
        // ---- read chunks (RFC 8166 §3.4.5, §4.2.1, §3.5.3)
        rule("srv-read-chunk", "RFC 8166 §3.4.5", "a read chunk's data is pulled and takes its position in the call",
                S, "RDMA_MSG reply SUCCESS 68B data=ok", x -> readChunkCase(x, new int[] {64}, 0));
        rule("srv-read-chunk-3-segments", "RFC 8166 §3.4.4, §3.4.5", "the segments of a chunk are concatenated", S,
                "RDMA_MSG reply SUCCESS 104B data=ok", x -> readChunkCase(x, new int[] {32, 16, 52}, 0));
        rule("srv-read-chunk-odd-roundup", "RFC 8166 §3.4.5 (XDR roundup), impl. experience §3.6",
                "an odd read chunk is not padded on the wire; inline content resumes 4-byte aligned", S,
                "RDMA_MSG reply SUCCESS 16B data=ok", x -> readChunkCase(x, new int[] {5}, 1));
        rule("srv-read-zero-length-segment", "RFC 8166 §3.4.3",
                "a read segment of length 0 transfers nothing", S, "RDMA_MSG reply SUCCESS 40B data=ok",
                x -> readChunkCase(x, new int[] {36, 0}, 0));
        rule("srv-read-two-chunks", "RFC 8166 §3.4.5, §4.3.1",
                "two read chunks at ascending positions each take their place", S,
                "RDMA_MSG reply SUCCESS 28B data=ok", x -> {
                    int xid = x.xid();
                    byte[] a = pattern(8);
                    byte[] b = Arrays.copyOfRange(pattern(20), 12, 20);
                    RawPeer.Chunk ca = x.raw().expose(a, 0, false);
                    RawPeer.Chunk cb = x.raw().expose(b, 0, false);
                    // args: len 8, [chunk a], len 8, [chunk b], tail word; positions count chunk bytes too
                    byte[] inline = cat(call(xid, P_ECHO, new byte[0]), word(8), word(8), word(0x7A11));
                    byte[] m = M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).read(44, ca.rkey(), 8, ca.address())
                            .read(56, cb.rkey(), 8, cb.address()).w(0, 0, 0).bytes(inline).b();
                    byte[] want = cat(word(8), a, word(8), b, word(0x7A11));
                    return checkEcho(x, xid, m, want);
                });
        rule("srv-read-positions-descending", "RFC 8166 §4.3.1, §4.5.2",
                "read chunk positions must not descend: ERR_CHUNK", S, "RDMA_ERROR ERR_CHUNK", x -> {
                    int xid = x.xid();
                    RawPeer.Chunk c = x.raw().expose(pattern(8), 0, false);
                    byte[] inline = cat(call(xid, P_ECHO, new byte[0]), word(8), word(8));
                    return x.answers(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).read(48, c.rkey(), 4, c.address())
                            .read(44, c.rkey(), 4, c.address() + 4).w(0, 0, 0).bytes(inline).b());
                });
        rule("srv-read-position-unaligned", "RFC 8166 §3.4.5, §4.5.2",
                "a read chunk position that is not a multiple of 4: ERR_CHUNK", S, "RDMA_ERROR ERR_CHUNK", x -> {
                    int xid = x.xid();
                    RawPeer.Chunk c = x.raw().expose(pattern(8), 0, false);
                    byte[] inline = cat(call(xid, P_ECHO, new byte[0]), word(8));
                    return x.answers(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).read(42, c.rkey(), 8, c.address())
                            .w(0, 0, 0).bytes(inline).b());
                });
        rule("srv-read-position-beyond-message", "RFC 8166 §3.4.5, §4.5.2",
                "a read chunk position past the end of the inline message: ERR_CHUNK", S, "RDMA_ERROR ERR_CHUNK", x -> {
                    int xid = x.xid();
                    RawPeer.Chunk c = x.raw().expose(pattern(8), 0, false);
                    byte[] inline = cat(call(xid, P_ECHO, new byte[0]), word(8));
                    return x.answers(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).read(4000, c.rkey(), 8, c.address())
                            .w(0, 0, 0).bytes(inline).b());
                });
        rule("srv-position-zero-in-rdma-msg", "RFC 8166 §3.5.3 (long call), impl. experience §3.5",
                "a Position-Zero read chunk belongs to RDMA_NOMSG: in RDMA_MSG it is an error (ERR_CHUNK)", S,
                "RDMA_ERROR ERR_CHUNK", x -> {
                    int xid = x.xid();
                    RawPeer.Chunk c = x.raw().expose(call(xid, P_ECHO, FOUR), 0, false);
                    return x.answers(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).read(0, c.rkey(), 44, c.address())
                            .w(0, 0, 0).bytes(call(xid, P_ECHO, FOUR)).b());
                });
        rule("srv-read-segments-over-limit", "RFC 8166 §4.5.2, §4.5.3",
                "a read list over the responder's segment limit (20 of 16) is refused with ERR_CHUNK, nothing read", S,
                "RDMA_ERROR ERR_CHUNK, nothing read", x -> {
                    int xid = x.xid();
                    M m = M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG);
                    for (int i = 0; i < 20; i++) {
                        m.read(44, 0x1234, 4, 0x1000 + 4 * i);
                    }
                    long reads = x.dut().stats().rdmaReads();
                    String a = x.answers(xid, m.w(0, 0, 0).bytes(cat(call(xid, P_ECHO, new byte[0]), word(80))).b());
                    return a + (x.dut().stats().rdmaReads() == reads ? ", nothing read" : ", read");
                });
        rule("srv-write-segment-count-10000", "RFC 8166 §4.5.2",
                "a write chunk claiming more segments than the message holds: ERR_CHUNK", S, "RDMA_ERROR ERR_CHUNK",
                x -> {
                    int xid = x.xid();
                    return x.answers(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).w(0, 1, 10_000).seg(1, 8, 0)
                            .bytes(call(xid, P_ECHO, FOUR)).b());
                });
        rule("srv-read-bad-rkey", "RFC 8166 §4.5.3, §4.5.5",
                "an RDMA Read the requester's memory refuses ends the connection (the RNIC's remote access error)",
                S, "connection closed", x -> {
                    int xid = x.xid();
                    byte[] inline = cat(call(xid, P_ECHO, new byte[0]), word(8));
                    return x.answer(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).read(44, 0x0BAD0BAD, 8, 0x1000)
                            .w(0, 0, 0).bytes(inline).b());
                });
        // ---- long calls (RFC 8166 §3.5.3)
        rule("srv-long-call", "RFC 8166 §3.5.3 (long call)",
                "RDMA_NOMSG with a Position-Zero read chunk carries the whole call", S,
                "RDMA_MSG reply SUCCESS 8B data=ok", x -> longCallCase(x, 2000, 1, false));
        rule("srv-long-call-2-segments", "RFC 8166 §3.5.3 (long call), §3.4.4",
                "a Position-Zero chunk may have several segments", S, "RDMA_MSG reply SUCCESS 8B data=ok",
                x -> longCallCase(x, 2000, 2, false));
        rule("srv-nomsg-position-zero-plus-read-chunk", "RFC 8166 §3.5.3 (long call), impl. experience §3.4.1",
                "a long call may also carry read chunks at other positions", S,
                "RDMA_MSG reply SUCCESS 8B data=ok", x -> longCallCase(x, 1000, 1, true));
        // ---- write chunks (RFC 8166 §3.4.6, §4.2.2)
        rule("srv-write-chunk-ddp", "RFC 8166 §3.4.6",
                "a DDP-eligible result goes into the write chunk; the reply says how much was written", S,
                "RDMA_MSG reply SUCCESS 4B write[20] data=ok", x -> writeChunkCase(x, 20, new int[] {64}));
        rule("srv-write-chunk-no-pad", "RFC 8166 §3.4.6, impl. experience §3.7",
                "an odd DDP result is written without XDR pad, and the reply returns its exact length", S,
                "RDMA_MSG reply SUCCESS 4B write[5] data=ok", x -> writeChunkCase(x, 5, new int[] {8}));
        rule("srv-write-chunk-keeps-segments", "RFC 8166 §4.3.2, impl. experience §3.8",
                "a returned write chunk keeps its segment count; unused segments have length 0", S,
                "RDMA_MSG reply SUCCESS 4B write[10+0] data=ok", x -> writeChunkCase(x, 10, new int[] {16, 16}));
        rule("srv-write-chunk-2-segments-filled", "RFC 8166 §3.4.6", "a result spans the chunk's segments in order", S,
                "RDMA_MSG reply SUCCESS 4B write[16+8] data=ok", x -> writeChunkCase(x, 24, new int[] {16, 16}));
        rule("srv-write-chunk-too-small", "RFC 8166 §3.4.6, §4.5.3",
                "a DDP result larger than the write chunk cannot be returned: ERR_CHUNK", S, "RDMA_ERROR ERR_CHUNK",
                x -> writeChunkCase(x, 100, new int[] {64}));
        rule("srv-write-chunk-unused", "RFC 8166 §4.3.2, impl. experience §3.8",
                "a write chunk the reply does not use is returned with nothing written", S,
                "RDMA_MSG reply SUCCESS 4B write[0] | RDMA_MSG reply SUCCESS 4B write[]", x -> {
                    int xid = x.xid();
                    RawPeer.Chunk c = x.raw().expose(new byte[0], 32, true);
                    return x.answer(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).w(0, 1, 1).seg(c.rkey(), 32, c.address())
                            .w(0, 0).bytes(call(xid, P_ECHO, FOUR)).b());
                });
        // ---- long replies (RFC 8166 §3.5.4, §4.2.3)
        rule("srv-long-reply", "RFC 8166 §3.5.3 (long reply)",
                "a reply over the inline threshold goes through the Reply chunk (RDMA_NOMSG)", S,
                "RDMA_NOMSG reply chunk 3024B data=ok", x -> replyChunkCase(x, 3000, new int[] {4096}));
        rule("srv-long-reply-2-segments", "RFC 8166 §3.5.3 (long reply), §3.4.4", "a Reply chunk's segments are filled in order",
                S, "RDMA_NOMSG reply chunk 3024B data=ok", x -> replyChunkCase(x, 3000, new int[] {2048, 2048}));
        rule("srv-reply-chunk-unused", "RFC 8166 §3.5.3 (long reply)",
                "a small reply goes inline although a Reply chunk was offered", S, "RDMA_MSG reply SUCCESS 4B",
                x -> replyChunkCase(x, 4, new int[] {4096}));
        rule("srv-long-reply-without-reply-chunk", "RFC 8166 §3.5.3 (long reply), §4.5.3",
                "a reply that fits neither inline nor any chunk offered: ERR_CHUNK", S, "RDMA_ERROR ERR_CHUNK",
                x -> replyChunkCase(x, 3000, new int[0]));
        rule("srv-reply-chunk-too-small", "RFC 8166 §3.5.3 (long reply), §4.5.3",
                "a reply larger than the Reply chunk: ERR_CHUNK", S, "RDMA_ERROR ERR_CHUNK",
                x -> replyChunkCase(x, 3000, new int[] {2048}));
        // ---- backward direction, our server the requester (RFC 8167 §4, §5)
        rule("srv-backward-call-format", "RFC 8167 §5.1",
                "a backward call: RDMA_MSG, version 1, rdma_xid = RPC XID, msg_type CALL, credit = backward request",
                S, "RDMA_MSG call, version 1, credit >= 1", x -> {
                    x.backwardReady();
                    int xid = x.xid();
                    CompletableFuture<ReceivedMessage> f = x.ourCall(xid, P_NULL, new byte[0]);
                    byte[] c = x.awaitXid(xid);
                    if (c == null) {
                        return "not sent";
                    }
                    x.send(x.proper(xid, ConformancePlayer.BACKWARD_GRANT));
                    x.outcome(f);
                    return describe(c, xid) + ", version " + word(c, 1) + ", credit " + (word(c, 2) >= 1 ? ">= 1" : "0");
                });
        rule("srv-backward-reply-matched", "RFC 8167 §5.2, §2.4",
                "the backward reply is matched to the backward call by XID", S, "delivered 4B", x -> {
                    x.backwardReady();
                    int xid = x.xid();
                    CompletableFuture<ReceivedMessage> f = x.ourCall(xid, P_NULL, new byte[0]);
                    x.awaitXid(xid);
                    x.send(msg(xid, ConformancePlayer.BACKWARD_GRANT, reply(xid, FOUR)));
                    return x.outcome(f);
                });
        rule("srv-backward-grant-applies-backward", "RFC 8167 §4.1",
                "a backward reply's credit grants backward calls only: the forward grant is unchanged", S,
                "backward window 1, forward grant unchanged", x -> {
                    x.backwardReady();
                    int p0 = x.xid();
                    x.send(echo(p0, 1, 1, RpcRdma.RDMA_MSG, FOUR));
                    byte[] before = x.awaitXid(p0);
                    int xid = x.xid();
                    CompletableFuture<ReceivedMessage> f = x.ourCall(xid, P_NULL, new byte[0]);
                    x.awaitXid(xid);
                    x.send(msg(xid, 1, reply(xid, FOUR)));
                    x.outcome(f);
                    int window = x.dut().ownCallWindow();
                    int p1 = x.xid();
                    x.send(echo(p1, 1, 1, RpcRdma.RDMA_MSG, FOUR));
                    byte[] after = x.awaitXid(p1);
                    if (before == null || after == null) {
                        return "no reply";
                    }
                    return "backward window " + window + ", forward grant "
                            + (word(before, 2) == word(after, 2) ? "unchanged" : word(before, 2) + " -> " + word(after, 2));
                });
        rule("srv-backward-credit-zero-grant", "RFC 8166 §3.3.1, RFC 8167 §4.1",
                "a backward grant of 0 must not stop backward calls for good", S, "next call sent", x -> {
                    x.backwardReady();
                    int xid = x.xid();
                    CompletableFuture<ReceivedMessage> f = x.ourCall(xid, P_NULL, new byte[0]);
                    x.awaitXid(xid);
                    x.send(msg(xid, 0, reply(xid, FOUR)));
                    x.outcome(f);
                    int next = x.xid();
                    CompletableFuture<ReceivedMessage> g = x.ourCall(next, P_NULL, new byte[0]);
                    byte[] c = x.awaitXid(next);
                    if (c == null) {
                        g.cancel(false);
                        return "next call not sent";
                    }
                    x.send(x.proper(next, ConformancePlayer.BACKWARD_GRANT));
                    x.outcome(g);
                    return "next call sent";
                });
        rule("srv-same-xid-both-directions", "RFC 8167 §2.4.1",
                "a forward call may use the XID of an outstanding backward call: both are distinct", S,
                "RDMA_MSG reply SUCCESS 4B; backward call delivered 4B", x -> {
                    x.backwardReady();
                    int xid = x.xid();
                    CompletableFuture<ReceivedMessage> f = x.ourCall(xid, P_NULL, new byte[0]);
                    x.awaitXid(xid);
                    String fwd = x.answers(xid, echo(xid, 1, 1, RpcRdma.RDMA_MSG, FOUR));
                    boolean pending = !f.isDone();
                    x.send(msg(xid, ConformancePlayer.BACKWARD_GRANT, reply(xid, FOUR)));
                    return fwd + "; backward call " + (pending ? x.outcome(f) : "ended early: " + x.outcome(f));
                });
        rule("srv-malformed-call-with-backward-xid", "RFC 8167 §2.4.1, RFC 8166 §4.5.2",
                "a malformed forward call with an outstanding backward call's XID is answered ERR_CHUNK; the backward"
                        + " call is untouched", S, "RDMA_ERROR ERR_CHUNK; backward call delivered 4B", x -> {
                    x.backwardReady();
                    int xid = x.xid();
                    CompletableFuture<ReceivedMessage> f = x.ourCall(xid, P_NULL, new byte[0]);
                    x.awaitXid(xid);
                    String fwd = x.answers(xid, M.hdr(xid, 1, 1, 9).w(0, 0, 0).bytes(call(xid, P_ECHO, FOUR)).b());
                    boolean pending = !f.isDone();
                    x.send(msg(xid, ConformancePlayer.BACKWARD_GRANT, reply(xid, FOUR)));
                    return fwd + "; backward call " + (pending ? x.outcome(f) : "ended early: " + x.outcome(f));
                });
        rule("srv-backward-reply-unknown-xid", "RFC 8167 §2, §2.4; RFC 8166 §4.5",
                "a reply matching no backward call is dropped: no RDMA_ERROR, nothing else", S, "no reply", x -> {
                    int xid = x.xid();
                    return x.answers(xid, msg(xid, 1, reply(xid, FOUR)));
                });
        rule("srv-backward-call-over-inline", "RFC 8167 §5.3",
                "without backward chunks a backward call is never larger than the inline threshold", S,
                "fails locally, nothing sent", x -> {
                    x.backwardReady();
                    int xid = x.xid();
                    String o;
                    try {
                        o = x.outcome(x.ourCall(xid, P_ECHO, new byte[2000]));
                    } catch (RuntimeException e) {
                        o = "fails " + e.getClass().getSimpleName();
                    }
                    String q = x.quiet(xid);
                    return (o.startsWith("fails") ? "fails locally" : o) + (q.equals("no reply") ? ", nothing sent"
                            : ", sent " + q);
                });
    }

    /** A call whose argument carries read chunks of {@code sizes} (one chunk, those segments) at position 44. */
    private static String readChunkCase(Ctx x, int[] sizes, int tailWords) throws InterruptedException {
        int xid = x.xid();
        int total = Arrays.stream(sizes).sum();
        byte[] data = pattern(total);
        RawPeer.Chunk c = x.raw().expose(data, 0, false);
        M m = M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG);
        int at = 0;
        for (int len : sizes) {
            m.read(44, c.rkey(), len, c.address() + at);
            at += len;
        }
        byte[] tail = tailWords > 0 ? word(0x7A11) : new byte[0];
        byte[] inline = cat(call(xid, P_ECHO, new byte[0]), word(total), tail);
        int pad = (4 - total % 4) % 4;
        byte[] want = cat(word(total), data, new byte[pad], tail);
        return checkEcho(x, xid, m.w(0, 0, 0).bytes(inline).b(), want);
    }

    private static String checkEcho(Ctx x, int xid, byte[] msg, byte[] want) throws InterruptedException {
        x.send(msg);
        byte[] r = x.awaitXid(xid);
        if (r == null) {
            return x.dut().isOpen() ? "no reply" : "connection closed";
        }
        String d = describe(r, xid);
        RpcRdmaHeader h = decode(r);
        if (h == null || word(r, 3) != RpcRdma.RDMA_MSG) {
            return d;
        }
        byte[] results = Arrays.copyOfRange(r, h.headerLength() + 24, r.length);
        return d + (Arrays.equals(results, want) ? " data=ok" : " data differs");
    }

    /** A long call of {@code args} bytes of arguments in a Position-Zero chunk of {@code segments}. */
    private static String longCallCase(Ctx x, int args, int segments, boolean plusReadChunk)
            throws InterruptedException {
        int xid = x.xid();
        byte[] a = pattern(args);
        byte[] extra = Arrays.copyOfRange(pattern(args + 8), args, args + 8);
        byte[] whole = plusReadChunk ? call(xid, P_SUM, cat(word(args), a, word(8))) : call(xid, P_SUM, a);
        RawPeer.Chunk c = x.raw().expose(whole, 0, false);
        M m = M.hdr(xid, 1, 1, RpcRdma.RDMA_NOMSG);
        int seg = whole.length / segments / 4 * 4;
        for (int i = 0; i < segments; i++) {
            int len = i == segments - 1 ? whole.length - seg * i : seg;
            m.read(0, c.rkey(), len, c.address() + (long) seg * i);
        }
        byte[] want = a;
        if (plusReadChunk) {
            RawPeer.Chunk e = x.raw().expose(extra, 0, false);
            m.read(whole.length, e.rkey(), 8, e.address());
            want = cat(word(args), a, word(8), extra);
        }
        return checkEcho(x, xid, m.w(0, 0, 0).b(), cat(word(want.length), word(Arrays.hashCode(want))));
    }

    /** A P_DDP call for {@code result} bytes offering one write chunk of {@code segs}. */
    private static String writeChunkCase(Ctx x, int result, int[] segs) throws InterruptedException {
        int xid = x.xid();
        int total = Arrays.stream(segs).sum();
        RawPeer.Chunk c = x.raw().expose(new byte[0], total, true);
        M m = M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).w(0, 1, segs.length);
        int at = 0;
        for (int len : segs) {
            m.seg(c.rkey(), len, c.address() + at);
            at += len;
        }
        x.send(m.w(0, 0).bytes(call(xid, P_DDP, word(result))).b());
        byte[] r = x.awaitXid(xid);
        if (r == null) {
            return x.dut().isOpen() ? "no reply" : "connection closed";
        }
        String d = describe(r, xid);
        if (word(r, 3) != RpcRdma.RDMA_MSG) {
            return d;
        }
        byte[] mem = c.bytes();
        byte[] want = new byte[total];
        Arrays.fill(want, (byte) 0xEE);
        System.arraycopy(pattern(result), 0, want, 0, Math.min(result, total));
        return d + (Arrays.equals(mem, want) ? " data=ok" : " data differs");
    }

    /** A P_SIZED call for {@code result} bytes offering a Reply chunk of {@code segs} (none if empty). */
    private static String replyChunkCase(Ctx x, int result, int[] segs) throws InterruptedException {
        int xid = x.xid();
        int total = Arrays.stream(segs).sum();
        RawPeer.Chunk c = total > 0 ? x.raw().expose(new byte[0], total, true) : null;
        M m = M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).w(0, 0);
        if (c == null) {
            m.w(0);
        } else {
            m.w(1, segs.length);
            int at = 0;
            for (int len : segs) {
                m.seg(c.rkey(), len, c.address() + at);
                at += len;
            }
        }
        x.send(m.bytes(call(xid, P_SIZED, word(result))).b());
        byte[] r = x.awaitXid(xid);
        if (r == null) {
            return x.dut().isOpen() ? "no reply" : "connection closed";
        }
        String d = describe(r, xid);
        if (word(r, 3) != RpcRdma.RDMA_NOMSG || c == null) {
            return d;
        }
        byte[] mem = c.bytes();
        byte[] rep = reply(xid, pattern(result));
        byte[] want = new byte[total];
        Arrays.fill(want, (byte) 0xEE);
        System.arraycopy(rep, 0, want, 0, Math.min(rep.length, total));
        return d + (Arrays.equals(mem, want) ? " data=ok" : " data differs");
    }

    // Rules where our client is the requester (forward) or responder (backward), the raw peer a server.
    private static void clientRules() {
        Side C = Side.CLIENT;
        rule("req-call-format", "RFC 8166 §4.2, §3.5.1",
                "a short call goes inline: RDMA_MSG, version 1, empty lists, rdma_xid = RPC XID, credit >= 1", C,
                "RDMA_MSG call, no chunks, credit >= 1", x -> {
                    int xid = x.xid();
                    CompletableFuture<ReceivedMessage> f = x.ourCall(xid, P_ECHO, FOUR);
                    byte[] c = x.awaitXid(xid);
                    if (c == null) {
                        return "not sent";
                    }
                    x.send(x.proper(xid, ConformancePlayer.GRANT));
                    x.outcome(f);
                    RpcRdmaHeader h = decode(c);
                    return describe(c, xid) + (h != null && h.hasNoChunks() ? ", no chunks" : ", chunks")
                            + ", credit " + (word(c, 2) >= 1 ? ">= 1" : "0");
                });
        rule("req-reply-delivered", "RFC 8166 §4.2", "the reply is matched by XID and delivered", C, "delivered 4B",
                x -> {
                    int xid = x.xid();
                    CompletableFuture<ReceivedMessage> f = x.ourCall(xid, P_ECHO, FOUR);
                    x.awaitXid(xid);
                    x.send(msg(xid, ConformancePlayer.GRANT, reply(xid, FOUR)));
                    return x.outcome(f);
                });
        rule("req-msgp-reply", "RFC 8166 §4.6.1", "an RDMA_MSGP reply is taken as RDMA_MSG", C, "delivered 4B", x -> {
            int xid = x.xid();
            CompletableFuture<ReceivedMessage> f = x.ourCall(xid, P_ECHO, FOUR);
            x.awaitXid(xid);
            x.send(M.hdr(xid, 1, ConformancePlayer.GRANT, RpcRdma.RDMA_MSGP).w(4, 1024, 0, 0, 0)
                    .bytes(reply(xid, FOUR)).b());
            return x.outcome(f);
        });
        rule("req-done-ignored", "RFC 8166 §4.6.2", "RDMA_DONE is ignored; the call completes with its reply", C,
                "dropped", x -> hostileReply(x, (xid) -> M.hdr(xid, 1, ConformancePlayer.GRANT, RpcRdma.RDMA_DONE).b()));
        rule("req-reply-unknown-xid", "RFC 8166 §4.2.1, RFC 8167 §2.4",
                "a reply matching no call is dropped; the call completes with its own reply", C, "dropped",
                x -> hostileReply(x, (xid) -> msg(xid + 1, ConformancePlayer.GRANT, reply(xid + 1, FOUR))));
        rule("req-reply-version-2", "RFC 8166 §4.5.1, §4.5.2",
                "a reply with an unsupported version is not used: the call fails or it is dropped; never an"
                        + " RDMA_ERROR from a requester", C, "fails MalformedReplyException, nothing sent | dropped, nothing sent",
                x -> hostileReply(x, (xid) -> M.hdr(xid, 2, ConformancePlayer.GRANT, RpcRdma.RDMA_MSG).w(0, 0, 0)
                        .bytes(reply(xid, FOUR)).b()) + quietAfter(x));
        rule("req-reply-undecodable", "RFC 8166 §4.5.2",
                "a reply that cannot be parsed: the requester drops the RPC with an XDR error, sends nothing", C,
                "fails MalformedReplyException, nothing sent",
                x -> hostileReply(x, (xid) -> M.hdr(xid, 1, ConformancePlayer.GRANT, RpcRdma.RDMA_MSG).w(0, 1, 500)
                        .b()) + quietAfter(x));
        rule("req-reply-rdma-xid-not-rpc-xid", "RFC 8166 §4.5.2",
                "rdma_xid different from the RPC XID: an XDR error; the reply is not delivered as the call's", C,
                "fails MalformedReplyException | dropped", x -> hostileReply(x, (xid) -> M.hdr(xid, 1,
                        ConformancePlayer.GRANT, RpcRdma.RDMA_MSG).w(0, 0, 0).bytes(reply(xid ^ 0x5A5A, FOUR)).b()));
        rule("req-err-vers", "RFC 8166 §4.5.1", "ERR_VERS fails the call with the versions the responder supports", C,
                "fails RdmaErrorException", x -> hostileReply(x, (xid) -> new M().w(xid, 1, ConformancePlayer.GRANT,
                        RpcRdma.RDMA_ERROR, RpcRdma.ERR_VERS, 1, 1).b()));
        rule("req-err-chunk", "RFC 8166 §4.5.2", "ERR_CHUNK fails the call", C, "fails RdmaErrorException",
                x -> hostileReply(x, (xid) -> new M().w(xid, 1, ConformancePlayer.GRANT, RpcRdma.RDMA_ERROR,
                        RpcRdma.ERR_CHUNK).b()));
        rule("req-rdma-error-unknown-code", "RFC 8166 §4.5, §4.1.2", "an RDMA_ERROR of unknown code still fails the call",
                C, "fails RdmaErrorException | fails MalformedReplyException",
                x -> hostileReply(x, (xid) -> new M().w(xid, 1, ConformancePlayer.GRANT, RpcRdma.RDMA_ERROR, 9).b()));
        rule("req-reply-with-unoffered-write-chunk", "RFC 8166 §4.3.2, §4.5.2",
                "a reply using a write chunk the call never offered is not used", C, "fails MalformedReplyException",
                x -> hostileReply(x, (xid) -> M.hdr(xid, 1, ConformancePlayer.GRANT, RpcRdma.RDMA_MSG).w(0, 1, 1)
                        .seg(0x1234, 8, 0x1000).w(0, 0).bytes(reply(xid, FOUR)).b()));
        rule("req-reply-chunk-in-rdma-msg", "RFC 8166 §3.5.3 (long reply), §4.3.3",
                "an RDMA_MSG reply carrying a Reply chunk the call never offered is not used", C,
                "fails MalformedReplyException",
                x -> hostileReply(x, (xid) -> M.hdr(xid, 1, ConformancePlayer.GRANT, RpcRdma.RDMA_MSG).w(0, 0, 1, 1)
                        .seg(0x1234, 8, 0x1000).bytes(reply(xid, FOUR)).b()));
        rule("req-nomsg-reply-unoffered", "RFC 8166 §3.5.3 (long reply)",
                "RDMA_NOMSG answering a call that offered no Reply chunk fails that call", C,
                "fails MalformedReplyException, nothing sent",
                x -> hostileReply(x, (xid) -> M.hdr(xid, 1, ConformancePlayer.GRANT, RpcRdma.RDMA_NOMSG).w(0, 0, 1, 1)
                        .seg(0x1234, 32, 0x1000).b()) + quietAfter(x));
        // ---- credits (RFC 8166 §3.3.1), our client the requester
        rule("req-grant-zero", "RFC 8166 §3.3.1",
                "a grant of 0 must not stop the requester for good (a requester keeps at least one credit)", C,
                "next call sent", x -> {
                    int xid = x.xid();
                    CompletableFuture<ReceivedMessage> f = x.ourCall(xid, P_NULL, new byte[0]);
                    x.awaitXid(xid);
                    x.send(msg(xid, 0, reply(xid, FOUR)));
                    x.outcome(f);
                    int next = x.xid();
                    CompletableFuture<ReceivedMessage> g = x.ourCall(next, P_NULL, new byte[0]);
                    if (x.awaitXid(next) == null) {
                        g.cancel(false);
                        return "next call not sent";
                    }
                    x.send(x.proper(next, ConformancePlayer.GRANT));
                    x.outcome(g);
                    return "next call sent";
                });
        rule("req-grant-huge", "RFC 8166 §3.3.1, §3.3.3 (receives for every reply)",
                "a grant beyond what the requester can receive is held to its own limit", C,
                "window within the requester's receive buffers", x -> {
                    int xid = x.xid();
                    CompletableFuture<ReceivedMessage> f = x.ourCall(xid, P_NULL, new byte[0]);
                    x.awaitXid(xid);
                    x.send(msg(xid, 0x7FFFFFFF, reply(xid, FOUR)));
                    x.outcome(f);
                    int w = x.dut().ownCallWindow();
                    int limit = x.dut().postedReceives() + x.dut().heldReceives() + 1;
                    return w >= 1 && w <= 4096 && w <= limit + 1024 ? "window within the requester's receive buffers"
                            : "window " + w;
                });
        rule("req-grant-reduced", "RFC 8166 §3.3.1",
                "after a reduced grant the requester sends no call beyond it; outstanding calls still complete", C,
                "held until within grant; all delivered", x -> {
                    int[] xs = {x.xid(), x.xid(), x.xid()};
                    List<CompletableFuture<ReceivedMessage>> fs = new ArrayList<>();
                    for (int xid : xs) {
                        fs.add(x.ourCall(xid, P_NULL, new byte[0]));
                        x.awaitXid(xid);
                    }
                    // each reply is taken in (its grant applied) before the next step looks
                    x.send(msg(xs[0], 1, reply(xs[0], new byte[0])));
                    boolean all = x.outcome(fs.get(0)).equals("delivered 0B");
                    int later = x.xid();
                    CompletableFuture<ReceivedMessage> g = x.ourCall(later, P_NULL, new byte[0]);
                    boolean waited = x.dut().waitingCalls() == 1;
                    x.send(msg(xs[1], 1, reply(xs[1], new byte[0])));
                    all &= x.outcome(fs.get(1)).equals("delivered 0B");
                    boolean stillWaiting = x.dut().waitingCalls() == 1;
                    x.send(msg(xs[2], 1, reply(xs[2], new byte[0])));
                    all &= x.outcome(fs.get(2)).equals("delivered 0B");
                    byte[] sent = x.awaitXid(later);
                    if (sent != null) {
                        x.send(msg(later, ConformancePlayer.GRANT, reply(later, new byte[0])));
                    }
                    StringBuilder o = new StringBuilder(waited && stillWaiting && sent != null
                            ? "held until within grant" : "waited " + waited + "/" + stillWaiting + ", sent " + (sent != null));
                    all &= x.outcome(g).equals("delivered 0B");
                    return o.append(all ? "; all delivered" : "; not all delivered").toString();
                });
        rule("req-nomsg-credit-is-a-grant", "RFC 8166 §3.3.3, §3.5.3; RFC 8167 §4.1",
                "RDMA_NOMSG without a Position-Zero chunk is a reply (its message is in the Reply chunk): Version 1"
                        + " tells its direction, so its credit value is a grant", C,
                "delivered 3000B, window " + ConformancePlayer.GRANT + " -> 1", x -> {
                    int before = x.dut().ownCallWindow();
                    String o = longReplyCase(x, 3000, 1);
                    int after = x.dut().ownCallWindow();
                    return o + (before == after ? ", window unchanged" : ", window " + before + " -> " + after);
                });
        // ---- chunks of our calls (RFC 8166 §3.5.3, §3.5.4, §3.4.6)
        rule("req-long-call", "RFC 8166 §3.5.3 (long call)",
                "a call over the inline threshold goes as RDMA_NOMSG with the whole call in a Position-Zero chunk", C,
                "RDMA_NOMSG, Position-Zero chunk of 3040B, data=ok; delivered 0B", x -> {
                    int xid = x.xid();
                    byte[] whole = call(xid, P_ECHO, pattern(3000));
                    CompletableFuture<ReceivedMessage> f = x.dut().call(MemorySegment.ofArray(whole));
                    byte[] c = x.awaitXid(xid);
                    RpcRdmaHeader h = c == null ? null : decode(c);
                    if (h == null) {
                        return c == null ? "not sent" : describe(c, xid);
                    }
                    String shape;
                    String data = "";
                    if (h.proc() == RpcRdma.RDMA_NOMSG && h.readList().hasPositionZeroChunk()
                            && h.readList().chunkCount() == 1) {
                        shape = "RDMA_NOMSG, Position-Zero chunk of " + h.readList().chunkLength(0) + "B";
                        byte[] got = new byte[0];
                        for (int i = 0; i < h.readList().segmentCount(); i++) {
                            var s = h.readList().segments();
                            got = cat(got, x.raw().read(s.handle(i), s.offset(i), (int) s.length(i)));
                        }
                        data = Arrays.equals(got, whole) ? ", data=ok" : ", data differs";
                    } else {
                        shape = describe(c, xid);
                    }
                    x.send(msg(xid, ConformancePlayer.GRANT, reply(xid, new byte[0])));
                    return shape + data + "; " + x.outcome(f);
                });
        rule("req-long-reply", "RFC 8166 §3.5.3 (long reply)",
                "a call whose reply may exceed the inline threshold offers a Reply chunk; the reply through it is"
                        + " delivered", C, "delivered 3000B", x -> longReplyCase(x, 3000, ConformancePlayer.GRANT));
        rule("req-reply-chunk-overclaim", "RFC 8166 §3.4.3, DESIGN (check every returned length)",
                "a Reply chunk length beyond what was offered fails the call; nothing is read", C,
                "fails MalformedReplyException", x -> {
                    int xid = x.xid();
                    CompletableFuture<ReceivedMessage> f = x.dut().call(MemorySegment.ofArray(call(xid, P_NULL,
                            new byte[0])), CallOptions.DEFAULT.withMaxReplyBytes(8192));
                    byte[] c = x.awaitXid(xid);
                    RpcRdmaHeader h = c == null ? null : decode(c);
                    if (h == null || !h.hasReplyChunk()) {
                        return "no Reply chunk offered";
                    }
                    var r = h.replyChunk();
                    x.send(M.hdr(xid, 1, ConformancePlayer.GRANT, RpcRdma.RDMA_NOMSG).w(0, 0, 1, 1)
                            .seg(r.handle(0), (int) r.length(0) + 1, r.offset(0)).b());
                    return x.outcome(f);
                });
        rule("req-write-chunk-ddp", "RFC 8166 §3.4.6",
                "a receptacle is offered as a write chunk; what the responder wrote is delivered into it", C,
                "delivered 4B placed 20 data=ok", x -> ddpCase(x, 20, false));
        rule("req-write-chunk-odd", "RFC 8166 §3.4.6, impl. experience §3.7",
                "an odd DDP result's exact length is taken from the reply", C, "delivered 4B placed 5 data=ok",
                x -> ddpCase(x, 5, false));
        rule("req-write-chunk-overclaim", "RFC 8166 §3.4.6, DESIGN (check every returned length)",
                "a returned write length beyond the offered chunk fails the call", C, "fails MalformedReplyException",
                x -> ddpCase(x, 65, false));
        rule("req-write-chunk-zero-segments", "impl. experience §3.8",
                "a reply returning the write chunk with zero segments (nothing placed) is delivered, placed 0", C,
                "delivered 4B placed 0", x -> ddpCase(x, 0, true));
        rule("req-reply-chunk-for-echoed-write-list", "RFC 8166 §3.3.2 (the threshold covers the header)",
                "a reply that fits inline only without the write list it must echo needs a Reply chunk", C,
                "Reply chunk offered", x -> {
                    int xid = x.xid();
                    MemorySegment receptacle = MemorySegment.ofArray(new byte[64]);
                    int inline = x.dut().receiveInlineThreshold();
                    int max = inline - RpcRdma.INLINE_MSG_HEADER_BYTES - 8; // fits a 28-byte header, not one with a write list
                    CompletableFuture<ReceivedMessage> f = x.dut().call(MemorySegment.ofArray(call(xid, P_NULL,
                            new byte[0])), CallOptions.DEFAULT.withMaxReplyBytes(max).withReceptacle(receptacle));
                    byte[] c = x.awaitXid(xid);
                    RpcRdmaHeader h = c == null ? null : decode(c);
                    x.send(M.hdr(xid, 1, ConformancePlayer.GRANT, RpcRdma.RDMA_MSG).w(0, 1, 1)
                            .seg(h == null || h.writeList().isEmpty() ? 0 : h.writeList().handle(0, 0), 0,
                                    h == null || h.writeList().isEmpty() ? 0 : h.writeList().offset(0, 0))
                            .w(0, 0).bytes(reply(xid, FOUR)).b());
                    x.outcome(f);
                    return h == null ? "not sent" : h.hasReplyChunk() ? "Reply chunk offered" : "no Reply chunk";
                });
        rule("req-nomsg-reply-unknown-xid", "RFC 8166 §4.5, RFC 8167 §2.4",
                "an RDMA_NOMSG reply matching no call is dropped: a requester never answers with RDMA_ERROR", C,
                "dropped, nothing sent", x -> hostileReply(x, (xid) -> M.hdr(xid + 7, 1, ConformancePlayer.GRANT,
                        RpcRdma.RDMA_NOMSG).w(0, 0, 1, 1).seg(0x1234, 32, 0x1000).b()) + quietAfter(x));
        // ---- backward direction, our client the responder (RFC 8167 §4-6)
        rule("cli-backward-call-served", "RFC 8167 §5.2",
                "a backward call is answered with RDMA_MSG REPLY carrying its XID", C, "RDMA_MSG reply SUCCESS 4B",
                x -> {
                    int xid = x.xid();
                    return x.answers(xid, echo(xid, 1, 1, RpcRdma.RDMA_MSG, FOUR));
                });
        rule("cli-backward-grant", "RFC 8167 §4.1, §5.2",
                "the backward reply grants backward credits (at least 1)", C, "grant >= 1", x -> {
                    int xid = x.xid();
                    x.send(echo(xid, 1, 5, RpcRdma.RDMA_MSG, FOUR));
                    byte[] m = x.awaitXid(xid);
                    return m == null ? "no reply" : word(m, 2) >= 1 ? "grant >= 1" : "grant 0";
                });
        rule("cli-backward-credit-not-forward", "RFC 8167 §4.1",
                "a backward call's credit request does not change the forward window", C, "forward window unchanged",
                x -> {
                    int before = x.dut().ownCallWindow();
                    int xid = x.xid();
                    x.answers(xid, echo(xid, 1, 1, RpcRdma.RDMA_MSG, FOUR));
                    int after = x.dut().ownCallWindow();
                    return before == after ? "forward window unchanged" : "forward window " + before + " -> " + after;
                });
        rule("cli-same-xid-both-directions", "RFC 8167 §2.4.1",
                "a backward call may use the XID of an outstanding forward call: both are distinct", C,
                "RDMA_MSG reply SUCCESS 4B; forward call delivered 4B", x -> {
                    int xid = x.xid();
                    CompletableFuture<ReceivedMessage> f = x.ourCall(xid, P_NULL, new byte[0]);
                    x.awaitXid(xid);
                    String bwd = x.answers(xid, echo(xid, 1, 1, RpcRdma.RDMA_MSG, FOUR));
                    boolean pending = !f.isDone();
                    x.send(msg(xid, ConformancePlayer.GRANT, reply(xid, FOUR)));
                    return bwd + "; forward call " + (pending ? x.outcome(f) : "ended early: " + x.outcome(f));
                });
        rule("cli-malformed-call-with-forward-xid", "RFC 8167 §2.4.1, RFC 8166 §4.5.2",
                "a malformed backward call with an outstanding forward call's XID is answered ERR_CHUNK; the forward"
                        + " call is untouched", C, "RDMA_ERROR ERR_CHUNK; forward call delivered 4B", x -> {
                    int xid = x.xid();
                    CompletableFuture<ReceivedMessage> f = x.ourCall(xid, P_NULL, new byte[0]);
                    x.awaitXid(xid);
                    String bwd = x.answers(xid, M.hdr(xid, 1, 1, 9).w(0, 0, 0).bytes(call(xid, P_ECHO, FOUR)).b());
                    boolean pending = !f.isDone();
                    x.send(msg(xid, ConformancePlayer.GRANT, reply(xid, FOUR)));
                    return bwd + "; forward call " + (pending ? x.outcome(f) : "ended early: " + x.outcome(f));
                });
        rule("cli-backward-chunks-unsupported", "RFC 8167 §5.3",
                "a responder that takes no backward chunks answers a chunked backward call with ERR_CHUNK", C,
                "RDMA_ERROR ERR_CHUNK", x -> {
                    int xid = x.xid();
                    return x.answers(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).read(44, 0x1234, 8, 0x1000).w(0, 0, 0)
                            .bytes(cat(call(xid, P_ECHO, new byte[0]), word(8))).b());
                });
        rule("cli-backward-version-2", "RFC 8166 §4.5.1, RFC 8167 §5.1",
                "our client as backward responder answers an unsupported version with ERR_VERS", C,
                "RDMA_ERROR ERR_VERS 1..1", x -> {
                    int xid = x.xid();
                    return x.answers(xid, echo(xid, 2, 1, RpcRdma.RDMA_MSG, FOUR));
                });
        rule("cli-backward-unknown-proc", "RFC 8166 §4.5.2",
                "our client as backward responder answers an invalid rdma_proc with ERR_CHUNK", C,
                "RDMA_ERROR ERR_CHUNK", x -> {
                    int xid = x.xid();
                    return x.answers(xid, echo(xid, 1, 1, 6, FOUR));
                });
        rule("cli-backward-reply-inline", "RFC 8167 §4.2, §5.3",
                "backward replies without chunks are RDMA_MSG no larger than the inline threshold", C,
                "RDMA_MSG reply SUCCESS 200B", x -> {
                    int xid = x.xid();
                    return x.answers(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).w(0, 0, 0)
                            .bytes(call(xid, P_SIZED, word(200))).b());
                });
        rule("cli-backward-reply-too-large", "RFC 8167 §5.3, RFC 8166 §4.5.3",
                "a backward reply that cannot fit inline, with no chunks: ERR_CHUNK (never an oversize Send)", C,
                "RDMA_ERROR ERR_CHUNK", x -> {
                    int xid = x.xid();
                    return x.answers(xid, M.hdr(xid, 1, 1, RpcRdma.RDMA_MSG).w(0, 0, 0)
                            .bytes(call(xid, P_SIZED, word(3000))).b());
                });
        rule("cli-receives-for-backward-credits", "RFC 8167 §4.3.1",
                "the client keeps a receive posted for every backward credit it granted", C,
                "receives posted >= backward grant", x -> {
                    int xid = x.xid();
                    x.send(echo(xid, 1, 1, RpcRdma.RDMA_MSG, FOUR));
                    byte[] m = x.awaitXid(xid);
                    if (m == null) {
                        return "no reply";
                    }
                    return x.dut().postedReceives() >= word(m, 2) ? "receives posted >= backward grant"
                            : x.dut().postedReceives() + " receives for a grant of " + word(m, 2);
                });
        rule("pd-r-only-when-invalidatable", "RFC 8797 §3.2, §4.1",
                "R is set only while every rkey the requester exposes may be invalidated remotely", C,
                "no exposure outside what may be invalidated", x -> {
                    long regs = x.dut().stats().exposureRegistrations();
                    String o = longReplyCase(x, 3000, ConformancePlayer.GRANT);
                    boolean plain = x.dut().stats().exposureRegistrations() > regs;
                    return x.dut().remoteInvalidation() && plain ? "R set, yet a plain registration exposed (" + o + ")"
                            : "no exposure outside what may be invalidated";
                });
    }

    /** Our call, then the hostile message, then its proper reply: how the call ended. */
    private static String hostileReply(Ctx x, java.util.function.IntFunction<byte[]> hostile)
            throws InterruptedException {
        int xid = x.xid();
        CompletableFuture<ReceivedMessage> f = x.ourCall(xid, P_ECHO, FOUR);
        if (x.awaitXid(xid) == null) {
            return "not sent";
        }
        x.send(hostile.apply(xid));
        x.send(x.proper(xid, ConformancePlayer.GRANT));
        return x.outcome(f);
    }

    /** ", nothing sent" if our endpoint sent nothing (a requester never answers a reply). */
    private static String quietAfter(Ctx x) throws InterruptedException {
        String q = x.quiet(0);
        return q.equals("no reply") ? ", nothing sent" : ", sent " + q;
    }

    /** A call offering a Reply chunk, answered through it with {@code result} bytes by RDMA Write and RDMA_NOMSG. */
    private static String longReplyCase(Ctx x, int result, int credit) throws InterruptedException {
        int xid = x.xid();
        CompletableFuture<ReceivedMessage> f = x.dut().call(MemorySegment.ofArray(call(xid, P_NULL, new byte[0])),
                CallOptions.DEFAULT.withMaxReplyBytes(8192));
        byte[] c = x.awaitXid(xid);
        RpcRdmaHeader h = c == null ? null : decode(c);
        if (h == null || !h.hasReplyChunk()) {
            f.cancel(false);
            return c == null ? "not sent" : "no Reply chunk offered: " + describe(c, xid);
        }
        byte[] rep = reply(xid, pattern(result));
        var r = h.replyChunk();
        M m = M.hdr(xid, 1, credit, RpcRdma.RDMA_NOMSG).w(0, 0, 1);
        int at = 0;
        int n = 0;
        M segs = new M();
        for (int i = 0; i < r.count() && at < rep.length; i++) {
            int len = (int) Math.min(r.length(i), rep.length - at);
            x.raw().write(r.handle(i), r.offset(i), Arrays.copyOfRange(rep, at, at + len));
            segs.seg(r.handle(i), len, r.offset(i));
            at += len;
            n++;
        }
        x.send(m.w(n).bytes(segs.b()).b());
        String o = x.outcome(f);
        if (!o.startsWith("delivered")) {
            return o;
        }
        return o;
    }

    /** A call with a 64-byte receptacle, answered with {@code placed} bytes written (or a zero-segment chunk). */
    private static String ddpCase(Ctx x, int placed, boolean zeroSegments) throws InterruptedException {
        int xid = x.xid();
        MemorySegment receptacle = MemorySegment.ofArray(new byte[64]);
        CompletableFuture<ReceivedMessage> f = x.dut().call(MemorySegment.ofArray(call(xid, P_NULL, new byte[0])),
                CallOptions.DEFAULT.withReceptacle(receptacle));
        byte[] c = x.awaitXid(xid);
        RpcRdmaHeader h = c == null ? null : decode(c);
        if (h == null || h.writeList().chunkCount() != 1) {
            f.cancel(false);
            return c == null ? "not sent" : "no write chunk offered: " + describe(c, xid);
        }
        int rkey = h.writeList().handle(0, 0);
        long off = h.writeList().offset(0, 0);
        byte[] data = pattern(placed);
        M m = M.hdr(xid, 1, ConformancePlayer.GRANT, RpcRdma.RDMA_MSG).w(0, 1);
        if (zeroSegments) {
            m.w(0);
        } else {
            if (placed <= h.writeList().length(0, 0)) {
                x.raw().write(rkey, off, data);
            }
            m.w(1).seg(rkey, placed, off);
        }
        x.send(m.w(0, 0).bytes(reply(xid, FOUR)).b());
        String o = x.outcome(f);
        if (!o.startsWith("delivered") || placed == 0) {
            return o;
        }
        byte[] got = receptacle.asSlice(0, placed).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        return o + (Arrays.equals(got, data) ? " data=ok" : " data differs");
    }

    // Rules of the connection settings (RFC 8797), played through the code both endpoints run at connect.
    private static void settingsRules() {
        Side N = Side.NONE;
        rule("pd-format", "RFC 8797 §4", "our private data: f6ab0e18, version 1, reserved 0, R, send, receive", N,
                "f6ab0e18 01 01 03 03", x -> {
                    byte[] b = new ConnectPrivate(true, 4096, 4096).toBytes();
                    return java.util.HexFormat.of().formatHex(b, 0, 4) + " " + java.util.HexFormat.ofDelimiter(" ")
                            .formatHex(b, 4, 8);
                });
        rule("pd-reserved-bits-clear", "RFC 8797 §4", "senders set the 7 reserved bits to zero", N, "reserved 0",
                x -> (new ConnectPrivate(false, 1024, 1024).toBytes()[5] & 0xFE) == 0 ? "reserved 0" : "reserved set");
        rule("pd-reserved-bits-ignored", "RFC 8797 §4", "receivers ignore the reserved bits", N,
                "R false, 2048/2048", x -> pd(new byte[] {(byte) 0xf6, (byte) 0xab, 0x0e, 0x18, 1, (byte) 0xFE, 1, 1}));
        rule("pd-r-bit", "RFC 8797 §4", "R is the low bit of the flags octet", N, "R true, 1024/1024",
                x -> pd(new byte[] {(byte) 0xf6, (byte) 0xab, 0x0e, 0x18, 1, 1, 0, 0}));
        rule("pd-size-max", "RFC 8797 §4.2", "size 255 decodes as 262144 octets", N, "R false, 262144/262144",
                x -> pd(new byte[] {(byte) 0xf6, (byte) 0xab, 0x0e, 0x18, 1, 0, (byte) 255, (byte) 255}));
        rule("pd-size-encoding", "RFC 8797 §4.2", "a size is sent as bytes / 1024 - 1", N, "0 3 255",
                x -> ConnectPrivate.encodeBufferSize(1024) + " " + ConnectPrivate.encodeBufferSize(4096) + " "
                        + ConnectPrivate.encodeBufferSize(262144));
        rule("pd-identifier-at-any-offset", "RFC 8797 §5.2",
                "the identifier is searched for at any offset of the private data", N, "R true, 4096/2048",
                x -> pd(new byte[] {9, 9, 9, (byte) 0xf6, (byte) 0xab, 0x0e, 0x18, 1, 1, 3, 1, 7}));
        rule("pd-no-identifier", "RFC 8797 §5.1, §5.2",
                "without the identifier the peer is taken to have the defaults", N, "R false, 1024/1024",
                x -> pd(new byte[] {(byte) 0xf6, (byte) 0xab, 0x0e, 0x19, 1, 1, 3, 3}));
        rule("pd-unknown-version", "RFC 8797 §5.2, §6", "a format version other than 1 is not version-1 data", N,
                "R false, 1024/1024", x -> pd(new byte[] {(byte) 0xf6, (byte) 0xab, 0x0e, 0x18, 2, 1, 3, 3}));
        rule("pd-truncated", "RFC 8797 §5.2", "content that overruns the buffer is not used", N, "R false, 1024/1024",
                x -> pd(new byte[] {(byte) 0xf6, (byte) 0xab, 0x0e, 0x18, 1, 1, 3}));
        rule("pd-thresholds-min", "RFC 8797 §4.2",
                "client-to-server = min(client send, server receive); server-to-client = min(server send, client"
                        + " receive)", N, "2048/1024", x -> {
                    ConnectSettings s = ConnectSettings.negotiate(new ConnectPrivate(false, 4096, 1024),
                            new ConnectPrivate(false, 8192, 2048));
                    return s.clientToServer() + "/" + s.serverToClient();
                });
        rule("pd-remote-invalidation-both", "RFC 8797 §4.1",
                "Send with Invalidate only when both peers set R", N, "false false true", x ->
                        ConnectSettings.negotiate(new ConnectPrivate(true, 1024, 1024), ConnectPrivate.DEFAULT)
                                .remoteInvalidation() + " " + ConnectSettings.negotiate(ConnectPrivate.DEFAULT,
                                new ConnectPrivate(true, 1024, 1024)).remoteInvalidation() + " "
                                + ConnectSettings.negotiate(new ConnectPrivate(true, 1024, 1024),
                                new ConnectPrivate(true, 1024, 1024)).remoteInvalidation());
    }

    private static String pd(byte[] privateData) {
        ConnectPrivate p = ConnectPrivate.decode(privateData);
        return "R " + p.remoteInvalidation() + ", " + p.sendSize() + "/" + p.receiveSize();
    }

    /** Every listed divergence names a rule of the table. */
    static List<String> unknownDivergences() {
        List<String> bad = new ArrayList<>();
        for (Divergence d : DIVERGENCES) {
            if (RULES.stream().noneMatch(r -> r.id().equals(d.id()))) {
                bad.add(d.id());
            }
        }
        return bad;
    }
}
