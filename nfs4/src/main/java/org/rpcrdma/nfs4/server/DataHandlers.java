package org.rpcrdma.nfs4.server;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.nfs4.server.CompoundCodec.OpResult;
import org.rpcrdma.oncrpc.Codecs;
import org.rpcrdma.oncrpc.XdrCodec;

/**
 * READ, WRITE and COMMIT (RFC 8881 §18.22, §18.32, §18.3). File data never lands on the
 * Java heap: READ reads the file into this thread's off-heap buffer, which the reply hands
 * to the transport as a DDP item (RFC 8267 §3: READ's data goes into the client's write
 * chunk by RDMA Write); WRITE writes the file from the memory its data was pulled into by
 * RDMA Read (a view, no copy), or from the inline bytes of a small WRITE.
 */
final class DataHandlers {
    private static final XdrCodec<MemorySegment> READ_DATA = Codecs.payload(OpArgs.MAX_IO);
    /** One buffer per server thread, for the lifetime of the thread (no allocation per READ). */
    private static final ThreadLocal<MemorySegment> READ_BUFFER =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(OpArgs.MAX_IO, 4096));

    private final FileHandles handles;
    private final OpenStates opens;
    private final Recalls recalls;
    private final byte[] writeVerifier;

    DataHandlers(FileHandles handles, OpenStates opens, Recalls recalls, byte[] writeVerifier) {
        this.handles = handles;
        this.opens = opens;
        this.recalls = recalls;
        this.writeVerifier = writeVerifier.clone();
    }

    OpResult read(OpArgs.Read a, CompoundState st) {
        long ino = regular(st.current());
        opens.check(a.stateid(), ino, Nfs4.OPEN4_SHARE_ACCESS_READ);
        int count = (int) Math.min(Integer.toUnsignedLong(a.count()), OpArgs.MAX_IO);
        // a second READ in one COMPOUND must not share the first one's buffer
        MemorySegment buf = st.reads++ == 0 ? READ_BUFFER.get() : Arena.ofAuto().allocate(count);
        st.cacheable = false; // the buffer is the thread's: a reply that holds it is not kept
        long n = 0;
        boolean eof;
        try (FileChannel c = FileChannel.open(handles.path(ino), StandardOpenOption.READ)) {
            ByteBuffer bb = buf.asSlice(0, count).asByteBuffer();
            while (bb.hasRemaining()) {
                int k = c.read(bb, a.offset() + n);
                if (k < 0) {
                    break;
                }
                n += k;
            }
            eof = a.offset() + n >= c.size();
        } catch (IOException e) {
            throw NfsError.of(e);
        }
        MemorySegment data = buf.asSlice(0, n);
        boolean end = eof;
        return OpResult.ok(Nfs4.OP_READ, (w, v) -> {
            w.writeBoolean(end);
            READ_DATA.encode(w, data);
        });
    }

    OpResult write(OpArgs.Write a, CompoundState st) {
        long ino = regular(st.current());
        opens.check(a.stateid(), ino, Nfs4.OPEN4_SHARE_ACCESS_WRITE);
        if (OpenStates.special(a.stateid())) {
            // §10.4.4: a WRITE with a special stateid conflicts like an OPEN for writing
            // (one with an open stateid had its OPEN recall them already)
            recalls.forClient(st.clientId(), ino);
        }
        boolean sync = a.stable() != Nfs4.UNSTABLE4;
        long n = 0;
        try (FileChannel c = FileChannel.open(handles.path(ino), StandardOpenOption.WRITE)) {
            ByteBuffer bb = a.data().asByteBuffer();
            while (bb.hasRemaining()) {
                n += c.write(bb, a.offset() + n);
            }
            if (sync) {
                c.force(false);
            }
        } catch (IOException e) {
            throw NfsError.of(e);
        }
        int count = (int) n;
        int committed = sync ? Nfs4.FILE_SYNC4 : Nfs4.UNSTABLE4;
        return OpResult.ok(Nfs4.OP_WRITE, (w, v) -> w.writeInt(count).writeInt(committed).writeFixedOpaque(writeVerifier));
    }

    OpResult commit(OpArgs.Commit a, CompoundState st) {
        Path p = handles.path(regular(st.current()));
        try (FileChannel c = FileChannel.open(p, StandardOpenOption.WRITE)) {
            c.force(true);
        } catch (IOException e) {
            throw NfsError.of(e);
        }
        return OpResult.ok(Nfs4.OP_COMMIT, (w, v) -> w.writeFixedOpaque(writeVerifier));
    }

    private long regular(long ino) {
        FileInfo f = FileInfo.of(handles.path(ino));
        if (f.isDirectory()) {
            throw new NfsError(Nfs4.NFS4ERR_ISDIR, "data operation on a directory");
        }
        if (!f.isRegular()) {
            throw new NfsError(f.isSymlink() ? Nfs4.NFS4ERR_SYMLINK : Nfs4.NFS4ERR_INVAL, "not a regular file");
        }
        return ino;
    }
}
