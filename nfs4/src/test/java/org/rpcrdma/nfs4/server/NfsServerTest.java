package org.rpcrdma.nfs4.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rpcrdma.nfs4.FileOps;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.nfs4.Nfs4Client;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.xdr.AuthSys;
import org.rpcrdma.xdr.XdrReader;
import org.rpcrdma.xdr.XdrWriter;

/**
 * The server with our own NFSv4.1 client ({@link Nfs4Client}) as its peer over an
 * {@link InMemoryPair}: the session with its back channel probed by CB_NULL, OPEN, WRITE
 * and READ of 1 MiB (the data through the payload codec both ways), GETATTR, READDIR, and
 * the COMPOUND rules for operations out of place or not implemented.
 */
class NfsServerTest {
    static final AuthSys ROOT = new AuthSys(0, "test", 0, 0, new int[0]);
    @TempDir
    Path dir;
    private NfsServer server;
    private InMemoryPair pair;

    @BeforeEach
    void open() throws Exception {
        server = new NfsServer(dir, 90, RpcRdmaOptions.DEFAULT_INLINE, 2);
        pair = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), server.dispatcher());
    }

    @AfterEach
    void close() {
        pair.close();
        server.close();
    }

    @Test
    void ourClientWritesAndReadsBackAMebibyteAndListsTheDirectory() throws Exception {
        Files.createFile(dir.resolve("data"));
        Files.createDirectory(dir.resolve("sub"));
        byte[] bytes = new byte[1 << 20];
        new Random(7).nextBytes(bytes);
        try (Nfs4Client c = Nfs4Client.open(pair.client(), 2, ROOT); Arena arena = Arena.ofShared()) {
            assertEquals(1, server.clients());
            Nfs4Client.OpenFile f = c.open("data", Nfs4.OPEN4_SHARE_ACCESS_BOTH);
            assertEquals(1, server.openStates());
            FileOps.WriteResult w = c.write(f, 0, MemorySegment.ofArray(bytes));
            assertEquals(bytes.length, w.count());
            assertEquals(Nfs4.FILE_SYNC4, w.committed());
            assertArrayEquals(bytes, Files.readAllBytes(dir.resolve("data")), "the file on disk");
            assertEquals(bytes.length, c.size(f.fh()));

            MemorySegment into = arena.allocate(bytes.length);
            FileOps.ReadResult r = c.read(f, 0, into);
            assertTrue(r.eof());
            assertArrayEquals(bytes, r.data().toArray(ValueLayout.JAVA_BYTE));

            FileOps.ReaddirResult d = c.readRootDir(64 * 1024);
            assertEquals(List.of("data", "sub"), d.entries().stream().map(FileOps.DirEntry::name).toList());
            assertEquals(List.of(3L, 4L), d.entries().stream().map(FileOps.DirEntry::cookie).toList());
            assertTrue(d.eof());

            c.close(f);
            assertEquals(0, server.openStates());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while ((c.lastSequenceFlags() & Nfs4.SEQ4_STATUS_CB_PATH_FLAGS) != 0 && System.nanoTime() < deadline) {
                c.size(f.fh());
            }
            assertEquals(0, c.lastSequenceFlags() & Nfs4.SEQ4_STATUS_CB_PATH_FLAGS, "the CB_NULL probe was answered");
        }
    }

    @Test
    void operationsNotImplementedOrOutOfPlaceGetTheirErrorNotADroppedCall() throws Exception {
        // LOCK (12) is NFSv4.1's but not implemented: NOTSUPP; 99 is no operation: OP_ILLEGAL
        assertArrayEquals(new int[] {Nfs4.NFS4ERR_NOTSUPP, 1, 12, Nfs4.NFS4ERR_NOTSUPP}, compound(1, 12));
        assertArrayEquals(new int[] {Nfs4.NFS4ERR_OP_ILLEGAL, 1, Nfs4.OP_ILLEGAL, Nfs4.NFS4ERR_OP_ILLEGAL},
                compound(1, 99));
        // PUTROOTFH without SEQUENCE first (RFC 8881 §2.10.6.2)
        assertArrayEquals(new int[] {Nfs4.NFS4ERR_OP_NOT_IN_SESSION, 1, Nfs4.OP_PUTROOTFH,
            Nfs4.NFS4ERR_OP_NOT_IN_SESSION}, compound(1, Nfs4.OP_PUTROOTFH));
        // minor version 0 over this server: MINOR_VERS_MISMATCH, no results
        assertArrayEquals(new int[] {Nfs4.NFS4ERR_MINOR_VERS_MISMATCH, 0}, compound(0, Nfs4.OP_PUTROOTFH));
    }

    /** A COMPOUND of argument-less ops, raw; returns the status, the count and each (op, status). */
    private int[] compound(int minor, int... ops) throws Exception {
        MemorySegment m = MemorySegment.ofArray(new byte[256]);
        XdrWriter w = new XdrWriter(m, 0, m.byteSize());
        w.writeInt(0x1234).writeInt(0).writeInt(2).writeInt(Nfs4.PROGRAM).writeInt(Nfs4.VERSION)
                .writeInt(Nfs4.PROC_COMPOUND).writeInt(0).writeInt(0).writeInt(0).writeInt(0);
        w.writeInt(0).writeInt(minor).writeInt(ops.length);
        for (int op : ops) {
            w.writeInt(op);
        }
        try (ReceivedMessage rm = pair.client().call(m.asSlice(0, w.written())).get(5, TimeUnit.SECONDS)) {
            MemorySegment b = rm.bytes();
            XdrReader r = new XdrReader(b, 0, b.byteSize());
            assertEquals(0x1234, r.readInt());
            assertEquals(1, r.readInt()); // REPLY
            assertEquals(0, r.readInt()); // MSG_ACCEPTED
            r.readInt();
            r.readOpaque(400);
            assertEquals(0, r.readInt()); // SUCCESS
            int status = r.readInt();
            r.readOpaque(1024);
            int n = r.readInt();
            int[] out = new int[2 + 2 * n];
            out[0] = status;
            out[1] = n;
            for (int i = 0; i < n; i++) {
                out[2 + 2 * i] = r.readInt();
                out[3 + 2 * i] = r.readInt();
            }
            assertEquals(0, r.remaining());
            return out;
        }
    }
}
