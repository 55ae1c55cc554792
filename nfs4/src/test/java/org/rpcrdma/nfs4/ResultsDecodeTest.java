package org.rpcrdma.nfs4;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rpcrdma.xdr.XdrException;

/**
 * COMPOUND4res for each operation, written by hand from RFC 5662, decoded by
 * {@link Compound}; then replies a hostile or broken server could send: each a typed
 * {@link XdrException} (the call fails as a malformed reply), never an allocation of a
 * claimed length or a read past the message.
 */
class ResultsDecodeTest {
    static final byte[] SESSION = XdrBytes.seq(16, 0xa0);
    static final byte[] OTHER = XdrBytes.seq(12, 0x30);

    /** COMPOUND4res header: status, empty tag, count. */
    static XdrBytes res(int status, int count) {
        return new XdrBytes().u32(status).str("").u32(count);
    }

    static XdrBytes sequenceOk(XdrBytes b) {
        return b.u32(53, 0).fixed(SESSION).u32(9, 3, 5, 7, 0x200);
    }

    @Test
    void sequenceAndExchangeId() throws Exception {
        var seq = SessionOps.sequence(SESSION, 9, 3, 5, false);
        Compound c = Compound.of(seq);
        SessionOps.SequenceResult s = c.decodeResult(sequenceOk(res(0, 1)).reader()).get(seq);
        assertArrayEquals(SESSION, s.sessionId());
        assertEquals(List.of(9, 3, 5, 7, 0x200),
                List.of(s.sequenceId(), s.slotId(), s.highestSlotId(), s.targetHighestSlotId(), s.statusFlags()));

        var x = SessionOps.exchangeId(new byte[8], new byte[] {1});
        byte[] b = res(0, 1).u32(42, 0).u64(0xabcdef0123L).u32(1, 0x00010000, 0) // clientid, seqid, flags, SP4_NONE
                .u64(5).str("major").str("scope-1") // server_owner4, server_scope
                .u32(1).str("kernel.org").str("Linux 6.1").u64(1700000000L).u32(5) // nfs_impl_id4<1>
                .bytes();
        SessionOps.ExchangeIdResult e = Compound.of(x).decodeResult(reader(b)).get(x);
        assertEquals(0xabcdef0123L, e.clientId());
        assertEquals(1, e.sequenceId());
        assertEquals(5, e.serverMinorId());
        assertArrayEquals("major".getBytes(), e.serverMajorId());
        assertArrayEquals("scope-1".getBytes(), e.serverScope());
        assertEquals("kernel.org", e.implDomain());
        assertEquals("Linux 6.1", e.implName());
        byte[] noImpl = res(0, 1).u32(42, 0).u64(1).u32(1, 0, 0).u64(0).str("").str("").u32(0).bytes();
        assertEquals("", Compound.of(x).decodeResult(reader(noImpl)).get(x).implName());
        byte[] machCred = res(0, 1).u32(42, 0).u64(1).u32(1, 0, 1).bytes(); // SP4_MACH_CRED to our SP4_NONE
        assertThrows(XdrException.class, () -> Compound.of(x).decodeResult(reader(machCred)));
    }

    @Test
    void createSession() throws Exception {
        var cs = SessionOps.createSession(1, 1, 2, new ChannelAttrs(0, 1, 1, 1, 1, 1, -1),
                new ChannelAttrs(0, 1, 1, 1, 1, 1, -1), Nfs4.CB_PROGRAM, null);
        byte[] b = res(0, 1).u32(43, 0).fixed(SESSION).u32(1, 2) // sessionid, sequence, flags
                .u32(0, 1049620, 1049480, 2128, 8, 30, 0).u32(0, 4096, 4096, 0, 2, 1, 1, 16).bytes();
        SessionOps.SessionResult s = Compound.of(cs).decodeResult(reader(b)).get(cs);
        assertArrayEquals(SESSION, s.sessionId());
        assertEquals(2, s.flags());
        assertEquals(new ChannelAttrs(0, 1049620, 1049480, 2128, 8, 30, -1), s.fore());
        assertEquals(new ChannelAttrs(0, 4096, 4096, 0, 2, 1, 16), s.back());
    }

    @Test
    void putRootFhOpenWithAReadDelegationGetFh() throws Exception {
        var open = FileOps.open(1, 0, 1, new byte[1], "f");
        var fh = FileOps.getFh();
        Compound c = Compound.of(FileOps.putRootFh(), open, fh);
        byte[] b = res(0, 3).u32(24, 0)
                .u32(18, 0).u32(1).fixed(OTHER) // stateid
                .u32(1).u64(10).u64(11) // change_info4
                .u32(4).u32(1, 0) // rflags, attrset bitmap4 with one zero word
                .u32(1).u32(2).fixed(XdrBytes.seq(12, 0x70)).u32(0) // OPEN_DELEGATE_READ, stateid, recall false
                .u32(0, 0, 0).str("") // nfsace4
                .u32(10, 0).opaque(XdrBytes.seq(28, 1)) // GETFH
                .bytes();
        CompoundResult r = c.decodeResult(reader(b)).check();
        FileOps.OpenResult o = r.get(open);
        assertEquals(new Stateid(1, OTHER), o.stateid());
        assertTrue(o.atomic());
        assertEquals(11, o.changeAfter());
        assertEquals(4, o.rflags());
        assertTrue(o.delegation().isRead());
        assertEquals(new Stateid(2, XdrBytes.seq(12, 0x70)), o.delegation().stateid());
        assertArrayEquals(XdrBytes.seq(28, 1), r.get(fh));
        assertNull(r.get(c.ops().get(0)), "PUTROOTFH has no result body");
    }

    @Test
    void openDelegationArms() throws Exception {
        // OPEN_DELEGATE_NONE_EXT with WND4_CONTENTION and its bool; then WND4_NOT_WANTED (0): void
        assertEquals(Nfs4.WND4_CONTENTION, FileOps.delegation(new XdrBytes().u32(3, 7, 1).reader()).whyNone());
        assertEquals(0, FileOps.delegation(new XdrBytes().u32(3, 0).reader()).whyNone());
        assertNull(FileOps.delegation(new XdrBytes().u32(0).reader()).stateid());
        // OPEN_DELEGATE_WRITE: stateid, recall, nfs_space_limit4 (NFS_LIMIT_SIZE, uint64), nfsace4
        XdrBytes w = new XdrBytes().u32(2, 3).fixed(OTHER).u32(1).u32(1).u64(1 << 20).u32(0, 0, 0).str("OWNER@");
        FileOps.Delegation d = FileOps.delegation(w.reader());
        assertEquals(Nfs4.OPEN_DELEGATE_WRITE, d.type());
        assertTrue(d.recall());
        assertThrows(XdrException.class, () -> FileOps.delegation(new XdrBytes().u32(4).reader()));
        assertThrows(XdrException.class, () -> FileOps.delegation(new XdrBytes().u32(2, 3).fixed(OTHER)
                .u32(0, 3).reader()), "limit_by4 3 is not in the union");
    }

    @Test
    void readInlineWriteGetattrCloseReaddir() throws Exception {
        MemorySegment receptacle = MemorySegment.ofArray(new byte[16]);
        var read = FileOps.read(new Stateid(0, OTHER), 0, 16, receptacle);
        var write = FileOps.write(new Stateid(0, OTHER), 0, 0, MemorySegment.ofArray(new byte[3]));
        var ga = FileOps.getattr(Nfs4.FATTR4_TYPE, Nfs4.FATTR4_SIZE);
        var close = FileOps.close(new Stateid(1, OTHER));
        var rd = FileOps.readdir(0, new byte[8], 100, 100);
        Compound c = Compound.of(read, write, ga, close, rd);
        byte[] b = res(0, 5)
                .u32(25, 0).u32(1).opaque(new byte[] {5, 6, 7}) // READ4resok: eof, data
                .u32(38, 0).u32(3, 2).fixed(XdrBytes.seq(8, 1)) // WRITE4resok
                .u32(9, 0).u32(1, (1 << 1) | (1 << 4)).opaque(new XdrBytes().u32(1).u64(12345).bytes()) // fattr4
                .u32(4, 0).u32(2).fixed(OTHER) // CLOSE: stateid
                .u32(26, 0).fixed(XdrBytes.seq(8, 9)) // READDIR4resok: cookieverf
                .u32(1).u64(3).str("a").u32(0).str("") // entry "a", no attributes
                .u32(1).u64(4).str("bb").u32(0).str("").u32(0) // entry "bb", no next entry
                .u32(1) // eof
                .bytes();
        CompoundResult r = c.decodeResult(reader(b)).check();
        assertTrue(r.get(read).eof());
        assertArrayEquals(new byte[] {5, 6, 7}, r.get(read).data().toArray(ValueLayout.JAVA_BYTE));
        assertEquals(5, receptacle.get(ValueLayout.JAVA_BYTE, 0), "inline READ data copied into the receptacle");
        assertEquals(3, r.get(write).count());
        assertEquals(Nfs4.FILE_SYNC4, r.get(write).committed());
        assertEquals(12345, r.get(ga).size());
        assertEquals(2, r.get(close).seqid());
        FileOps.ReaddirResult d = r.get(rd);
        assertEquals(List.of(new FileOps.DirEntry(3, "a"), new FileOps.DirEntry(4, "bb")), d.entries());
        assertTrue(d.eof());
    }

    @Test
    void aFailedOpStopsTheCompoundAndIsNamed() throws Exception {
        var lookup = FileOps.lookup("missing");
        var fh = FileOps.getFh();
        Compound c = Compound.of(FileOps.putRootFh(), lookup, fh);
        CompoundResult r = c.decodeResult(res(2, 2).u32(24, 0).u32(15, 2).reader());
        assertEquals(Nfs4.NFS4ERR_NOENT, r.status());
        assertEquals(lookup, r.failedOp());
        Nfs4Exception e = assertThrows(Nfs4Exception.class, () -> r.get(fh));
        assertEquals(Nfs4.NFS4ERR_NOENT, e.status());
        assertEquals(Nfs4.OP_LOOKUP, e.op());
        assertEquals(Nfs4.OP_LOOKUP, assertThrows(Nfs4Exception.class, r::check).op());
        assertThrows(Nfs4Exception.class, () -> r.get(lookup));
        // OP_ILLEGAL in place of an op (RFC 8881 §15.2: the server did not know it)
        CompoundResult ill = c.decodeResult(res(10044, 1).u32(10044, 10044).reader());
        assertEquals(Nfs4.NFS4ERR_OP_ILLEGAL, ill.status());
        // a failure with no results at all (NFS4ERR_MINOR_VERS_MISMATCH, RFC 8881 §16.2.3)
        assertEquals(Nfs4.NFS4ERR_MINOR_VERS_MISMATCH, c.decodeResult(res(10021, 0).reader()).status());
    }

    @Test
    void hostileOrBrokenRepliesAreTypedDecodeErrors() {
        var fh = FileOps.getFh();
        Compound c = Compound.of(FileOps.putRootFh(), fh);
        // more results than operations
        assertThrows(XdrException.class, () -> c.decodeResult(res(0, 3).u32(24, 0).u32(10, 0).opaque(new byte[4])
                .u32(10, 0).opaque(new byte[4]).reader()));
        // a result for another operation than the one at its place
        assertThrows(XdrException.class, () -> c.decodeResult(res(0, 2).u32(22, 0).u32(10, 0).opaque(new byte[4])
                .reader()));
        // results after a failure
        assertThrows(XdrException.class, () -> c.decodeResult(res(2, 2).u32(24, 2).u32(10, 0).opaque(new byte[4])
                .reader()));
        // NFS4_OK with results missing
        assertThrows(XdrException.class, () -> c.decodeResult(res(0, 1).u32(24, 0).reader()));
        // status disagreeing with the last result's
        assertThrows(XdrException.class, () -> c.decodeResult(res(5, 1).u32(24, 2).reader()));
        // a filehandle longer than NFS4_FHSIZE, a length near 2^32, one past the message
        assertThrows(XdrException.class, () -> c.decodeResult(res(0, 2).u32(24, 0).u32(10, 0).opaque(new byte[129])
                .reader()));
        assertThrows(XdrException.class, () -> c.decodeResult(res(0, 2).u32(24, 0).u32(10, 0, 0xFFFF_FFF0L)
                .reader()));
        assertThrows(XdrException.class, () -> c.decodeResult(res(0, 2).u32(24, 0).u32(10, 0, 100).u32(1).reader()));
        // an array count near 2^32, a tag over its bound, a truncated header
        assertThrows(XdrException.class, () -> c.decodeResult(new XdrBytes().u32(0).str("").u32(0xFFFF_FFFFL)
                .reader()));
        assertThrows(XdrException.class, () -> c.decodeResult(new XdrBytes().u32(0).opaque(new byte[1025]).u32(0)
                .reader()));
        assertThrows(XdrException.class, () -> c.decodeResult(new XdrBytes().u32(0).reader()));
        // a bool outside {0, 1} (READ's eof), a bitmap over its bound, a READ larger than the receptacle
        MemorySegment receptacle = MemorySegment.ofArray(new byte[4]);
        var read = FileOps.read(new Stateid(0, OTHER), 0, 4, receptacle);
        assertThrows(XdrException.class, () -> Compound.of(read).decodeResult(res(0, 1).u32(25, 0, 2)
                .opaque(new byte[1]).reader()));
        assertThrows(XdrException.class, () -> Compound.of(read).decodeResult(res(0, 1).u32(25, 0, 0)
                .opaque(new byte[5]).reader()));
        var ga = FileOps.getattr(Nfs4.FATTR4_SIZE);
        assertThrows(XdrException.class, () -> Compound.of(ga).decodeResult(res(0, 1).u32(9, 0, 9)
                .reader()));
    }

    @Test
    void attrsSizeIsFoundOnlyWhereItCanBeDecoded() throws Exception {
        assertEquals(7, new FileOps.Attrs(new int[] {1 << 4}, new XdrBytes().u64(7).bytes()).size());
        assertEquals(9, new FileOps.Attrs(new int[] {(1 << 3) | (1 << 4)}, new XdrBytes().u64(1).u64(9).bytes()).size());
        assertThrows(XdrException.class, () -> new FileOps.Attrs(new int[] {1 << 2}, new byte[8]).size(),
                "attribute 2 (FH_EXPIRE_TYPE) comes first and is not decoded here");
        assertThrows(XdrException.class, () -> new FileOps.Attrs(new int[] {1 << 3}, new byte[8]).size());
        assertThrows(XdrException.class, () -> new FileOps.Attrs(new int[] {1 << 4}, new byte[4]).size());
        assertFalse(new FileOps.Delegation(0, null, false, -1).isRead());
    }

    static org.rpcrdma.xdr.XdrReader reader(byte[] b) {
        return new org.rpcrdma.xdr.XdrReader(MemorySegment.ofArray(b), 0, b.length);
    }
}
