package org.rpcrdma.nfs4;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.rpcrdma.xdr.AuthSys;

/**
 * Each operation's arguments against the layout RFC 5662 gives (written here word by word
 * with {@link XdrBytes}, not with the codecs), inside a COMPOUND4args.
 */
class OpsEncodeTest {
    static final byte[] SESSION = XdrBytes.seq(16, 0xa0);
    static final Stateid STATEID = new Stateid(7, XdrBytes.seq(12, 0x30));

    /** COMPOUND4args {tag, minorversion 1, argarray of one op} around {@code op}'s bytes. */
    static byte[] compoundOf(int opnum, byte[] args) {
        return new XdrBytes().str("").u32(1, 1, opnum).fixed(args).bytes();
    }

    static byte[] encoded(Op<?> op) {
        return XdrBytes.written(w -> Compound.ARGS.encode(w, Compound.of(op)));
    }

    static XdrBytes stateid() {
        return new XdrBytes().u32(7).fixed(XdrBytes.seq(12, 0x30));
    }

    @Test
    void compoundHeaderCarriesTagMinorVersionOneAndTheOpCount() {
        byte[] got = XdrBytes.written(w -> Compound.ARGS.encode(w,
                Compound.of(FileOps.putRootFh(), FileOps.getFh()).tagged("abcde")));
        assertArrayEquals(new XdrBytes().u32(5).fixed("abcde".getBytes(StandardCharsets.UTF_8))
                .u32(1, 2, 24, 10).bytes(), got);
    }

    @Test
    void sequence() {
        assertArrayEquals(compoundOf(53, new XdrBytes().fixed(SESSION).u32(9, 3, 5, 1).bytes()),
                encoded(SessionOps.sequence(SESSION, 9, 3, 5, true)));
    }

    @Test
    void exchangeIdWithSp4NoneAndNoImplementationId() {
        byte[] verifier = XdrBytes.seq(8, 1);
        byte[] owner = "owner-x".getBytes(StandardCharsets.UTF_8); // 7 bytes: one pad byte
        assertArrayEquals(compoundOf(42, new XdrBytes().fixed(verifier).opaque(owner).u32(0, 0, 0).bytes()),
                encoded(SessionOps.exchangeId(verifier, owner)));
    }

    @Test
    void createSessionWithBackChannelAndAuthSysCallbackSecurity() {
        ChannelAttrs fore = new ChannelAttrs(0, 1_114_112, 1_114_112, 4096, 16, 16, -1);
        ChannelAttrs back = new ChannelAttrs(0, 4096, 4096, 0, 8, 4, -1);
        AuthSys cred = new AuthSys(77, "host", 0, 10, new int[] {20, 30});
        byte[] want = new XdrBytes().u64(0x1122334455667788L).u32(5, 2)
                .u32(0, 1_114_112, 1_114_112, 4096, 16, 16, 0) // fore, ca_rdma_ird<1> empty
                .u32(0, 4096, 4096, 0, 8, 4, 0) // back
                .u32(0x40000000) // csa_cb_program
                .u32(1, 1) // one callback_sec_parms4, AUTH_SYS
                .u32(77).str("host").u32(0, 10, 2, 20, 30) // authsys_parms
                .bytes();
        assertArrayEquals(compoundOf(43, want), encoded(SessionOps.createSession(0x1122334455667788L, 5,
                Nfs4.CREATE_SESSION4_FLAG_CONN_BACK_CHAN, fore, back, Nfs4.CB_PROGRAM, cred)));
        ChannelAttrs withIrd = new ChannelAttrs(0, 1, 2, 3, 4, 5, 6);
        assertArrayEquals(new XdrBytes().u32(0, 1, 2, 3, 4, 5, 1, 6).bytes(),
                XdrBytes.written(withIrd::encode), "ca_rdma_ird<1> with one value");
    }

    @Test
    void reclaimCompleteDestroySessionDestroyClientId() {
        assertArrayEquals(compoundOf(58, new XdrBytes().u32(0).bytes()), encoded(SessionOps.reclaimComplete(false)));
        assertArrayEquals(compoundOf(44, SESSION), encoded(SessionOps.destroySession(SESSION)));
        assertArrayEquals(compoundOf(57, new XdrBytes().u64(-2L).bytes()), encoded(SessionOps.destroyClientId(-2L)));
    }

    @Test
    void putRootFhPutFhGetFhLookupGetattr() {
        assertArrayEquals(compoundOf(24, new byte[0]), encoded(FileOps.putRootFh()));
        assertArrayEquals(compoundOf(10, new byte[0]), encoded(FileOps.getFh()));
        byte[] fh = XdrBytes.seq(30, 1);
        assertArrayEquals(compoundOf(22, new XdrBytes().opaque(fh).bytes()), encoded(FileOps.putFh(fh)));
        assertArrayEquals(compoundOf(15, new XdrBytes().str("file.txt").bytes()), encoded(FileOps.lookup("file.txt")));
        // bitmap4: FATTR4_SIZE (4) in word 0, FATTR4_FILEID (20) in word 0 too; 33 in word 1
        assertArrayEquals(compoundOf(9, new XdrBytes().u32(2, (1 << 4) | (1 << 20), 1 << 1).bytes()),
                encoded(FileOps.getattr(Nfs4.FATTR4_SIZE, Nfs4.FATTR4_FILEID, 33)));
    }

    @Test
    void openClaimNullNoCreateWithAReadDelegationWanted() {
        byte[] owner = XdrBytes.seq(5, 9);
        byte[] want = new XdrBytes().u32(0) // seqid
                .u32(0x0101, 0) // share_access READ | WANT_READ_DELEG, share_deny NONE
                .u64(42).opaque(owner) // open_owner4
                .u32(0) // openflag4: OPEN4_NOCREATE
                .u32(0).str("f") // open_claim4: CLAIM_NULL, component4
                .bytes();
        assertArrayEquals(compoundOf(18, want), encoded(FileOps.open(
                Nfs4.OPEN4_SHARE_ACCESS_READ | Nfs4.OPEN4_SHARE_ACCESS_WANT_READ_DELEG, 0, 42, owner, "f")));
    }

    @Test
    void readWriteCloseDelegReturn() {
        assertArrayEquals(compoundOf(25, stateid().u64(1L << 33).u32(4096).bytes()),
                encoded(FileOps.read(STATEID, 1L << 33, 4096, MemorySegment.ofArray(new byte[4096]))));
        byte[] data = XdrBytes.seq(6, 0x41);
        assertArrayEquals(compoundOf(38, stateid().u64(8).u32(2).opaque(data).bytes()),
                encoded(FileOps.write(STATEID, 8, Nfs4.FILE_SYNC4, MemorySegment.ofArray(data))));
        assertArrayEquals(compoundOf(4, new XdrBytes().u32(0).fixed(stateid().bytes()).bytes()),
                encoded(FileOps.close(STATEID)));
        assertArrayEquals(compoundOf(8, stateid().bytes()), encoded(FileOps.delegReturn(STATEID)));
    }

    @Test
    void readdirFromTheStart() {
        byte[] verf = new byte[8];
        assertArrayEquals(compoundOf(26, new XdrBytes().u64(0).fixed(verf).u32(8192, 65536).u32(1, 1 << 20).bytes()),
                encoded(FileOps.readdir(0, verf, 8192, 65536, Nfs4.FATTR4_FILEID)));
    }

    @Test
    void argumentsOutsideTheirTypesAreRefusedBeforeEncoding() {
        assertThrows(IllegalArgumentException.class, () -> SessionOps.sequence(new byte[15], 1, 0, 0, false));
        assertThrows(IllegalArgumentException.class, () -> SessionOps.exchangeId(new byte[7], new byte[1]));
        assertThrows(IllegalArgumentException.class, () -> SessionOps.exchangeId(new byte[8], new byte[1025]));
        assertThrows(IllegalArgumentException.class, () -> FileOps.putFh(new byte[129]));
        assertThrows(IllegalArgumentException.class, () -> FileOps.lookup(""));
        assertThrows(IllegalArgumentException.class, () -> new Stateid(0, new byte[11]));
        assertThrows(IllegalArgumentException.class, () -> FileOps.getattr(256));
        assertThrows(IllegalArgumentException.class,
                () -> FileOps.read(STATEID, 0, 10, MemorySegment.ofArray(new byte[9])));
        assertThrows(IllegalArgumentException.class, Compound::of);
    }
}
