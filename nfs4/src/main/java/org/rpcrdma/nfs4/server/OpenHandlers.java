package org.rpcrdma.nfs4.server;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.nfs4.Stateid;
import org.rpcrdma.nfs4.server.CompoundCodec.OpResult;
import org.rpcrdma.xdr.XdrWriter;

/**
 * OPEN, CLOSE, OPEN_DOWNGRADE, TEST_STATEID, FREE_STATEID and DELEGRETURN (RFC 8881
 * §18.16, §18.2, §18.18, §18.48, §18.38, §18.6). OPEN by name (CLAIM_NULL) or by the
 * current filehandle (CLAIM_FH), with or without create (UNCHECKED4, GUARDED4, and the
 * exclusive modes, whose verifier is remembered to tell a retry from a conflict).
 */
final class OpenHandlers {
    private static final System.Logger LOG = System.getLogger(OpenHandlers.class.getName());
    private static final int OPEN4_RESULT_LOCKTYPE_POSIX = 4;

    private final FileHandles handles;
    private final OpenStates opens;
    private final ClientTable clients;
    private final NamespaceHandlers names;
    private final Delegations delegations;
    private final Recalls recalls;
    private final Map<Long, byte[]> exclusiveVerifiers = new ConcurrentHashMap<>();

    OpenHandlers(FileHandles handles, OpenStates opens, ClientTable clients, NamespaceHandlers names,
            Delegations delegations, Recalls recalls) {
        this.handles = handles;
        this.opens = opens;
        this.clients = clients;
        this.names = names;
        this.delegations = delegations;
        this.recalls = recalls;
    }

    OpResult open(OpArgs.Open a, CompoundState st) {
        int access = a.access() & Nfs4.OPEN4_SHARE_ACCESS_BOTH; // the WANT_* bits ask for delegations
        int deny = a.deny() & 3;
        if (access == 0) {
            throw new NfsError(Nfs4.NFS4ERR_INVAL, "OPEN without access");
        }
        if (!clients.known(a.clientId())) {
            throw new NfsError(Nfs4.NFS4ERR_STALE_CLIENTID, "open-owner of an unknown client");
        }
        long ino;
        long before = 0;
        long after = 0;
        int[] attrset = new int[0];
        switch (a.claim()) {
            case 0, 2 -> { // CLAIM_NULL, CLAIM_DELEGATE_CUR: a name in the current directory
                long dir = names.requireDirectory(st.current());
                Path d = handles.path(dir);
                Path p = d.resolve(NamespaceHandlers.checkName(a.name()));
                before = FileInfo.of(d).change();
                if (a.createMode() >= 0) {
                    attrset = create(p, a);
                } else if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                    throw new NfsError(Nfs4.NFS4ERR_NOENT, "no " + a.name());
                }
                after = FileInfo.of(d).change();
                ino = handles.child(dir, a.name());
            }
            case 4, 6 -> ino = st.current(); // CLAIM_FH, CLAIM_DELEG_CUR_FH (the holder's opens at a recall)
            case 1 -> throw new NfsError(Nfs4.NFS4ERR_NO_GRACE, "no state to reclaim: no grace period");
            default -> throw new NfsError(Nfs4.NFS4ERR_NOTSUPP, "claim " + a.claim() + " needs delegations");
        }
        FileInfo f = FileInfo.of(handles.path(ino));
        if (f.isDirectory()) {
            throw new NfsError(Nfs4.NFS4ERR_ISDIR, "OPEN of a directory");
        }
        if (f.isSymlink()) {
            throw new NfsError(Nfs4.NFS4ERR_SYMLINK, "OPEN of a symbolic link");
        }
        if ((access & Nfs4.OPEN4_SHARE_ACCESS_WRITE) != 0) {
            recalls.forClient(a.clientId(), ino); // §10.4.1: writing conflicts with others' read delegations
        }
        Stateid s = opens.open(a.clientId(), a.owner(), ino, access, deny);
        st.current(ino);
        Delegations.Delegation d = null;
        boolean noDeleg = (a.access() & 0xff00) == Nfs4.OPEN4_SHARE_ACCESS_WANT_NO_DELEG;
        if (access == Nfs4.OPEN4_SHARE_ACCESS_READ && deny == 0 && !noDeleg && (a.claim() == 0 || a.claim() == 4)
                && st.session != null && st.session.callbackPathUp() && !opens.writtenByOthers(ino, a.clientId())) {
            d = delegations.grant(a.clientId(), st.session, ino, handles.handle(ino));
            if (d != null) {
                LOG.log(Level.INFO, "read delegation of inode {0} granted to client {1}", ino,
                        Long.toHexString(a.clientId()));
            }
        }
        Delegations.Delegation deleg = d;
        long b = before;
        long c = after;
        int[] set = attrset;
        return OpResult.ok(Nfs4.OP_OPEN, (w, v) -> {
            writeStateid(w, s);
            NamespaceHandlers.changeInfo(w, b, c);
            w.writeInt(OPEN4_RESULT_LOCKTYPE_POSIX);
            Attrs.writeBitmap(w, set);
            if (deleg == null) {
                w.writeInt(Nfs4.OPEN_DELEGATE_NONE);
            } else { // open_read_delegation4: stateid, recall false, an ACE that allows nothing extra
                w.writeInt(Nfs4.OPEN_DELEGATE_READ);
                writeStateid(w, deleg.stateid());
                w.writeBoolean(false).writeInt(0).writeInt(0).writeInt(0).writeString("");
            }
        });
    }

    /** OPEN4_CREATE (§18.16.3): what each createmode4 does with a file that exists; the attributes set. */
    private int[] create(Path p, OpArgs.Open a) {
        boolean exists = Files.exists(p, LinkOption.NOFOLLOW_LINKS);
        boolean exclusive = a.createMode() >= 2;
        if (exists) {
            if (a.createMode() == 1) {
                throw new NfsError(Nfs4.NFS4ERR_EXIST, "GUARDED4 create of an existing file");
            }
            if (exclusive) {
                byte[] v = exclusiveVerifiers.get(inoOf(p));
                if (v == null || !Arrays.equals(v, a.verifier())) {
                    throw new NfsError(Nfs4.NFS4ERR_EXIST, "exclusive create of an existing file");
                }
                return new int[0]; // the retry of our own create
            }
            NewAttrs n = NewAttrs.parse(a.attrs());
            if (n.size() != null) { // UNCHECKED4 on an existing file: only the size applies (O_TRUNC)
                new NewAttrs(Attrs.bitmap(Attrs.SIZE), n.size(), null, null, null, null, false, null, false).apply(p);
                return Attrs.bitmap(Attrs.SIZE);
            }
            return new int[0];
        }
        NewAttrs n = NewAttrs.parse(a.attrs());
        try {
            Files.createFile(p);
        } catch (IOException e) {
            throw NfsError.of(e);
        }
        n.apply(p);
        if (exclusive) {
            exclusiveVerifiers.put(inoOf(p), a.verifier());
        }
        return n.mask();
    }

    OpResult close(OpArgs.Close a, CompoundState st) {
        Stateid s = opens.close(a.stateid());
        return OpResult.ok(Nfs4.OP_CLOSE, (w, v) -> writeStateid(w, s));
    }

    OpResult downgrade(OpArgs.OpenDowngrade a, CompoundState st) {
        Stateid s = opens.downgrade(a.stateid(), a.access() & Nfs4.OPEN4_SHARE_ACCESS_BOTH, a.deny() & 3);
        return OpResult.ok(Nfs4.OP_OPEN_DOWNGRADE, (w, v) -> writeStateid(w, s));
    }

    OpResult testStateid(OpArgs.TestStateid a) {
        int[] codes = a.stateids().stream().mapToInt(opens::test).toArray();
        return OpResult.ok(Nfs4.OP_TEST_STATEID, (w, v) -> {
            w.writeInt(codes.length);
            for (int c : codes) {
                w.writeInt(c);
            }
        });
    }

    OpResult freeStateid(OpArgs.FreeStateid a) {
        opens.free(a.stateid());
        return OpResult.ok(Nfs4.OP_FREE_STATEID, null);
    }

    /** DELEGRETURN (§18.6): the delegation ends; an OPEN waiting for it goes ahead on its next try. */
    OpResult delegreturn(OpArgs.Delegreturn a) {
        delegations.returned(a.stateid());
        return OpResult.ok(Nfs4.OP_DELEGRETURN, null);
    }

    static void writeStateid(XdrWriter w, Stateid s) {
        w.writeInt(s.seqid()).writeFixedOpaque(s.other());
    }

    private static long inoOf(Path p) {
        try {
            return FileHandles.ino(p);
        } catch (IOException e) {
            throw NfsError.of(e);
        }
    }
}
