package org.rpcrdma.nfs4.server;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;
import org.rpcrdma.nfs4.Nfs4;

/**
 * File handles of the export (RFC 8881 §4): a handle names a file by its inode number, and
 * this table knows each inode it handed out by its parent's inode and its name, so a
 * rename moves one entry and the handles of everything below a renamed directory stay
 * good. Handles are {@code magic, instance, ino}: a handle from an earlier run of the
 * server is NFS4ERR_STALE (it does not survive a restart), a malformed one
 * NFS4ERR_BADHANDLE.
 */
final class FileHandles {
    static final int SIZE = 16;
    private static final int MAGIC = 0x4e465352; // "NFSR"

    private record Entry(long parent, String name) {}

    private final Path root;
    private final long rootIno;
    private final int instance;
    private final ConcurrentHashMap<Long, Entry> byIno = new ConcurrentHashMap<>();

    FileHandles(Path root, int instance) throws IOException {
        this.root = root;
        this.rootIno = ino(root);
        this.instance = instance;
    }

    long rootIno() {
        return rootIno;
    }

    byte[] handle(long ino) {
        return ByteBuffer.allocate(SIZE).putInt(MAGIC).putInt(instance).putLong(ino).array();
    }

    /** The inode a handle names; BADHANDLE if it is not one of ours, STALE if not known (now). */
    long fromHandle(byte[] fh) {
        if (fh.length != SIZE) {
            throw new NfsError(Nfs4.NFS4ERR_BADHANDLE, "handle of " + fh.length + " bytes");
        }
        ByteBuffer b = ByteBuffer.wrap(fh);
        if (b.getInt() != MAGIC) {
            throw new NfsError(Nfs4.NFS4ERR_BADHANDLE, "not our handle");
        }
        int inst = b.getInt();
        long ino = b.getLong();
        if (inst != instance || (ino != rootIno && !byIno.containsKey(ino))) {
            throw new NfsError(Nfs4.NFS4ERR_STALE, "handle of an earlier instance or a removed file");
        }
        return ino;
    }

    /** The path of a known inode; STALE if unknown. */
    Path path(long ino) {
        if (ino == rootIno) {
            return root;
        }
        Entry e = byIno.get(ino);
        if (e == null) {
            throw new NfsError(Nfs4.NFS4ERR_STALE, "inode " + ino + " not known");
        }
        return path(e.parent()).resolve(e.name());
    }

    /** The parent of a known inode (the root is its own). */
    long parent(long ino) {
        if (ino == rootIno) {
            return rootIno;
        }
        Entry e = byIno.get(ino);
        if (e == null) {
            throw new NfsError(Nfs4.NFS4ERR_STALE, "inode " + ino + " not known");
        }
        return e.parent();
    }

    /** Learns {@code name} in directory {@code dir}: its inode (NOENT if it is not there). */
    long child(long dir, String name) {
        Path p = path(dir).resolve(name);
        long ino;
        try {
            ino = ino(p);
        } catch (IOException e) {
            throw NfsError.of(e);
        }
        learn(dir, name, ino);
        return ino;
    }

    /** {@code name} in directory {@code dir} is inode {@code ino} (read by the caller). */
    void learn(long dir, String name, long ino) {
        if (ino != rootIno) {
            byIno.put(ino, new Entry(dir, name));
        }
    }

    /** A file moved to {@code name} in {@code dir}. */
    void moved(long ino, long dir, String name) {
        byIno.put(ino, new Entry(dir, name));
    }

    /** A file's last name went away. */
    void forget(long ino) {
        byIno.remove(ino);
    }

    static long ino(Path p) throws IOException {
        return (Long) Files.getAttribute(p, "unix:ino", LinkOption.NOFOLLOW_LINKS);
    }
}
