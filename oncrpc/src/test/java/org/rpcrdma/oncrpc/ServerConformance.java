package org.rpcrdma.oncrpc;

import static org.rpcrdma.oncrpc.TestProgram.PROG;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What an ONC RPC server must answer, case by case, written from RFC 5531 (§9 message
 * protocol, §12.1 NULL) and RFC 4506 (the XDR types), not from our code: the defect
 * taxonomy of the conformance suite (the shape of libevpl's model-based rpc2 suite). Each
 * case is a Call hand-encoded as XDR words after the XID, and the exact Reply words the
 * RFCs require after the XID. The model is {@link TestProgram}: versions 2 and 5, the
 * procedures and types its XDR declares.
 *
 * <p>Where our server knowingly answers otherwise, the case is listed in
 * {@link #DIVERGENCES} with the reason; an unlisted divergence fails the suite, and so
 * does a listed one that no longer diverges.
 */
final class ServerConformance {
    private ServerConformance() {}

    /**
     * @param name      kebab-case id (what DIVERGENCES names)
     * @param rfc       where the required outcome comes from
     * @param call      the Call after its XID
     * @param reply     the Reply the RFC requires, after its XID
     * @param bigClaim  a length field claims far more than the message holds: the server
     *                  must not allocate it (checked where the server runs on the test's thread)
     */
    record Case(String name, String rfc, int[] call, int[] reply, boolean bigClaim) {}

    /** Cases where our server knowingly differs from what the RFCs require, and why. */
    static final Map<String, String> DIVERGENCES = Map.of(
            "opaque-nonzero-pad",
            "RFC 4506 §4.10 makes the residual bytes zero; like Linux's xdr_stream_decode_opaque we do not"
                    + " check them on receipt (we always send zeros)");

    // ---- hand encoding (RFC 5531 §9) ----
    static final int CALL = 0;
    static final int REPLY = 1;
    static final int NONE = 0;
    static final int SYS = 1;

    /** A Call to prog/vers/proc with AUTH_NONE credential and verifier, then {@code args}. */
    static int[] call(int prog, int vers, int proc, int... args) {
        return cat(new int[] {CALL, 2, prog, vers, proc, NONE, 0, NONE, 0}, args);
    }

    /** A Call with a raw credential (flavor, length, body words) and an AUTH_NONE verifier. */
    static int[] callCred(int prog, int vers, int proc, int[] cred, int... args) {
        return cat(new int[] {CALL, 2, prog, vers, proc}, cred, new int[] {NONE, 0}, args);
    }

    /** MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS, then the results. */
    static int[] success(int... results) {
        return cat(new int[] {REPLY, 0, NONE, 0, 0}, results);
    }

    static int[] accepted(int acceptStat, int... body) {
        return cat(new int[] {REPLY, 0, NONE, 0, acceptStat}, body);
    }

    static final int[] PROG_UNAVAIL = accepted(1);
    static final int[] PROG_MISMATCH_2_5 = accepted(2, 2, 5);
    static final int[] PROC_UNAVAIL = accepted(3);
    static final int[] GARBAGE_ARGS = accepted(4);
    static final int[] RPC_MISMATCH_2_2 = {REPLY, 1, 0, 2, 2};

    static int[] authError(int stat) {
        return new int[] {REPLY, 1, 1, stat};
    }

    static int[] cat(int[]... parts) {
        int n = 0;
        for (int[] p : parts) {
            n += p.length;
        }
        int[] out = new int[n];
        int at = 0;
        for (int[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    static int[] repeat(int word, int times) {
        int[] a = new int[times];
        java.util.Arrays.fill(a, word);
        return a;
    }

    /** An AUTH_SYS credential: stamp 7, machinename "host", uid 1000, gid 100, gids {10, 20}. */
    static final int[] AUTH_SYS_1000 = {SYS, 32, 7, 4, 0x686f7374, 1000, 100, 2, 10, 20};

    static final List<Case> CASES = cases();

    private static List<Case> cases() {
        List<Case> c = new ArrayList<>();
        // -- NULL (RFC 5531 §12.1: procedure 0 of every program version takes and returns void)
        c.add(ok("null-proc-0", "RFC 5531 §12.1", call(PROG, 2, 0), success()));
        c.add(ok("null-proc-0-other-version", "RFC 5531 §12.1", call(PROG, 5, 0), success()));
        c.add(ok("null-proc-0-ignores-args", "RFC 5531 §12.1 (by convention no arguments are read)",
                call(PROG, 2, 0, 0xdeadbeef, 2, 3), success()));
        c.add(ok("null-proc-0-auth-sys", "RFC 5531 §12.1, Appendix A", callCred(PROG, 2, 0, AUTH_SYS_1000), success()));
        c.add(ok("null-proc-0-auth-none-with-body", "RFC 5531 §10.1 (AUTH_NONE's body is undefined; zero length"
                + " only recommended)", callCred(PROG, 2, 0, new int[] {NONE, 8, 1, 2}), success()));
        // -- program and version (RFC 5531 §9 accept_stat)
        c.add(ok("unexported-program", "RFC 5531 §9 PROG_UNAVAIL", call(PROG - 1, 2, 1, 1), PROG_UNAVAIL));
        c.add(ok("unexported-program-null", "RFC 5531 §9 PROG_UNAVAIL", call(PROG - 1, 2, 0), PROG_UNAVAIL));
        c.add(ok("program-zero", "RFC 5531 §9 PROG_UNAVAIL", call(0, 0, 0), PROG_UNAVAIL));
        for (int v : new int[] {0, 1, 3, 4, 6, -1}) {
            c.add(ok("version-" + Integer.toUnsignedString(v) + "-mismatch", "RFC 5531 §9 PROG_MISMATCH: lowest and"
                    + " highest version supported", call(PROG, v, 1, 1), PROG_MISMATCH_2_5));
        }
        c.add(ok("version-mismatch-null", "RFC 5531 §9: the version is checked before the procedure",
                call(PROG, 3, 0), PROG_MISMATCH_2_5));
        c.add(ok("unknown-procedure", "RFC 5531 §9 PROC_UNAVAIL", call(PROG, 2, 99), PROC_UNAVAIL));
        c.add(ok("unknown-procedure-max", "RFC 5531 §9 PROC_UNAVAIL", call(PROG, 2, -1), PROC_UNAVAIL));
        c.add(ok("procedure-of-other-version", "RFC 5531 §9 PROC_UNAVAIL (v5 has no procedure 2)",
                call(PROG, 5, 2, 7), PROC_UNAVAIL));
        c.add(ok("unknown-procedure-garbage-args", "RFC 5531 §9: no procedure, so no arguments to decode",
                call(PROG, 2, 99, 0xFFFFFFFF), PROC_UNAVAIL));
        // -- RPC version (RFC 5531 §9 reject_stat RPC_MISMATCH, with the versions we speak: 2..2)
        for (int rv : new int[] {0, 1, 3, -1}) {
            c.add(ok("rpcvers-" + Integer.toUnsignedString(rv), "RFC 5531 §9 MSG_DENIED RPC_MISMATCH",
                    new int[] {CALL, rv, PROG, 2, 0, NONE, 0, NONE, 0}, RPC_MISMATCH_2_2));
        }
        c.add(ok("rpcvers-3-unexported-program", "RFC 5531 §9: rpcvers decides how the rest is read",
                new int[] {CALL, 3, PROG - 1, 2, 0, NONE, 0, NONE, 0}, RPC_MISMATCH_2_2));
        c.add(ok("rpcvers-3-rest-missing", "RFC 5531 §9 RPC_MISMATCH", new int[] {CALL, 3}, RPC_MISMATCH_2_2));
        // -- credentials and verifiers (RFC 5531 §8.2 opaque_auth<400>, §9 AUTH_ERROR)
        c.add(ok("cred-body-over-400", "RFC 5531 §8.2 body<400>, §9 AUTH_BADCRED",
                cat(new int[] {CALL, 2, PROG, 2, 0, SYS, 404}, repeat(0, 101), new int[] {NONE, 0}), authError(1)));
        c.add(big("cred-length-near-2^32", "RFC 5531 §8.2, §9 AUTH_BADCRED",
                new int[] {CALL, 2, PROG, 2, 0, SYS, 0xFFFFFFFF, 0, 0}, authError(1)));
        c.add(big("cred-length-2^32-minus-4", "RFC 5531 §8.2, §9 AUTH_BADCRED",
                new int[] {CALL, 2, PROG, 2, 0, SYS, 0xFFFFFFFC, 0, 0}, authError(1)));
        c.add(ok("cred-past-message", "RFC 5531 §9 AUTH_BADCRED", new int[] {CALL, 2, PROG, 2, 0, SYS, 40, 1, 2},
                authError(1)));
        c.add(ok("cred-missing", "RFC 5531 §9 AUTH_BADCRED", new int[] {CALL, 2, PROG, 2, 0}, authError(1)));
        c.add(ok("cred-length-missing", "RFC 5531 §9 AUTH_BADCRED", new int[] {CALL, 2, PROG, 2, 0, SYS}, authError(1)));
        c.add(ok("auth-sys-body-truncated", "RFC 5531 Appendix A, §9 AUTH_BADCRED",
                callCred(PROG, 2, 0, new int[] {SYS, 4, 7}), authError(1)));
        c.add(ok("auth-sys-machinename-over-255", "RFC 5531 Appendix A machinename<255>, §9 AUTH_BADCRED",
                callCred(PROG, 2, 0, cat(new int[] {SYS, 276, 7, 256}, repeat(0x61616161, 64), new int[] {1000, 100, 0})),
                authError(1)));
        c.add(ok("auth-sys-machinename-not-utf8", "RFC 5531 Appendix A, §9 AUTH_BADCRED (a body that does not decode)",
                callCred(PROG, 2, 0, new int[] {SYS, 24, 7, 4, 0x68C32874, 1000, 100, 0}), authError(1)));
        c.add(ok("auth-sys-machinename-255-bytes-not-utf8", "RFC 5531 Appendix A, §9 AUTH_BADCRED",
                callCred(PROG, 2, 0, cat(new int[] {SYS, 276, 7, 255}, repeat(0xFFFFFFFF, 63), new int[] {0xFFFFFF00,
                        1000, 100, 0})), authError(1)));
        c.add(ok("auth-sys-gids-over-16", "RFC 5531 Appendix A gids<16>, §9 AUTH_BADCRED",
                callCred(PROG, 2, 0, cat(new int[] {SYS, 88, 7, 0, 1000, 100, 17}, repeat(5, 17))), authError(1)));
        c.add(big("auth-sys-gids-near-2^32", "RFC 5531 Appendix A gids<16>, §9 AUTH_BADCRED",
                callCred(PROG, 2, 0, new int[] {SYS, 20, 7, 0, 1000, 100, 0xFFFFFFFF}), authError(1)));
        c.add(ok("cred-flavor-unknown", "RFC 5531 §9 AUTH_ERROR (AUTH_BADCRED, as Linux's svc_authenticate)",
                callCred(PROG, 2, 0, new int[] {99, 0}), authError(1)));
        c.add(ok("cred-bad-before-program", "RFC 5531 §9: a call is authenticated before it is dispatched",
                callCred(PROG - 1, 2, 0, new int[] {SYS, 4, 7}), authError(1)));
        c.add(ok("verf-body-over-400", "RFC 5531 §8.2, §9 AUTH_BADVERF",
                cat(new int[] {CALL, 2, PROG, 2, 0, NONE, 0, NONE, 401}, repeat(0, 101)), authError(3)));
        c.add(ok("verf-missing", "RFC 5531 §9 AUTH_BADVERF", new int[] {CALL, 2, PROG, 2, 0, NONE, 0}, authError(3)));
        c.add(ok("header-truncated", "RFC 5531 is silent; answered (not dropped) so the RDMA credit returns",
                new int[] {CALL, 2, PROG}, GARBAGE_ARGS));
        c.add(ok("auth-sys-visible-to-handler", "RFC 5531 Appendix A", callCred(PROG, 2, 10, AUTH_SYS_1000),
                success(1000)));
        c.add(ok("auth-none-handler-sees-none", "RFC 5531 §10.1", call(PROG, 2, 10), success(-1)));
        // -- arguments (RFC 4506 types; RFC 5531 §9 GARBAGE_ARGS)
        c.add(ok("bool-1", "RFC 4506 §4.4", call(PROG, 2, 1, 1), success(1)));
        c.add(ok("bool-0-on-v5", "RFC 4506 §4.4", call(PROG, 5, 1, 0), success(0)));
        c.add(ok("bool-2", "RFC 4506 §4.4 bool is 0 or 1; GARBAGE_ARGS", call(PROG, 2, 1, 2), GARBAGE_ARGS));
        c.add(ok("bool-max", "RFC 4506 §4.4; GARBAGE_ARGS", call(PROG, 2, 1, -1), GARBAGE_ARGS));
        c.add(ok("bool-missing", "RFC 5531 §9 GARBAGE_ARGS", call(PROG, 2, 1), GARBAGE_ARGS));
        c.add(ok("enum-in-set", "RFC 4506 §4.3", call(PROG, 2, 2, 7), success(7)));
        c.add(ok("enum-outside-set", "RFC 4506 §4.3 only declared values; GARBAGE_ARGS", call(PROG, 2, 2, 3),
                GARBAGE_ARGS));
        c.add(ok("enum-negative", "RFC 4506 §4.3; GARBAGE_ARGS", call(PROG, 2, 2, -1), GARBAGE_ARGS));
        c.add(ok("opaque-empty", "RFC 4506 §4.10", call(PROG, 2, 3, 0), success(0)));
        c.add(ok("opaque-one-byte", "RFC 4506 §4.10 (3 zero pad bytes)", call(PROG, 2, 3, 1, 0xAB000000),
                success(1, 0xAB000000)));
        c.add(ok("opaque-unaligned-5", "RFC 4506 §4.10", call(PROG, 2, 3, 5, 0x01020304, 0x05000000),
                success(5, 0x01020304, 0x05000000)));
        c.add(ok("opaque-at-bound", "RFC 4506 §4.10 opaque<16>", call(PROG, 2, 3, 16, 1, 2, 3, 4),
                success(16, 1, 2, 3, 4)));
        c.add(ok("opaque-over-bound", "RFC 4506 §4.10 opaque<16>; GARBAGE_ARGS", call(PROG, 2, 3, 17, 1, 2, 3, 4, 0x05000000),
                GARBAGE_ARGS));
        c.add(big("opaque-bounded-length-near-2^32", "RFC 4506 §4.10; GARBAGE_ARGS", call(PROG, 2, 3, -1), GARBAGE_ARGS));
        c.add(big("opaque-length-2^32-1", "RFC 4506 §4.10; GARBAGE_ARGS, nothing allocated", call(PROG, 2, 7, -1),
                GARBAGE_ARGS));
        c.add(big("opaque-length-2^32-3", "RFC 4506 §4.10; the roundup must not wrap", call(PROG, 2, 7, 0xFFFFFFFD, 0),
                GARBAGE_ARGS));
        c.add(big("opaque-length-2^31-1", "RFC 4506 §4.10; GARBAGE_ARGS, nothing allocated",
                call(PROG, 2, 7, 0x7FFFFFFF, 0), GARBAGE_ARGS));
        c.add(ok("opaque-past-message", "RFC 5531 §9 GARBAGE_ARGS", call(PROG, 2, 7, 8, 1), GARBAGE_ARGS));
        c.add(ok("opaque-pad-missing", "RFC 4506 §4.10 (the pad is part of the item)", call(PROG, 2, 7, 5, 0x01020304),
                GARBAGE_ARGS));
        c.add(ok("opaque-nonzero-pad", "RFC 4506 §4.10 residual bytes are zero", call(PROG, 2, 3, 1, 0xABCDEF01),
                GARBAGE_ARGS));
        c.add(ok("string-at-bound", "RFC 4506 §4.11 string<16>", call(PROG, 2, 4, 16, 0x61626364, 0x65666768,
                0x696a6b6c, 0x6d6e6f70), success(16, 0x61626364, 0x65666768, 0x696a6b6c, 0x6d6e6f70)));
        c.add(ok("string-unaligned-3", "RFC 4506 §4.11", call(PROG, 2, 4, 3, 0x61626300), success(3, 0x61626300)));
        c.add(ok("string-over-bound", "RFC 4506 §4.11 string<16>; GARBAGE_ARGS", call(PROG, 2, 4, 17, 1, 2, 3, 4, 0),
                GARBAGE_ARGS));
        c.add(big("string-length-near-2^32", "RFC 4506 §4.11; GARBAGE_ARGS", call(PROG, 2, 4, -1), GARBAGE_ARGS));
        c.add(ok("array-empty", "RFC 4506 §4.13", call(PROG, 2, 5, 0), success(0)));
        c.add(ok("array-at-bound", "RFC 4506 §4.13 int<4>", call(PROG, 2, 5, 4, 1, 2, 3, 4), success(4, 1, 2, 3, 4)));
        c.add(ok("array-over-bound", "RFC 4506 §4.13 int<4>; GARBAGE_ARGS", call(PROG, 2, 5, 5, 1, 2, 3, 4, 5),
                GARBAGE_ARGS));
        c.add(ok("array-one", "RFC 4506 §4.13", call(PROG, 2, 8, 1, 0x80000000), success(1, 0x80000000)));
        c.add(big("array-count-2^30", "RFC 4506 §4.13; count*4 = 2^32 wraps to 0 in 32 bits",
                call(PROG, 2, 8, 0x40000000), GARBAGE_ARGS));
        c.add(big("array-count-2^30+1", "RFC 4506 §4.13; count*4 wraps to 4 in 32 bits, 4 bytes present",
                call(PROG, 2, 8, 0x40000001, 7), GARBAGE_ARGS));
        c.add(big("array-count-near-2^32", "RFC 4506 §4.13; GARBAGE_ARGS", call(PROG, 2, 8, -1, 7), GARBAGE_ARGS));
        c.add(ok("array-past-message", "RFC 5531 §9 GARBAGE_ARGS", call(PROG, 2, 8, 3, 1, 2), GARBAGE_ARGS));
        c.add(ok("optional-absent", "RFC 4506 §4.19", call(PROG, 2, 6, 0), success(0)));
        c.add(ok("optional-present", "RFC 4506 §4.19", call(PROG, 2, 6, 1, -5), success(1, -5)));
        c.add(ok("optional-discriminant-2", "RFC 4506 §4.19 (a bool); GARBAGE_ARGS", call(PROG, 2, 6, 2, 5),
                GARBAGE_ARGS));
        c.add(ok("optional-value-missing", "RFC 5531 §9 GARBAGE_ARGS", call(PROG, 2, 6, 1), GARBAGE_ARGS));
        c.add(ok("fixed-opaque", "RFC 4506 §4.9 opaque[5]", call(PROG, 2, 9, 0x01020304, 0x05000000),
                success(0x01020304, 0x05000000)));
        c.add(ok("fixed-opaque-truncated", "RFC 4506 §4.9; GARBAGE_ARGS", call(PROG, 2, 9, 0x01020304), GARBAGE_ARGS));
        // -- boundary values round-trip bit for bit (RFC 4506 §4.1-4.7)
        int[] edge1 = {0x80000000, 0xFFFFFFFF, 0x80000000, 0, 0xFFFFFFFF, 0xFFFFFFFF, 0x7FC12345, 0x80000000, 0};
        c.add(ok("prims-int-min-uint-max-nan-payload-negative-zero", "RFC 4506 §4.1-4.7", call(PROG, 2, 11, edge1),
                success(edge1)));
        int[] edge2 = {0x7FFFFFFF, 0, 0x7FFFFFFF, 0xFFFFFFFF, 0, 0, 0x80000000, 0x7FF80000, 0xDEADBEEF};
        c.add(ok("prims-int-max-zero-negative-zero-float-nan-double", "RFC 4506 §4.1-4.7", call(PROG, 2, 11, edge2),
                success(edge2)));
        int[] edge3 = {0, 0, 0, 1, 0, 0, 0x7F800001, 0xFFF00000, 1};
        c.add(ok("prims-signalling-nan-bits", "RFC 4506 §4.6-4.7 (the bits, whatever they are)",
                call(PROG, 2, 11, edge3), success(edge3)));
        c.add(ok("prims-truncated", "RFC 5531 §9 GARBAGE_ARGS", call(PROG, 2, 11, 1, 2), GARBAGE_ARGS));
        return List.copyOf(c);
    }

    private static Case ok(String name, String rfc, int[] call, int[] reply) {
        return new Case(name, rfc, call, reply, false);
    }

    private static Case big(String name, String rfc, int[] call, int[] reply) {
        return new Case(name, rfc, call, reply, true);
    }
}
