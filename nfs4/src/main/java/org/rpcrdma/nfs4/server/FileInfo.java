package org.rpcrdma.nfs4.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.Map;

/** A file's POSIX attributes at one moment (lstat through java.nio's "unix" view). */
record FileInfo(long ino, int mode, int nlink, int uid, int gid, long size, long rdev, Instant atime,
        Instant mtime, Instant ctime) {
    static final int S_IFMT = 0170000;
    static final int S_IFDIR = 0040000;
    static final int S_IFREG = 0100000;
    static final int S_IFLNK = 0120000;

    static FileInfo of(Path p) {
        Map<String, Object> a;
        try {
            a = Files.readAttributes(p, "unix:ino,mode,nlink,uid,gid,size,rdev,lastAccessTime,lastModifiedTime,ctime",
                    LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw NfsError.of(e);
        }
        return new FileInfo((Long) a.get("ino"), (Integer) a.get("mode"), (Integer) a.get("nlink"),
                (Integer) a.get("uid"), (Integer) a.get("gid"), (Long) a.get("size"), (Long) a.get("rdev"),
                ((FileTime) a.get("lastAccessTime")).toInstant(), ((FileTime) a.get("lastModifiedTime")).toInstant(),
                ((FileTime) a.get("ctime")).toInstant());
    }

    boolean isDirectory() {
        return (mode & S_IFMT) == S_IFDIR;
    }

    boolean isRegular() {
        return (mode & S_IFMT) == S_IFREG;
    }

    boolean isSymlink() {
        return (mode & S_IFMT) == S_IFLNK;
    }

    /** nfs_ftype4 (RFC 5662): NF4REG 1, NF4DIR 2, NF4BLK 3, NF4CHR 4, NF4LNK 5, NF4SOCK 6, NF4FIFO 7. */
    int nfsType() {
        return switch (mode & S_IFMT) {
            case S_IFREG -> 1;
            case S_IFDIR -> 2;
            case 0060000 -> 3;
            case 0020000 -> 4;
            case S_IFLNK -> 5;
            case 0140000 -> 6;
            default -> 7;
        };
    }

    /** The change attribute (RFC 8881 §5.8.1.4): ctime in nanoseconds, which every change of data or metadata moves. */
    long change() {
        return ctime.getEpochSecond() * 1_000_000_000L + ctime.getNano();
    }
}
