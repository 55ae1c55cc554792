package org.rpcrdma.nfs4.server;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.xdr.XdrException;
import org.rpcrdma.xdr.XdrReader;

/**
 * The attributes a client sets (SETATTR, and OPEN's and CREATE's createattrs; RFC 8881
 * §18.30): size, mode, owner, owner_group, time_access_set and time_modify_set. Parsed
 * from a fattr4 when the operation runs, so a bad value is the operation's error
 * (NFS4ERR_ATTRNOTSUPP, NFS4ERR_INVAL, NFS4ERR_BADXDR, NFS4ERR_BADOWNER), never the
 * call's.
 */
record NewAttrs(int[] mask, Long size, Integer mode, Integer uid, Integer gid, Instant atime, boolean atimeNow,
        Instant mtime, boolean mtimeNow) {
    static final NewAttrs NONE = new NewAttrs(new int[0], null, null, null, null, null, false, null, false);

    /** A fattr4 as it came: its bitmap and attr_vals. */
    record Raw(int[] mask, byte[] values) {
        static final Raw EMPTY = new Raw(new int[0], new byte[0]);

        static Raw decode(XdrReader r) throws XdrException {
            int n = r.readArrayLength(Nfs4.MAX_BITMAP_WORDS, 4);
            int[] m = new int[n];
            for (int i = 0; i < n; i++) {
                m[i] = r.readInt();
            }
            return new Raw(m, r.readOpaque(64 * 1024));
        }
    }

    static NewAttrs parse(Raw raw) {
        int[] m = raw.mask();
        for (int w = 0; w < m.length; w++) {
            int extra = m[w] & ~(w < Attrs.SETTABLE.length ? Attrs.SETTABLE[w] : 0);
            if (extra != 0) {
                int bit = w * 32 + Integer.numberOfTrailingZeros(extra);
                boolean known = Attrs.has(Attrs.SUPPORTED, bit);
                throw new NfsError(known ? Nfs4.NFS4ERR_INVAL : Nfs4.NFS4ERR_ATTRNOTSUPP, "attribute " + bit + " not settable");
            }
        }
        XdrReader r = new XdrReader(MemorySegment.ofArray(raw.values()), 0, raw.values().length);
        try {
            Long size = Attrs.has(m, Attrs.SIZE) ? r.readLong() : null;
            Integer mode = Attrs.has(m, Attrs.MODE) ? r.readInt() & 07777 : null;
            Integer uid = Attrs.has(m, Attrs.OWNER) ? id(r.readString(1024)) : null;
            Integer gid = Attrs.has(m, Attrs.OWNER_GROUP) ? id(r.readString(1024)) : null;
            Instant[] at = Attrs.has(m, Attrs.TIME_ACCESS_SET) ? settime(r) : null;
            Instant[] mt = Attrs.has(m, Attrs.TIME_MODIFY_SET) ? settime(r) : null;
            if (r.remaining() != 0) {
                throw new NfsError(Nfs4.NFS4ERR_BADXDR, "attr_vals longer than its attributes");
            }
            return new NewAttrs(Attrs.and(m, Attrs.SETTABLE), size, mode, uid, gid, at == null ? null : at[0],
                    at != null && at[0] == null, mt == null ? null : mt[0], mt != null && mt[0] == null);
        } catch (XdrException e) {
            throw new NfsError(Nfs4.NFS4ERR_BADXDR, "attr_vals: " + e.getMessage());
        }
    }

    /** settime4: SET_TO_SERVER_TIME4 (0) is {null}, SET_TO_CLIENT_TIME4 (1) its nfstime4. */
    private static Instant[] settime(XdrReader r) throws XdrException {
        int how = r.readInt();
        if (how == 0) {
            return new Instant[] {null};
        }
        if (how != 1) {
            throw new NfsError(Nfs4.NFS4ERR_BADXDR, "time_how4 " + how);
        }
        long sec = r.readLong();
        long nsec = r.readUnsignedInt();
        if (nsec >= 1_000_000_000L) {
            throw new NfsError(Nfs4.NFS4ERR_INVAL, "nseconds " + nsec);
        }
        return new Instant[] {Instant.ofEpochSecond(sec, nsec)};
    }

    /** An owner string: numeric (the Linux client's default with AUTH_SYS) or root's name. */
    private static int id(String s) {
        String n = s.contains("@") ? s.substring(0, s.indexOf('@')) : s;
        if (n.equals("root")) {
            return 0;
        }
        try {
            return Integer.parseUnsignedInt(n);
        } catch (NumberFormatException e) {
            throw new NfsError(Nfs4.NFS4ERR_BADOWNER, "owner " + s);
        }
    }

    /** Sets them on {@code p}. */
    void apply(Path p) {
        try {
            if (size != null) {
                try (FileChannel c = FileChannel.open(p, StandardOpenOption.WRITE)) {
                    if (size < c.size()) {
                        c.truncate(size);
                    } else if (size > c.size()) {
                        c.write(java.nio.ByteBuffer.allocate(1), size - 1);
                    }
                }
            }
            if (mode != null) {
                Files.setAttribute(p, "unix:mode", mode, LinkOption.NOFOLLOW_LINKS);
            }
            if (uid != null) {
                Files.setAttribute(p, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
            }
            if (gid != null) {
                Files.setAttribute(p, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
            }
            if (atime != null || atimeNow) {
                Files.setAttribute(p, "basic:lastAccessTime", FileTime.from(atimeNow ? Instant.now() : atime),
                        LinkOption.NOFOLLOW_LINKS);
            }
            if (mtime != null || mtimeNow) {
                Files.setAttribute(p, "basic:lastModifiedTime", FileTime.from(mtimeNow ? Instant.now() : mtime),
                        LinkOption.NOFOLLOW_LINKS);
            }
        } catch (IOException e) {
            throw NfsError.of(e);
        }
    }
}
