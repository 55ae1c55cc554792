package org.rpcrdma.nfs4.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.rpcrdma.nfs4.Compound;
import org.rpcrdma.nfs4.FileOps;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.nfs4.Nfs4Client;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * The server's first client is itself: at start, before it says it serves, it mounts
 * itself the way the Linux client does (a connection over the device, EXCHANGE_ID,
 * CREATE_SESSION with its CB_NULL probe, the mount's GETATTRs, READDIR with the
 * attributes of {@code ls -l} through a Reply chunk), reading and changing nothing. A cold
 * JVM loads, links and interprets all of that code on first use: in the emulated guest
 * the kernel client's first mount waited 49 s for our accept and 13 s for its first
 * EXCHANGE_ID, where a second mount's took 1.2 s and 0.1 s; that cost is paid here instead.
 */
final class WarmUp {
    /** What the Linux client's READDIR asks for {@code ls -l} (nfs4_readdir_bitmap with the mounted_on fileid). */
    private static final int[] LS_ATTRS = {Attrs.TYPE, Attrs.CHANGE, Attrs.SIZE, Attrs.FSID,
        Attrs.RDATTR_ERROR, Attrs.FILEHANDLE, Attrs.FILEID, Attrs.MODE, Attrs.NUMLINKS, Attrs.OWNER,
        Attrs.OWNER_GROUP, Attrs.RAWDEV, Attrs.SPACE_USED, Attrs.TIME_ACCESS, Attrs.TIME_METADATA,
        Attrs.TIME_MODIFY, Attrs.MOUNTED_ON_FILEID};
    /** The mount's GETATTR of the root (SERVER_CAPS, FSINFO, PATHCONF and the root's own attributes). */
    private static final int[] MOUNT_ATTRS = {Attrs.SUPPORTED_ATTRS, Attrs.TYPE, Attrs.FH_EXPIRE_TYPE,
        Attrs.CHANGE, Attrs.SIZE, Attrs.LINK_SUPPORT, Attrs.SYMLINK_SUPPORT, Attrs.FSID,
        Attrs.LEASE_TIME, Attrs.FILEID, Attrs.MAXFILESIZE, Attrs.MAXNAME, Attrs.MAXREAD, Attrs.MAXWRITE,
        Attrs.MODE, Attrs.NUMLINKS, Attrs.OWNER, Attrs.OWNER_GROUP, Attrs.SPACE_AVAIL, Attrs.TIME_DELTA,
        Attrs.TIME_MODIFY, Attrs.MOUNTED_ON_FILEID};
    /** A READDIR reply larger than inline, as a directory of a few dozen files makes (a Reply chunk). */
    private static final int READDIR_BYTES = 64 * 1024;

    private WarmUp() {}

    /**
     * The per-entry code of READDIR and GETATTR, warmed on a directory of {@code files}
     * empty files made for it in a temporary directory (the export may hold none, and is not
     * ours to change), through a second server instance over an in-memory connection, then
     * removed: a cold listing of 1,000 files took 5.2 s in the guest, long enough for the
     * Linux client's attributes from READDIR to expire and a GETATTR per file to follow.
     * Returns the entries listed per round.
     */
    static int local(int files, int rounds) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("nfs-server-warm-up");
        try {
            for (int i = 0; i < files; i++) {
                Files.createFile(dir.resolve("f" + i));
            }
            try (NfsServer s = new NfsServer(dir, 90, RpcRdmaOptions.DEFAULT_INLINE, 1);
                    InMemoryPair pair = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(),
                            s.dispatcher());
                    Nfs4Client c = Nfs4Client.open(pair.client(), 2, CallbackSender.CREDENTIAL)) {
                int n = 0;
                for (int i = 0; i < rounds; i++) {
                    n = listAll(c);
                }
                return n;
            }
        } finally {
            try (Stream<Path> l = Files.list(dir)) {
                for (Path p : (Iterable<Path>) l::iterator) {
                    Files.delete(p);
                }
            }
            Files.delete(dir);
        }
    }

    /** The root's entries, READDIR after READDIR from each last cookie, as the Linux client lists. */
    private static int listAll(Nfs4Client c) throws InterruptedException {
        int n = 0;
        long cookie = 0;
        byte[] verifier = new byte[Nfs4.NFS4_VERIFIER_SIZE];
        while (true) {
            var rd = FileOps.readdir(cookie, verifier, READDIR_BYTES, READDIR_BYTES, LS_ATTRS);
            FileOps.ReaddirResult r = c.compound(Compound.of(FileOps.putRootFh(), rd), null, READDIR_BYTES).check()
                    .get(rd);
            n += r.entries().size();
            if (r.eof() || r.entries().isEmpty()) {
                return n;
            }
            cookie = r.entries().getLast().cookie();
            verifier = r.cookieVerifier();
        }
    }

    /**
     * {@code rounds} times the mount's GETATTRs and a READDIR of the export's root on
     * {@code c}'s session; returns the entries the last READDIR listed.
     */
    static int run(Nfs4Client c, int rounds) throws InterruptedException {
        int entries = 0;
        for (int i = 0; i < rounds; i++) {
            c.compound(Compound.of(FileOps.putRootFh(), FileOps.getFh(), FileOps.getattr(MOUNT_ATTRS))).check();
            var rd = FileOps.readdir(0, new byte[Nfs4.NFS4_VERIFIER_SIZE], READDIR_BYTES, READDIR_BYTES, LS_ATTRS);
            entries = c.compound(Compound.of(FileOps.putRootFh(), rd), null, READDIR_BYTES).check().get(rd)
                    .entries().size();
        }
        return entries;
    }
}
