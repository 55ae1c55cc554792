package org.rpcrdma.nfs4.server;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Changes to the exported files made through the server's own API rather than by a
 * client (a program beside the server that owns the data): each recalls the delegations
 * it conflicts with first (RFC 8881 §10.4.4), so no client goes on reading a cached copy
 * the change made stale.
 */
final class LocalChanges {
    private final Path root;
    private final FileHandles handles;
    private final Recalls recalls;

    LocalChanges(Path root, FileHandles handles, Recalls recalls) {
        this.root = root;
        this.handles = handles;
        this.recalls = recalls;
    }

    /** Writes {@code data} at {@code offset} of the file at {@code path} (created if missing), synced. */
    void write(String path, long offset, ByteBuffer data) throws IOException, InterruptedException {
        Path p = resolve(path);
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            writeTo(p, offset, data); // a new file: no one holds a delegation of it
            return;
        }
        recalls.forServer(FileHandles.ino(p), () -> writeTo(p, offset, data));
    }

    private static Void writeTo(Path p, long offset, ByteBuffer data) throws IOException {
        // not through a symbolic link: its target may be outside the export
        try (FileChannel c = FileChannel.open(p, StandardOpenOption.WRITE, StandardOpenOption.CREATE,
                LinkOption.NOFOLLOW_LINKS)) {
            ByteBuffer b = data.duplicate();
            for (long at = offset; b.hasRemaining(); ) {
                at += c.write(b, at);
            }
            c.force(false);
        }
        return null;
    }

    /** Removes the file (or empty directory) at {@code path}. */
    void remove(String path) throws IOException, InterruptedException {
        Path p = resolve(path);
        long ino = FileHandles.ino(p);
        recalls.forServer(ino, () -> {
            Files.delete(p);
            return null;
        });
        handles.forget(ino);
    }

    /** {@code path} relative to the export's root, refused if it leads out of it. */
    private Path resolve(String path) throws IOException {
        Path p = root.resolve(path).normalize();
        if (!p.startsWith(root) || p.equals(root)) {
            throw new IOException(path + " is not a file of the export");
        }
        Path dir = p.getParent().toRealPath(LinkOption.NOFOLLOW_LINKS);
        if (!dir.startsWith(root)) {
            throw new IOException(path + " leads out of the export");
        }
        return dir.resolve(p.getFileName());
    }
}
