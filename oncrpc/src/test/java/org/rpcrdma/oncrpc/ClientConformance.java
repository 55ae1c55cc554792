package org.rpcrdma.oncrpc;

import static org.rpcrdma.oncrpc.ServerConformance.REPLY;
import static org.rpcrdma.oncrpc.ServerConformance.cat;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.rpcrdma.transport.CallHandler;
import org.rpcrdma.transport.MalformedReplyException;
import org.rpcrdma.xdr.Xdr;
import org.rpcrdma.xdr.XdrException;
import org.rpcrdma.xdr.XdrReader;
import org.rpcrdma.xdr.XdrWriter;

/**
 * What an ONC RPC client must make of each Reply (RFC 5531 §9): the client half of the
 * conformance taxonomy. Each case is a Reply hand-encoded after its XID, sent by a server
 * that answers procedure {@code i} with case {@code i}, and the outcome the RFC requires:
 * the typed error the reply means, with its fields, and the results decoded only from
 * MSG_ACCEPTED / SUCCESS. Every reply that is not a SUCCESS carries words after its header
 * that look like results: a client that decodes them anyway is caught by the result codec,
 * which counts its calls.
 */
final class ClientConformance {
    private ClientConformance() {}

    /** Test program of the canned server. */
    static final int PROG = 0x2000_0098;

    /** A check of the call's outcome; returns null when it is what the RFC requires, else what was wrong. */
    @FunctionalInterface
    interface Expect {
        String check(Object result, Throwable failure);
    }

    /**
     * @param name  kebab-case id
     * @param rfc   where the required outcome comes from
     * @param reply the Reply after its XID
     * @param decodes how many times the result codec may run (1 for SUCCESS, else 0)
     */
    record Case(String name, String rfc, int[] reply, int decodes, Expect expect) {}

    /** Cases where our client knowingly differs; none today. */
    static final Map<String, String> DIVERGENCES = Map.of();

    /** Looks like results: a client that decodes a non-SUCCESS reply would read 0x5EC12E7 here. */
    private static final int[] BAIT = {0x5EC12E7, 0, 0, 0};

    static final List<Case> CASES = cases();

    private static List<Case> cases() {
        List<Case> c = new ArrayList<>();
        c.add(new Case("success", "RFC 5531 §9 SUCCESS: results follow", new int[] {REPLY, 0, 0, 0, 0, 42}, 1,
                value(42)));
        c.add(new Case("success-verifier-with-body", "RFC 5531 §9: the verifier precedes accept_stat",
                new int[] {REPLY, 0, 0, 8, 0x11111111, 0x22222222, 0, -7}, 1, value(-7)));
        c.add(new Case("success-results-truncated", "RFC 5531 §9 (results that do not decode)",
                new int[] {REPLY, 0, 0, 0, 0}, 1, failure(MalformedReplyException.class)));
        c.add(new Case("prog-unavail", "RFC 5531 §9", cat(new int[] {REPLY, 0, 0, 0, 1}, BAIT), 0,
                failure(RpcReplyException.ProgUnavail.class)));
        c.add(new Case("prog-mismatch", "RFC 5531 §9 PROG_MISMATCH low, high", cat(new int[] {REPLY, 0, 0, 0, 2, 1, 3}, BAIT),
                0, mismatch(RpcReplyException.ProgMismatch.class, 1, 3)));
        c.add(new Case("prog-mismatch-unsigned-extremes", "RFC 5531 §9 (unsigned int low, high)",
                new int[] {REPLY, 0, 0, 0, 2, 0, 0xFFFFFFFF}, 0, mismatch(RpcReplyException.ProgMismatch.class, 0, -1)));
        c.add(new Case("prog-mismatch-truncated", "RFC 5531 §9 (low, high missing)", new int[] {REPLY, 0, 0, 0, 2, 1},
                0, failure(MalformedReplyException.class)));
        c.add(new Case("proc-unavail", "RFC 5531 §9", cat(new int[] {REPLY, 0, 0, 0, 3}, BAIT), 0,
                failure(RpcReplyException.ProcUnavail.class)));
        c.add(new Case("garbage-args", "RFC 5531 §9", cat(new int[] {REPLY, 0, 0, 0, 4}, BAIT), 0,
                failure(RpcReplyException.GarbageArgs.class)));
        c.add(new Case("system-err", "RFC 5531 §9", cat(new int[] {REPLY, 0, 0, 0, 5}, BAIT), 0,
                failure(RpcReplyException.SystemErr.class)));
        c.add(new Case("accept-stat-undefined", "RFC 5531 §9 (accept_stat 6 is not defined)",
                cat(new int[] {REPLY, 0, 0, 0, 6}, BAIT), 0, failure(MalformedReplyException.class)));
        c.add(new Case("rpc-mismatch", "RFC 5531 §9 MSG_DENIED RPC_MISMATCH low, high",
                cat(new int[] {REPLY, 1, 0, 2, 2}, BAIT), 0, mismatch(RpcReplyException.RpcMismatch.class, 2, 2)));
        c.add(new Case("rpc-mismatch-3-4", "RFC 5531 §9", new int[] {REPLY, 1, 0, 3, 4}, 0,
                mismatch(RpcReplyException.RpcMismatch.class, 3, 4)));
        for (int stat : new int[] {1, 2, 3, 4, 5, 6, 7, 13, 14}) {
            c.add(new Case("auth-error-" + RpcReplyException.authStatName(stat).toLowerCase().replace('_', '-'),
                    "RFC 5531 §9 MSG_DENIED AUTH_ERROR auth_stat", cat(new int[] {REPLY, 1, 1, stat}, BAIT), 0,
                    authError(stat)));
        }
        c.add(new Case("reject-stat-undefined", "RFC 5531 §9 (reject_stat 2 is not defined)",
                cat(new int[] {REPLY, 1, 2}, BAIT), 0, failure(MalformedReplyException.class)));
        c.add(new Case("reply-stat-undefined", "RFC 5531 §9 (reply_stat 2 is not defined)",
                cat(new int[] {REPLY, 2, 0, 0, 0}, BAIT), 0, failure(MalformedReplyException.class)));
        c.add(new Case("denied-truncated", "RFC 5531 §9 (reject_stat missing)", new int[] {REPLY, 1}, 0,
                failure(MalformedReplyException.class)));
        c.add(new Case("verifier-over-400", "RFC 5531 §8.2 opaque_auth body<400>",
                cat(new int[] {REPLY, 0, 0, 404}, new int[101], new int[] {0, 1}), 0, failure(MalformedReplyException.class)));
        return List.copyOf(c);
    }

    private static Expect value(int v) {
        return (r, f) -> f == null && Integer.valueOf(v).equals(r) ? null : "expected result " + v + ", got " + r + " / " + f;
    }

    private static Expect failure(Class<? extends Throwable> type) {
        return (r, f) -> type.isInstance(f) ? null : "expected " + type.getSimpleName() + ", got " + r + " / " + f;
    }

    private static Expect mismatch(Class<? extends RpcReplyException> type, int low, int high) {
        return (r, f) -> {
            if (f instanceof RpcReplyException.ProgMismatch p && type == p.getClass() && p.low() == low && p.high() == high
                    || f instanceof RpcReplyException.RpcMismatch m && type == m.getClass() && m.low() == low
                    && m.high() == high) {
                return null;
            }
            return "expected " + type.getSimpleName() + " " + low + ".." + high + ", got " + r + " / " + f;
        };
    }

    private static Expect authError(int stat) {
        return (r, f) -> f instanceof RpcReplyException.AuthError a && a.authStat() == stat ? null
                : "expected AuthError " + stat + ", got " + r + " / " + f;
    }

    /** The canned server: the call to procedure i is answered with case i's words after its XID. */
    static CallHandler cannedServer() {
        return in -> {
            MemorySegment b = in.message().bytes();
            int proc = Xdr.getInt(b, 20);
            int[] words = CASES.get(proc).reply();
            MemorySegment m = MemorySegment.ofArray(new byte[4 + 4 * words.length]);
            XdrWriter w = new XdrWriter(m, 0, m.byteSize()).writeInt(in.xid());
            for (int x : words) {
                w.writeInt(x);
            }
            in.reply(m);
        };
    }

    /** An int result codec that counts how often it decodes. */
    static XdrCodec<Integer> countingInt(AtomicInteger decodes) {
        return new XdrCodec<>() {
            @Override
            public void encode(XdrWriter w, Integer v) {
                w.writeInt(v);
            }

            @Override
            public Integer decode(XdrReader r) throws XdrException {
                decodes.incrementAndGet();
                return r.readInt();
            }
        };
    }
}
