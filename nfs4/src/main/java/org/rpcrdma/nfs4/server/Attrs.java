package org.rpcrdma.nfs4.server;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.FileStore;
import java.time.Instant;
import java.util.Arrays;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.xdr.XdrWriter;

/**
 * The fattr4 attributes this server serves (RFC 8881 §5: the REQUIRED ones and the
 * RECOMMENDED ones the Linux client asks for at mount, for ls, stat and df), encoded in
 * bit order into attr_vals. An attribute's value is computed when the operation runs; the
 * reply later writes the bytes made here.
 */
final class Attrs {
    static final int SUPPORTED_ATTRS = 0, TYPE = 1, FH_EXPIRE_TYPE = 2, CHANGE = 3, SIZE = 4, LINK_SUPPORT = 5,
            SYMLINK_SUPPORT = 6, NAMED_ATTR = 7, FSID = 8, UNIQUE_HANDLES = 9, LEASE_TIME = 10, RDATTR_ERROR = 11,
            FILEHANDLE = 19, FILEID = 20, FILES_AVAIL = 21, FILES_FREE = 22, FILES_TOTAL = 23, MAXFILESIZE = 27,
            MAXNAME = 29, MAXREAD = 30, MAXWRITE = 31, MODE = 33, NUMLINKS = 35, OWNER = 36, OWNER_GROUP = 37,
            RAWDEV = 41, SPACE_AVAIL = 42, SPACE_FREE = 43, SPACE_TOTAL = 44, SPACE_USED = 45, TIME_ACCESS = 47,
            TIME_ACCESS_SET = 48, TIME_DELTA = 51, TIME_METADATA = 52, TIME_MODIFY = 53, TIME_MODIFY_SET = 54,
            MOUNTED_ON_FILEID = 55, SUPPATTR_EXCLCREAT = 75;

    /** What GETATTR answers and supported_attrs says (the two *_SET ones are SETATTR's only). */
    static final int[] SUPPORTED = bitmap(SUPPORTED_ATTRS, TYPE, FH_EXPIRE_TYPE, CHANGE, SIZE, LINK_SUPPORT,
            SYMLINK_SUPPORT, NAMED_ATTR, FSID, UNIQUE_HANDLES, LEASE_TIME, RDATTR_ERROR, FILEHANDLE, FILEID,
            FILES_AVAIL, FILES_FREE, FILES_TOTAL, MAXFILESIZE, MAXNAME, MAXREAD, MAXWRITE, MODE, NUMLINKS, OWNER,
            OWNER_GROUP, RAWDEV, SPACE_AVAIL, SPACE_FREE, SPACE_TOTAL, SPACE_USED, TIME_ACCESS, TIME_ACCESS_SET,
            TIME_DELTA, TIME_METADATA, TIME_MODIFY, TIME_MODIFY_SET, MOUNTED_ON_FILEID, SUPPATTR_EXCLCREAT);
    /** What SETATTR and OPEN/CREATE's createattrs set. */
    static final int[] SETTABLE = bitmap(SIZE, MODE, OWNER, OWNER_GROUP, TIME_ACCESS_SET, TIME_MODIFY_SET);
    /** What an EXCLUSIVE4_1 create sets (the times hold nothing of the verifier here). */
    static final int[] EXCLCREAT = bitmap(SIZE, MODE, OWNER, OWNER_GROUP);

    /** Export-wide values. */
    record Export(FileHandles handles, FileStore store, int leaseSeconds, int maxIo) {}

    private static final ThreadLocal<MemorySegment> SCRATCH =
            ThreadLocal.withInitial(() -> MemorySegment.ofArray(new byte[8192]));

    private Attrs() {}

    static int[] bitmap(int... bits) {
        int words = 0;
        for (int b : bits) {
            words = Math.max(words, b / 32 + 1);
        }
        int[] m = new int[words];
        for (int b : bits) {
            m[b / 32] |= 1 << (b % 32);
        }
        return m;
    }

    static boolean has(int[] mask, int bit) {
        return bit / 32 < mask.length && (mask[bit / 32] & (1 << (bit % 32))) != 0;
    }

    static int[] and(int[] a, int[] b) {
        int[] m = new int[Math.min(a.length, b.length)];
        for (int i = 0; i < m.length; i++) {
            m[i] = a[i] & b[i];
        }
        int n = m.length;
        while (n > 0 && m[n - 1] == 0) {
            n--;
        }
        return Arrays.copyOf(m, n);
    }

    static void writeBitmap(XdrWriter w, int[] m) {
        w.writeInt(m.length);
        for (int v : m) {
            w.writeInt(v);
        }
    }

    /** A fattr4 made: the bitmap of what it holds and its attr_vals. */
    record Fattr4(int[] mask, byte[] values) {
        void encode(XdrWriter w) {
            writeBitmap(w, mask);
            w.writeOpaque(values);
        }
    }

    /**
     * The requested attributes of a file that exist: the requested ones we support, in bit
     * order (RFC 8881 §5.4: an unsupported one is left out of the bitmap, not an error).
     */
    static Fattr4 of(int[] requested, FileInfo f, Export x) {
        int[] mask = and(requested, SUPPORTED);
        mask = clear(clear(mask, TIME_ACCESS_SET), TIME_MODIFY_SET);
        MemorySegment s = SCRATCH.get();
        XdrWriter w = new XdrWriter(s, 0, s.byteSize());
        long[] fs = null;
        for (int word = 0; word < mask.length; word++) {
            for (int bit = 0; bit < 32; bit++) {
                if ((mask[word] & (1 << bit)) == 0) {
                    continue;
                }
                int a = word * 32 + bit;
                if (fs == null && (a >= FILES_AVAIL && a <= FILES_TOTAL || a >= SPACE_AVAIL && a <= SPACE_TOTAL)) {
                    fs = fsStats(x.store());
                }
                write(w, a, f, x, fs);
            }
        }
        return new Fattr4(mask, s.asSlice(0, w.written()).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
    }

    /** READDIR's attributes for an entry that can't be read: rdattr_error only, if asked (RFC 8881 §18.23.4). */
    static Fattr4 error(int[] requested, int status) {
        if (!has(requested, RDATTR_ERROR)) {
            return null;
        }
        return new Fattr4(bitmap(RDATTR_ERROR), new byte[] {
            (byte) (status >>> 24), (byte) (status >>> 16), (byte) (status >>> 8), (byte) status});
    }

    private static int[] clear(int[] m, int bit) {
        if (bit / 32 < m.length) {
            m = m.clone();
            m[bit / 32] &= ~(1 << (bit % 32));
        }
        return m;
    }

    private static void write(XdrWriter w, int a, FileInfo f, Export x, long[] fs) {
        switch (a) {
            case SUPPORTED_ATTRS -> writeBitmap(w, SUPPORTED);
            case TYPE -> w.writeInt(f.nfsType());
            case FH_EXPIRE_TYPE -> w.writeInt(0); // FH4_PERSISTENT while this server runs
            case CHANGE -> w.writeLong(f.change());
            case SIZE -> w.writeLong(f.size());
            case LINK_SUPPORT, SYMLINK_SUPPORT, UNIQUE_HANDLES -> w.writeBoolean(true);
            case NAMED_ATTR -> w.writeBoolean(false);
            case FSID -> w.writeLong(1).writeLong(0);
            case LEASE_TIME -> w.writeInt(x.leaseSeconds());
            case RDATTR_ERROR -> w.writeInt(Nfs4.NFS4_OK);
            case FILEHANDLE -> w.writeOpaque(x.handles().handle(f.ino()));
            case FILEID, MOUNTED_ON_FILEID -> w.writeLong(f.ino());
            case FILES_AVAIL, FILES_FREE, FILES_TOTAL -> w.writeLong(1L << 20); // java.nio does not say; a fixed count
            case MAXFILESIZE -> w.writeLong(Long.MAX_VALUE);
            case MAXNAME -> w.writeInt(255);
            case MAXREAD, MAXWRITE -> w.writeLong(x.maxIo());
            case MODE -> w.writeInt(f.mode() & 07777);
            case NUMLINKS -> w.writeInt(f.nlink());
            case OWNER -> w.writeString(Integer.toUnsignedString(f.uid()));
            case OWNER_GROUP -> w.writeString(Integer.toUnsignedString(f.gid()));
            case RAWDEV -> w.writeInt((int) ((f.rdev() >>> 8) & 0xfff)).writeInt((int) (f.rdev() & 0xff));
            case SPACE_AVAIL -> w.writeLong(fs[0]);
            case SPACE_FREE -> w.writeLong(fs[1]);
            case SPACE_TOTAL -> w.writeLong(fs[2]);
            case SPACE_USED -> w.writeLong((f.size() + 4095) & ~4095L);
            case TIME_ACCESS -> time(w, f.atime());
            case TIME_DELTA -> w.writeLong(0).writeInt(1);
            case TIME_METADATA -> time(w, f.ctime());
            case TIME_MODIFY -> time(w, f.mtime());
            case SUPPATTR_EXCLCREAT -> writeBitmap(w, EXCLCREAT);
            default -> throw new AssertionError("attribute " + a + " is in SUPPORTED but not written");
        }
    }

    private static void time(XdrWriter w, Instant t) {
        w.writeLong(t.getEpochSecond()).writeInt(t.getNano());
    }

    private static long[] fsStats(FileStore s) {
        try {
            return new long[] {s.getUsableSpace(), s.getUnallocatedSpace(), s.getTotalSpace()};
        } catch (IOException e) {
            throw NfsError.of(e);
        }
    }
}
