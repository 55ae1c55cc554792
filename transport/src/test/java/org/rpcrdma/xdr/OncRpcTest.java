package org.rpcrdma.xdr;

import static org.junit.jupiter.api.Assertions.*;
import static org.rpcrdma.xdr.XdrBytes.*;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** ONC RPC (RFC 5531) call and reply headers, and the CALL/REPLY classifier. */
class OncRpcTest {
    static final int XID = 0x11223344;
    static final int NFS = 100003;

    private static XdrWriter writer(byte[] b) {
        return new XdrWriter(MemorySegment.ofArray(b), 0, b.length);
    }

    private static XdrReader reader(byte[] b) {
        return new XdrReader(MemorySegment.ofArray(b), 0, b.length);
    }

    @Test
    void callAuthNoneGolden() throws Exception {
        byte[] b = new byte[40];
        assertEquals(40, RpcCallHeader.encodeAuthNone(writer(b), XID, NFS, 4, 1));
        assertEquals(hex(words(XID, 0, 2, NFS, 4, 1, 0, 0, 0, 0)), hex(b));
        RpcCallHeader h = new RpcCallHeader().decode(reader(b));
        assertEquals(XID, h.xid());
        assertEquals(NFS, h.prog());
        assertEquals(4, h.vers());
        assertEquals(1, h.proc());
        assertEquals(OncRpc.AUTH_NONE, h.credFlavor());
        assertEquals(0, h.credLength());
        assertEquals(40, h.argsOffset());
    }

    @Test
    void callAuthSysGoldenAndRoundTrip() throws Exception {
        AuthSys sys = new AuthSys(0x5a5a, "host", 1000, 100, new int[] {4, 24});
        OpaqueAuth cred = sys.toOpaqueAuth();
        byte[] name = "host".getBytes(StandardCharsets.US_ASCII);
        byte[] body = cat(words(0x5a5a, 4), name, words(1000, 100, 2, 4, 24));
        assertEquals(hex(body), hex(cred.body()));

        byte[] b = new byte[RpcCallHeader.encodedLength(cred, OpaqueAuth.NONE) + 8];
        int n = RpcCallHeader.encode(writer(b), XID, NFS, 3, 6, cred, OpaqueAuth.NONE);
        assertEquals(24 + 8 + body.length + 8, n);
        assertEquals(hex(cat(words(XID, 0, 2, NFS, 3, 6, OncRpc.AUTH_SYS, body.length), body, words(0, 0))),
                hex(java.util.Arrays.copyOf(b, n)));

        RpcCallHeader h = new RpcCallHeader().decode(reader(b));
        assertEquals(OncRpc.AUTH_SYS, h.credFlavor());
        assertEquals(sys, h.authSys());
        assertEquals(n, h.argsOffset());
    }

    @Test
    void authSysPadsMachineName() throws Exception {
        AuthSys sys = new AuthSys(1, "abcde", 0, 0, new int[0]);
        byte[] body = sys.toOpaqueAuth().body();
        assertEquals(hex(cat(words(1, 5), "abcd".getBytes(StandardCharsets.US_ASCII), new byte[] {'e', 0, 0, 0},
                words(0, 0, 0))), hex(body));
        assertEquals(sys, AuthSys.decode(MemorySegment.ofArray(body), 0, body.length));
    }

    @Test
    void authSysLimits() {
        assertThrows(IllegalArgumentException.class, () -> new AuthSys(0, "x".repeat(256), 0, 0, new int[0]));
        assertThrows(IllegalArgumentException.class, () -> new AuthSys(0, "x", 0, 0, new int[17]));
        byte[] tooManyGids = words(1, 0, 0, 0, 17);
        RpcMessageException e = assertThrows(RpcMessageException.class,
                () -> AuthSys.decode(MemorySegment.ofArray(tooManyGids), 0, tooManyGids.length));
        assertEquals(RpcMessageException.Reason.BAD_AUTH_SYS, e.reason());
        byte[] longName = words(1, 300);
        assertThrows(RpcMessageException.class, () -> AuthSys.decode(MemorySegment.ofArray(longName), 0, 8));
        assertThrows(IllegalArgumentException.class, () -> new OpaqueAuth(1, new byte[401]));
    }

    @Test
    void callDecodeErrors() {
        RpcMessageException e = assertThrows(RpcMessageException.class,
                () -> new RpcCallHeader().decode(reader(words(XID, 0, 3, NFS, 4, 0, 0, 0, 0, 0))));
        assertEquals(RpcMessageException.Reason.RPC_VERSION_MISMATCH, e.reason());
        assertTrue(e.hasXid());
        assertEquals(XID, e.xid());

        e = assertThrows(RpcMessageException.class, () -> new RpcCallHeader().decode(reader(words(XID, 1))));
        assertEquals(RpcMessageException.Reason.BAD_MSG_TYPE, e.reason());

        for (int cut = 0; cut < 40; cut += 4) {
            byte[] b = java.util.Arrays.copyOf(words(XID, 0, 2, NFS, 4, 1, 0, 0, 0, 0), cut);
            e = assertThrows(RpcMessageException.class, () -> new RpcCallHeader().decode(reader(b)));
            // cut inside the fixed words: malformed; inside the credential (words 6-7) or the
            // verifier (words 8-9): its own reason, so a server can answer AUTH_ERROR
            RpcMessageException.Reason want = cut < 24 ? RpcMessageException.Reason.MALFORMED
                    : cut < 32 ? RpcMessageException.Reason.BAD_CREDENTIAL : RpcMessageException.Reason.BAD_VERIFIER;
            assertEquals(want, e.reason(), "cut at " + cut);
            assertEquals(cut >= 4, e.hasXid());
        }
        // Credential longer than 400 bytes, and one that claims ~2^32 bytes.
        for (int len : new int[] {404, -4, -1}) {
            e = assertThrows(RpcMessageException.class,
                    () -> new RpcCallHeader().decode(reader(words(XID, 0, 2, NFS, 4, 1, 1, len, 0, 0))));
            assertEquals(RpcMessageException.Reason.BAD_CREDENTIAL, e.reason());
            assertEquals(XID, e.xid());
        }
        // Verifier longer than 400 bytes.
        e = assertThrows(RpcMessageException.class,
                () -> new RpcCallHeader().decode(reader(words(XID, 0, 2, NFS, 4, 1, 0, 0, 0, 401))));
        assertEquals(RpcMessageException.Reason.BAD_VERIFIER, e.reason());
    }

    @Test
    void replyShapesGoldenAndDecode() throws Exception {
        byte[] b = new byte[64];
        RpcReplyHeader r = new RpcReplyHeader();

        int n = RpcReplyHeader.encodeAccepted(writer(b), XID, OpaqueAuth.NONE, OncRpc.SUCCESS);
        assertEquals(hex(words(XID, 1, 0, 0, 0, 0)), hex(java.util.Arrays.copyOf(b, n)));
        r.decode(reader(b));
        assertTrue(r.isSuccess());
        assertEquals(24, r.resultsOffset());

        n = RpcReplyHeader.encodeProgMismatch(writer(b), XID, OpaqueAuth.NONE, 3, 4);
        assertEquals(hex(words(XID, 1, 0, 0, 0, 2, 3, 4)), hex(java.util.Arrays.copyOf(b, n)));
        r.decode(reader(b));
        assertEquals(OncRpc.PROG_MISMATCH, r.acceptStat());
        assertEquals(3, r.mismatchLow());
        assertEquals(4, r.mismatchHigh());
        assertFalse(r.isSuccess());

        for (int stat : new int[] {OncRpc.PROG_UNAVAIL, OncRpc.PROC_UNAVAIL, OncRpc.GARBAGE_ARGS, OncRpc.SYSTEM_ERR}) {
            RpcReplyHeader.encodeAccepted(writer(b), XID, OpaqueAuth.NONE, stat);
            assertEquals(stat, r.decode(reader(b)).acceptStat());
        }

        n = RpcReplyHeader.encodeRpcMismatch(writer(b), XID, 2, 2);
        assertEquals(hex(words(XID, 1, 1, 0, 2, 2)), hex(java.util.Arrays.copyOf(b, n)));
        r.decode(reader(b));
        assertEquals(OncRpc.MSG_DENIED, r.replyStat());
        assertEquals(OncRpc.RPC_MISMATCH, r.rejectStat());
        assertEquals(2, r.mismatchHigh());
        assertEquals(-1, r.acceptStat());

        n = RpcReplyHeader.encodeAuthError(writer(b), XID, OncRpc.AUTH_TOOWEAK);
        assertEquals(hex(words(XID, 1, 1, 1, 5)), hex(java.util.Arrays.copyOf(b, n)));
        r.decode(reader(b));
        assertEquals(OncRpc.AUTH_ERROR, r.rejectStat());
        assertEquals(OncRpc.AUTH_TOOWEAK, r.authStat());
    }

    @Test
    void replyWithVerifierBody() throws Exception {
        byte[] b = new byte[64];
        OpaqueAuth verf = new OpaqueAuth(6, new byte[] {1, 2, 3, 4, 5});
        int n = RpcReplyHeader.encodeAccepted(writer(b), XID, verf, OncRpc.SUCCESS);
        assertEquals(hex(cat(words(XID, 1, 0, 6, 5), new byte[] {1, 2, 3, 4, 5, 0, 0, 0}, words(0))),
                hex(java.util.Arrays.copyOf(b, n)));
        RpcReplyHeader r = new RpcReplyHeader().decode(reader(b));
        assertEquals(6, r.verfFlavor());
        assertEquals(5, r.verfLength());
        assertEquals(20, r.verfOffset());
        assertEquals(n, r.resultsOffset());
    }

    @Test
    void replyDecodeErrors() {
        record Case(byte[] bytes, RpcMessageException.Reason reason) { }
        Case[] cases = {
            new Case(words(XID, 0, 0), RpcMessageException.Reason.BAD_MSG_TYPE),
            new Case(words(XID, 1, 2), RpcMessageException.Reason.BAD_REPLY_STAT),
            new Case(words(XID, 1, 0, 0, 0, 6), RpcMessageException.Reason.BAD_ACCEPT_STAT),
            new Case(words(XID, 1, 1, 2), RpcMessageException.Reason.BAD_REJECT_STAT),
            new Case(words(XID, 1, 0, 0, 0, 2, 3), RpcMessageException.Reason.MALFORMED),
            new Case(words(XID, 1, 1, 0, 2), RpcMessageException.Reason.MALFORMED),
            new Case(words(XID, 1, 0, 0, 8, 0), RpcMessageException.Reason.MALFORMED),
            new Case(words(XID), RpcMessageException.Reason.MALFORMED),
        };
        for (Case c : cases) {
            RpcMessageException e = assertThrows(RpcMessageException.class,
                    () -> new RpcReplyHeader().decode(reader(c.bytes())));
            assertEquals(c.reason(), e.reason(), hex(c.bytes()));
            assertEquals(0, e.getStackTrace().length);
        }
    }

    @Test
    void classifyIsBounded() throws Exception {
        MemorySegment call = MemorySegment.ofArray(words(XID, 0));
        MemorySegment reply = MemorySegment.ofArray(words(XID, 1));
        assertEquals(OncRpc.CALL, RpcMessage.classify(call, 0, 8));
        assertEquals(OncRpc.REPLY, RpcMessage.classify(reply, 0, 8));
        assertEquals(RpcMessage.UNKNOWN, RpcMessage.classify(MemorySegment.ofArray(words(XID, 2)), 0, 8));
        assertEquals(RpcMessage.UNKNOWN, RpcMessage.classify(call, 0, 7), "too short: no read");
        assertEquals(RpcMessage.UNKNOWN, RpcMessage.classify(MemorySegment.NULL, 0, 0));
        assertEquals(XID, RpcMessage.xid(call, 0, 4));
        assertThrows(RpcMessageException.class, () -> RpcMessage.xid(call, 0, 3));
    }
}
