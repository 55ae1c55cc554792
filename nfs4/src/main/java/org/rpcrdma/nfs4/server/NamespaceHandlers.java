package org.rpcrdma.nfs4.server;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.nfs4.server.CompoundCodec.OpResult;
import org.rpcrdma.xdr.XdrWriter;

/**
 * The operations on file handles and names (RFC 8881 §18): PUTROOTFH, PUTFH, GETFH,
 * SAVEFH, RESTOREFH, LOOKUP, LOOKUPP, ACCESS, GETATTR, SETATTR, READDIR, READLINK, CREATE,
 * REMOVE, RENAME, LINK, SECINFO and SECINFO_NO_NAME, on the exported directory through
 * java.nio. Files are made and changed as the server's user.
 */
final class NamespaceHandlers {
    /** READDIR's cookie of the first entry: 0, 1 and 2 are reserved (RFC 8881 §18.23.3). */
    private static final long FIRST_COOKIE = 3;
    private static final byte[] NO_VERIFIER = new byte[Nfs4.NFS4_VERIFIER_SIZE];

    private final Attrs.Export export;
    private final FileHandles handles;
    private final OpenStates opens;
    private final Recalls recalls;

    NamespaceHandlers(Attrs.Export export, OpenStates opens, Recalls recalls) {
        this.export = export;
        this.handles = export.handles();
        this.opens = opens;
        this.recalls = recalls;
    }

    OpResult plain(int code, CompoundState st) {
        switch (code) {
            case Nfs4.OP_PUTROOTFH -> st.current(handles.rootIno());
            case Nfs4.OP_GETFH -> {
                byte[] fh = handles.handle(st.current());
                return OpResult.ok(code, (w, v) -> w.writeOpaque(fh));
            }
            case Nfs4.OP_SAVEFH -> st.save();
            case Nfs4.OP_RESTOREFH -> st.restore();
            case Nfs4.OP_LOOKUPP -> {
                long dir = st.current();
                requireDirectory(dir);
                if (dir == handles.rootIno()) {
                    throw new NfsError(Nfs4.NFS4ERR_NOENT, "the root has no parent in the export");
                }
                st.current(handles.parent(dir));
            }
            case Nfs4.OP_READLINK -> {
                Path p = handles.path(st.current());
                if (!FileInfo.of(p).isSymlink()) {
                    throw new NfsError(Nfs4.NFS4ERR_INVAL, "not a symbolic link");
                }
                String target;
                try {
                    target = Files.readSymbolicLink(p).toString();
                } catch (IOException e) {
                    throw NfsError.of(e);
                }
                return OpResult.ok(code, (w, v) -> w.writeString(target));
            }
            default -> throw new AssertionError(code);
        }
        return OpResult.ok(code, null);
    }

    OpResult putFh(OpArgs.PutFh a, CompoundState st) {
        st.current(handles.fromHandle(a.fh()));
        return OpResult.ok(Nfs4.OP_PUTFH, null);
    }

    /** SECINFO, SECINFO_NO_NAME (§18.29, §18.45): AUTH_SYS; they consume the current filehandle. */
    OpResult secinfo(OpArgs.Secinfo a, CompoundState st) {
        long dir = st.current();
        if (a.name() != null) {
            handles.child(requireDirectory(dir), checkName(a.name()));
        }
        st.clearCurrent();
        int code = a.name() == null ? Nfs4.OP_SECINFO_NO_NAME : Nfs4.OP_SECINFO;
        return OpResult.ok(code, (w, v) -> w.writeInt(1).writeInt(1)); // secinfo4<1> { AUTH_SYS }
    }

    OpResult lookup(OpArgs.Lookup a, CompoundState st) {
        long dir = requireDirectory(st.current());
        st.current(handles.child(dir, checkName(a.name())));
        return OpResult.ok(Nfs4.OP_LOOKUP, null);
    }

    /** ACCESS (§18.1): what the server's user may do is what the client gets; the file system enforces it. */
    OpResult access(OpArgs.Access a, CompoundState st) {
        FileInfo f = FileInfo.of(handles.path(st.current()));
        int supported = a.access() & (f.isDirectory() ? 0x1f : 0x2d); // READ LOOKUP MODIFY EXTEND DELETE / EXECUTE
        return OpResult.ok(Nfs4.OP_ACCESS, (w, v) -> w.writeInt(supported).writeInt(supported));
    }

    OpResult getattr(OpArgs.Getattr a, CompoundState st) {
        Attrs.Fattr4 f = Attrs.of(a.mask(), FileInfo.of(handles.path(st.current())), export);
        return OpResult.ok(Nfs4.OP_GETATTR, (w, v) -> f.encode(w));
    }

    /** SETATTR (§18.30): its attrsset bitmap is in the reply whatever the status. */
    OpResult setattr(OpArgs.Setattr a, CompoundState st) {
        int[] set = new int[0];
        int status = Nfs4.NFS4_OK;
        try {
            long ino = st.current();
            NewAttrs n = NewAttrs.parse(a.attrs());
            if (n.size() != null) {
                opens.check(a.stateid(), ino, Nfs4.OPEN4_SHARE_ACCESS_WRITE);
            }
            recalls.forClient(st.clientId(), ino); // §10.4.4: another client's SETATTR
            n.apply(handles.path(ino));
            set = n.mask();
        } catch (NfsError e) {
            status = e.status;
        }
        int[] done = set;
        return new OpResult(Nfs4.OP_SETATTR, status, (w, v) -> Attrs.writeBitmap(w, done));
    }

    /**
     * READDIR (§18.23): entries in name order, each with its cookie (its index from 3),
     * as many as {@code maxcount} holds; none fitting is NFS4ERR_TOOSMALL.
     */
    OpResult readdir(OpArgs.Readdir a, CompoundState st) {
        long dir = requireDirectory(st.current());
        if (a.cookie() == 1 || a.cookie() == 2) {
            throw new NfsError(Nfs4.NFS4ERR_BAD_COOKIE, "cookie " + a.cookie());
        }
        List<String> names = new ArrayList<>();
        Path dirPath = handles.path(dir);
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dirPath)) {
            for (Path p : ds) {
                names.add(p.getFileName().toString());
            }
        } catch (IOException e) {
            throw NfsError.of(e);
        }
        Collections.sort(names);
        long start = a.cookie() == 0 ? 0 : a.cookie() - FIRST_COOKIE + 1;
        if (start > names.size()) {
            throw new NfsError(Nfs4.NFS4ERR_BAD_COOKIE, "cookie " + a.cookie() + " past the end");
        }
        record Entry(long cookie, String name, Attrs.Fattr4 attrs) {}
        List<Entry> out = new ArrayList<>();
        long budget = a.maxCount() - 16L - 8 - 8; // status, verifier, the list's end and eof
        int i = (int) start;
        for (; i < names.size(); i++) {
            String name = names.get(i);
            Attrs.Fattr4 f;
            try {
                // one lstat per entry: its inode is learned from the attributes (ls -l of a
                // large directory is this loop; a client whose READDIR attributes age past
                // its attribute cache timeout sends a GETATTR per entry instead)
                FileInfo info = FileInfo.of(dirPath.resolve(name));
                handles.learn(dir, name, info.ino());
                f = Attrs.of(a.mask(), info, export);
            } catch (NfsError e) {
                f = Attrs.error(a.mask(), e.status);
                if (f == null) {
                    continue; // gone since the listing, and no rdattr_error asked: left out
                }
            }
            long size = 4 + 8 + 4 + ((name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length + 3) & ~3)
                    + 4 + 4L * f.mask().length + 4 + ((f.values().length + 3) & ~3);
            if (size > budget) {
                break;
            }
            budget -= size;
            out.add(new Entry(FIRST_COOKIE + i, name, f));
        }
        if (out.isEmpty() && i < names.size()) {
            throw new NfsError(Nfs4.NFS4ERR_TOOSMALL, "maxcount " + a.maxCount() + " holds no entry");
        }
        boolean eof = i >= names.size();
        return OpResult.ok(Nfs4.OP_READDIR, (w, v) -> {
            w.writeFixedOpaque(NO_VERIFIER);
            for (Entry e : out) {
                w.writeBoolean(true).writeLong(e.cookie()).writeString(e.name());
                e.attrs().encode(w);
            }
            w.writeBoolean(false).writeBoolean(eof);
        });
    }

    /** CREATE (§18.4): directories and symbolic links; the new object becomes the current filehandle. */
    OpResult create(OpArgs.Create a, CompoundState st) {
        long dir = requireDirectory(st.current());
        Path d = handles.path(dir);
        Path p = d.resolve(checkName(a.name()));
        NewAttrs n = NewAttrs.parse(a.attrs());
        long before = FileInfo.of(d).change();
        try {
            switch (a.type()) {
                case 2 -> Files.createDirectory(p);
                case 5 -> Files.createSymbolicLink(p, Path.of(a.linkText()));
                default -> throw new NfsError(Nfs4.NFS4ERR_BADTYPE, "CREATE of type " + a.type());
            }
        } catch (IOException e) {
            throw NfsError.of(e);
        }
        if (a.type() != 5) {
            n.apply(p);
        }
        long after = FileInfo.of(d).change();
        st.current(handles.child(dir, a.name()));
        int[] set = a.type() == 5 ? new int[0] : n.mask();
        return OpResult.ok(Nfs4.OP_CREATE, (w, v) -> {
            changeInfo(w, before, after);
            Attrs.writeBitmap(w, set);
        });
    }

    OpResult remove(OpArgs.Remove a, CompoundState st) {
        long dir = requireDirectory(st.current());
        Path d = handles.path(dir);
        long ino = handles.child(dir, checkName(a.name()));
        recalls.forClient(st.clientId(), ino); // §10.4.4: another client's REMOVE of the file
        long before = FileInfo.of(d).change();
        try {
            Files.delete(d.resolve(a.name()));
        } catch (IOException e) {
            throw NfsError.of(e);
        }
        handles.forget(ino);
        long after = FileInfo.of(d).change();
        return OpResult.ok(Nfs4.OP_REMOVE, (w, v) -> changeInfo(w, before, after));
    }

    /** RENAME (§18.26): from the saved directory to the current one, replacing a target (rename(2)). */
    OpResult rename(OpArgs.Rename a, CompoundState st) {
        long from = requireDirectory(st.saved());
        long to = requireDirectory(st.current());
        Path src = handles.path(from);
        Path dst = handles.path(to);
        long ino = handles.child(from, checkName(a.oldName()));
        checkName(a.newName());
        long sb = FileInfo.of(src).change();
        long tb = FileInfo.of(dst).change();
        Long replaced = null;
        if (Files.exists(dst.resolve(a.newName()), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            replaced = handles.child(to, a.newName());
        }
        // §10.4.4: another client's RENAME of the file, as its source or its target
        recalls.forClient(st.clientId(), ino);
        if (replaced != null) {
            recalls.forClient(st.clientId(), replaced);
        }
        try {
            Files.move(src.resolve(a.oldName()), dst.resolve(a.newName()), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw NfsError.of(e);
        }
        if (replaced != null && replaced != ino) {
            handles.forget(replaced);
        }
        handles.moved(ino, to, a.newName());
        long sa = FileInfo.of(src).change();
        long ta = FileInfo.of(dst).change();
        return OpResult.ok(Nfs4.OP_RENAME, (w, v) -> {
            changeInfo(w, sb, sa);
            changeInfo(w, tb, ta);
        });
    }

    /** LINK (§18.9): the saved filehandle's file gets a name in the current directory. */
    OpResult link(OpArgs.Link a, CompoundState st) {
        long file = st.saved();
        long dir = requireDirectory(st.current());
        Path d = handles.path(dir);
        long before = FileInfo.of(d).change();
        try {
            Files.createLink(d.resolve(checkName(a.name())), handles.path(file));
        } catch (IOException e) {
            throw NfsError.of(e);
        }
        long after = FileInfo.of(d).change();
        return OpResult.ok(Nfs4.OP_LINK, (w, v) -> changeInfo(w, before, after));
    }

    long requireDirectory(long ino) {
        FileInfo f = FileInfo.of(handles.path(ino));
        if (!f.isDirectory()) {
            throw new NfsError(f.isSymlink() ? Nfs4.NFS4ERR_SYMLINK : Nfs4.NFS4ERR_NOTDIR, "not a directory");
        }
        return ino;
    }

    /** A component4 (§14.5): not empty, not "." or "..", no '/' or NUL, at most 255 bytes. */
    static String checkName(String name) {
        if (name.isEmpty()) {
            throw new NfsError(Nfs4.NFS4ERR_INVAL, "empty name");
        }
        if (name.equals(".") || name.equals("..") || name.indexOf('/') >= 0 || name.indexOf('\0') >= 0) {
            throw new NfsError(Nfs4.NFS4ERR_BADNAME, "name " + name);
        }
        if (name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 255) {
            throw new NfsError(Nfs4.NFS4ERR_NAMETOOLONG, "name too long");
        }
        return name;
    }

    /** change_info4: not atomic (other changes may come between our two reads). */
    static void changeInfo(XdrWriter w, long before, long after) {
        w.writeBoolean(false).writeLong(before).writeLong(after);
    }
}
