package org.rpcrdma.nfs4.server;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import org.rpcrdma.nfs4.Nfs4;

/**
 * An operation's failure: the nfsstat4 it answers (RFC 8881 §15). No stack trace: it is
 * an answer, not a bug, and a peer can cause one per message.
 */
final class NfsError extends RuntimeException {
    final int status;

    NfsError(int status, String why) {
        super(why, null, false, false);
        this.status = status;
    }

    /** The NFS4ERR for a failed file system call (errno as java.nio reports it). */
    static NfsError of(IOException e) {
        int s;
        if (e instanceof NoSuchFileException) {
            s = Nfs4.NFS4ERR_NOENT;
        } else if (e instanceof FileAlreadyExistsException) {
            s = Nfs4.NFS4ERR_EXIST;
        } else if (e instanceof DirectoryNotEmptyException) {
            s = Nfs4.NFS4ERR_NOTEMPTY;
        } else if (e instanceof AccessDeniedException) {
            s = Nfs4.NFS4ERR_ACCESS;
        } else if (e instanceof NotDirectoryException) {
            s = Nfs4.NFS4ERR_NOTDIR;
        } else if (e instanceof FileSystemException f && f.getReason() != null) {
            String r = f.getReason();
            s = r.contains("Is a directory") ? Nfs4.NFS4ERR_ISDIR
                    : r.contains("Not a directory") ? Nfs4.NFS4ERR_NOTDIR
                    : r.contains("No space") ? Nfs4.NFS4ERR_NOSPC
                    : r.contains("File name too long") ? Nfs4.NFS4ERR_NAMETOOLONG
                    : r.contains("Invalid cross-device") ? Nfs4.NFS4ERR_XDEV
                    : r.contains("Operation not permitted") ? Nfs4.NFS4ERR_PERM
                    : Nfs4.NFS4ERR_IO;
        } else {
            s = Nfs4.NFS4ERR_IO;
        }
        return new NfsError(s, e.toString());
    }
}
