package org.rpcrdma.nfs4;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.rpcrdma.oncrpc.Codecs;
import org.rpcrdma.xdr.XdrException;
import org.rpcrdma.xdr.XdrReader;
import org.rpcrdma.xdr.XdrWriter;

/**
 * The file operations this client sends (RFC 8881 §18), encoded from RFC 5662's XDR. READ
 * and WRITE data are DDP-eligible (RFC 8267 §3: NFS WRITE's data, READ's data): WRITE's
 * travels in a read chunk and READ's lands in the caller's receptacle through a write
 * chunk when the call goes through {@code OncRpcClient.callAsync(proc, args, receptacle,
 * maxReplyBytes)}.
 */
public final class FileOps {
    private FileOps() {}

    /** Largest READ or WRITE payload this client moves in one operation. */
    public static final int MAX_IO = 1 << 20;

    /** A GETATTR result: the attributes returned and their values, XDR-encoded in bit order. */
    public record Attrs(int[] mask, byte[] values) {
        /** FATTR4_SIZE from the values, if the mask holds nothing but TYPE, CHANGE, SIZE and FILEID. */
        public long size() throws XdrException {
            XdrReader r = new XdrReader(MemorySegment.ofArray(values), 0, values.length);
            for (int bit = 0; bit < mask.length * 32; bit++) {
                if ((mask[bit / 32] & (1 << (bit % 32))) == 0) {
                    continue;
                }
                switch (bit) {
                    case Nfs4.FATTR4_TYPE -> r.readInt();
                    case Nfs4.FATTR4_CHANGE -> r.readLong();
                    case Nfs4.FATTR4_SIZE -> {
                        return r.readLong();
                    }
                    default -> throw new XdrException("attribute " + bit + " before FATTR4_SIZE: not decoded here");
                }
            }
            throw new XdrException("FATTR4_SIZE not returned");
        }
    }

    /** A delegation from OPEN (open_delegation4): its type, stateid (null for none) and recall flag; why not, for NONE_EXT. */
    public record Delegation(int type, Stateid stateid, boolean recall, int whyNone) {
        public boolean isRead() {
            return type == Nfs4.OPEN_DELEGATE_READ;
        }
    }

    /** OPEN4resok (RFC 5662). */
    public record OpenResult(Stateid stateid, boolean atomic, long changeBefore, long changeAfter, int rflags,
            int[] attrset, Delegation delegation) {}

    /** READ4resok: eof and the data (a slice of the receptacle). */
    public record ReadResult(boolean eof, MemorySegment data) {}

    /** WRITE4resok (RFC 5662). */
    public record WriteResult(long count, int committed, byte[] verifier) {}

    /** One entry4 of a READDIR (its attributes are left undecoded). */
    public record DirEntry(long cookie, String name) {}

    /** READDIR4resok (RFC 5662): the cookie verifier, the entries, eof. */
    public record ReaddirResult(byte[] cookieVerifier, List<DirEntry> entries, boolean eof) {}

    public static Op<Void> putRootFh() {
        return new Op<>(Nfs4.OP_PUTROOTFH, "PUTROOTFH", (w, x) -> { }, r -> null);
    }

    public static Op<Void> putFh(byte[] fh) {
        byte[] f = checkFh(fh);
        return new Op<>(Nfs4.OP_PUTFH, "PUTFH", (w, x) -> w.writeOpaque(f), r -> null);
    }

    public static Op<byte[]> getFh() {
        return new Op<>(Nfs4.OP_GETFH, "GETFH", (w, x) -> { }, r -> r.readOpaque(Nfs4.NFS4_FHSIZE));
    }

    /** LOOKUP of one component4 (RFC 8881 §18.15). */
    public static Op<Void> lookup(String name) {
        byte[] n = name(name);
        return new Op<>(Nfs4.OP_LOOKUP, "LOOKUP", (w, x) -> w.writeOpaque(n), r -> null);
    }

    /** GETATTR of the attributes numbered {@code attrs} (a bitmap4 of them). */
    public static Op<Attrs> getattr(int... attrs) {
        int[] mask = bitmap(attrs);
        return new Op<>(Nfs4.OP_GETATTR, "GETATTR", (w, x) -> writeBitmap(w, mask),
                r -> new Attrs(readBitmap(r), r.readOpaque(Integer.MAX_VALUE)));
    }

    /**
     * OPEN of {@code name} in the current filehandle's directory (CLAIM_NULL, no create):
     * {@code shareAccess} with its OPEN4_SHARE_ACCESS_WANT_* bits, by open owner
     * {@code (clientId, owner)}; seqid 0, which NFSv4.1 ignores (RFC 8881 §18.16.3).
     */
    public static Op<OpenResult> open(int shareAccess, int shareDeny, long clientId, byte[] owner, String name) {
        byte[] n = name(name);
        byte[] o = owner.clone();
        if (o.length > Nfs4.NFS4_OPAQUE_LIMIT) {
            throw new IllegalArgumentException("open owner over 1024 bytes");
        }
        return new Op<>(Nfs4.OP_OPEN, "OPEN", (w, x) -> w.writeInt(0).writeInt(shareAccess).writeInt(shareDeny)
                .writeLong(clientId).writeOpaque(o).writeInt(Nfs4.OPEN4_NOCREATE).writeInt(Nfs4.CLAIM_NULL)
                .writeOpaque(n), FileOps::openResult);
    }

    private static OpenResult openResult(XdrReader r) throws XdrException {
        Stateid s = Stateid.decode(r);
        boolean atomic = r.readBoolean();
        long before = r.readLong();
        long after = r.readLong();
        int rflags = r.readInt();
        int[] attrset = readBitmap(r);
        return new OpenResult(s, atomic, before, after, rflags, attrset, delegation(r));
    }

    /** open_delegation4 (RFC 5662): a union on open_delegation_type4. */
    static Delegation delegation(XdrReader r) throws XdrException {
        int type = r.readInt();
        switch (type) {
            case Nfs4.OPEN_DELEGATE_NONE -> {
                return new Delegation(type, null, false, -1);
            }
            case Nfs4.OPEN_DELEGATE_READ, Nfs4.OPEN_DELEGATE_WRITE -> {
                Stateid s = Stateid.decode(r);
                boolean recall = r.readBoolean();
                if (type == Nfs4.OPEN_DELEGATE_WRITE) { // nfs_space_limit4
                    int limitBy = r.readInt();
                    switch (limitBy) {
                        case Nfs4.NFS_LIMIT_SIZE -> r.readLong();
                        case Nfs4.NFS_LIMIT_BLOCKS -> r.readLong(); // num_blocks, bytes_per_block
                        default -> throw new XdrException("limit_by4 " + limitBy);
                    }
                }
                r.readInt(); // nfsace4: type, flag, access_mask, who
                r.readInt();
                r.readInt();
                r.readOpaque(Nfs4.NFS4_OPAQUE_LIMIT);
                return new Delegation(type, s, recall, -1);
            }
            case Nfs4.OPEN_DELEGATE_NONE_EXT -> {
                int why = r.readInt();
                if (why == Nfs4.WND4_CONTENTION || why == Nfs4.WND4_RESOURCE) {
                    r.readBoolean(); // ond_server_will_push_deleg / ond_server_will_signal_avail
                }
                return new Delegation(type, null, false, why);
            }
            default -> throw new XdrException("open_delegation_type4 " + type);
        }
    }

    /** READ of up to {@code count} bytes; the data decodes into {@code receptacle}, placed or inline. */
    public static Op<ReadResult> read(Stateid stateid, long offset, int count, MemorySegment receptacle) {
        if (count < 0 || count > receptacle.byteSize()) {
            throw new IllegalArgumentException("READ of " + count + " bytes into a receptacle of " + receptacle.byteSize());
        }
        var data = Codecs.payloadInto(receptacle);
        return new Op<>(Nfs4.OP_READ, "READ", (w, x) -> {
            stateid.encode(w);
            w.writeLong(offset).writeInt(count);
        }, r -> new ReadResult(r.readBoolean(), data.decode(r)));
    }

    /** WRITE of {@code data} at {@code offset} with {@code stable} (UNSTABLE4 .. FILE_SYNC4). */
    public static Op<WriteResult> write(Stateid stateid, long offset, int stable, MemorySegment data) {
        var payload = Codecs.payload(MAX_IO);
        return new Op<>(Nfs4.OP_WRITE, "WRITE", (w, x) -> {
            stateid.encode(w);
            w.writeLong(offset).writeInt(stable);
            payload.encode(w, data);
        }, r -> new WriteResult(r.readUnsignedInt(), r.readInt(), r.readFixedOpaque(Nfs4.NFS4_VERIFIER_SIZE)));
    }

    /** CLOSE (seqid 0, ignored in NFSv4.1); the result is the closed stateid. */
    public static Op<Stateid> close(Stateid open) {
        return new Op<>(Nfs4.OP_CLOSE, "CLOSE", (w, x) -> {
            w.writeInt(0);
            open.encode(w);
        }, Stateid::decode);
    }

    /** SAVEFH: the current filehandle becomes the saved one (RENAME's source directory). */
    public static Op<Void> saveFh() {
        return new Op<>(Nfs4.OP_SAVEFH, "SAVEFH", (w, x) -> { }, r -> null);
    }

    /** REMOVE of {@code name} in the current directory (RFC 8881 §18.25); its change_info4 is left undecoded. */
    public static Op<Void> remove(String name) {
        byte[] n = name(name);
        return new Op<>(Nfs4.OP_REMOVE, "REMOVE", (w, x) -> w.writeOpaque(n), r -> {
            r.readBoolean();
            r.readLong();
            r.readLong();
            return null;
        });
    }

    /** RENAME of {@code from} in the saved directory to {@code to} in the current one (RFC 8881 §18.26). */
    public static Op<Void> rename(String from, String to) {
        byte[] f = name(from);
        byte[] t = name(to);
        return new Op<>(Nfs4.OP_RENAME, "RENAME", (w, x) -> w.writeOpaque(f).writeOpaque(t), r -> {
            for (int i = 0; i < 2; i++) { // source_cinfo, target_cinfo
                r.readBoolean();
                r.readLong();
                r.readLong();
            }
            return null;
        });
    }

    /** SETATTR of FATTR4_SIZE under {@code stateid} (RFC 8881 §18.30); the result is the attrsset bitmap. */
    public static Op<int[]> setSize(Stateid stateid, long size) {
        int[] mask = bitmap(Nfs4.FATTR4_SIZE);
        return new Op<>(Nfs4.OP_SETATTR, "SETATTR", (w, x) -> {
            stateid.encode(w);
            writeBitmap(w, mask);
            w.writeInt(8).writeLong(size);
        }, FileOps::readBitmap);
    }

    public static Op<Void> delegReturn(Stateid delegation) {
        return new Op<>(Nfs4.OP_DELEGRETURN, "DELEGRETURN", (w, x) -> delegation.encode(w), r -> null);
    }

    /**
     * READDIR from {@code cookie} ({@code 0} and a zero verifier to start) with the
     * server's {@code dircount} / {@code maxcount} limits, asking for {@code attrs}.
     */
    public static Op<ReaddirResult> readdir(long cookie, byte[] verifier, int dirCount, int maxCount, int... attrs) {
        byte[] v = verifier.clone();
        int[] mask = bitmap(attrs);
        return new Op<>(Nfs4.OP_READDIR, "READDIR", (w, x) -> {
            w.writeLong(cookie).writeFixedOpaque(v).writeInt(dirCount).writeInt(maxCount);
            writeBitmap(w, mask);
        }, r -> {
            byte[] verf = r.readFixedOpaque(Nfs4.NFS4_VERIFIER_SIZE);
            List<DirEntry> entries = new ArrayList<>();
            while (r.readBoolean()) { // entry4 *entries, then each entry's *nextentry
                long c = r.readLong();
                String name = r.readString(Nfs4.MAX_NAME);
                readBitmap(r);
                r.readOpaque(Integer.MAX_VALUE); // attr_vals (bounded by the message)
                entries.add(new DirEntry(c, name));
            }
            return new ReaddirResult(verf, entries, r.readBoolean());
        });
    }

    static int[] bitmap(int... attrs) {
        int words = 0;
        for (int a : attrs) {
            if (a < 0 || a >= Nfs4.MAX_BITMAP_WORDS * 32) {
                throw new IllegalArgumentException("attribute " + a);
            }
            words = Math.max(words, a / 32 + 1);
        }
        int[] mask = new int[words];
        for (int a : attrs) {
            mask[a / 32] |= 1 << (a % 32);
        }
        return mask;
    }

    static void writeBitmap(XdrWriter w, int[] mask) {
        w.writeInt(mask.length);
        for (int m : mask) {
            w.writeInt(m);
        }
    }

    static int[] readBitmap(XdrReader r) throws XdrException {
        int[] m = new int[r.readArrayLength(Nfs4.MAX_BITMAP_WORDS, 4)];
        for (int i = 0; i < m.length; i++) {
            m[i] = r.readInt();
        }
        return m;
    }

    private static byte[] name(String name) {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        if (n.length == 0 || n.length > Nfs4.MAX_NAME) {
            throw new IllegalArgumentException("component4 of " + n.length + " bytes");
        }
        return n;
    }

    private static byte[] checkFh(byte[] fh) {
        if (fh.length == 0 || fh.length > Nfs4.NFS4_FHSIZE) {
            throw new IllegalArgumentException("nfs_fh4 of " + fh.length + " bytes (1 to 128)");
        }
        return fh.clone();
    }
}
