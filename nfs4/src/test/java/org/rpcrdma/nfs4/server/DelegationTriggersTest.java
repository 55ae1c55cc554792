package org.rpcrdma.nfs4.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rpcrdma.nfs4.Compound;
import org.rpcrdma.nfs4.CompoundResult;
import org.rpcrdma.nfs4.FileOps;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.nfs4.Nfs4Client;
import org.rpcrdma.nfs4.Stateid;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * The other triggers of a recall (RFC 8881 §10.4.4) beside a conflicting OPEN: REMOVE,
 * RENAME and SETATTR of the file by another client, and a write or remove through the
 * server's own API. Each sends CB_RECALL over the holder's back channel, and the change
 * happens only once the delegation is returned (the other client's operation answered
 * NFS4ERR_DELAY meanwhile, which our client retries; the server's call waits).
 */
class DelegationTriggersTest {
    private static final Stateid ANONYMOUS = new Stateid(0, new byte[Stateid.OTHER_SIZE]);
    @TempDir
    Path dir;
    private NfsServer server;
    private InMemoryPair a;
    private InMemoryPair b;
    private Nfs4Client holder;
    private Nfs4Client other;

    @BeforeEach
    void open() throws Exception {
        server = new NfsServer(dir, 90, RpcRdmaOptions.DEFAULT_INLINE, 2);
        a = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), server.dispatcher());
        b = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), server.dispatcher());
        Files.writeString(dir.resolve("f"), "data");
        holder = Nfs4Client.open(a.client(), 2, NfsServerTest.ROOT);
        other = Nfs4Client.open(b.client(), 2, NfsServerTest.ROOT);
    }

    @AfterEach
    void close() {
        holder.close();
        other.close();
        a.close();
        b.close();
        server.close();
    }

    @Test
    void aRemoveByAnotherClientRecallsTheDelegationFirst() throws Exception {
        Nfs4Client.OpenFile held = DelegationRecallTest.openWithDelegation(holder);
        CompoundResult r = other.compound(Compound.of(FileOps.putRootFh(), FileOps.remove("f")));
        assertRecalledAndReturned(held);
        assertEquals(Nfs4.NFS4_OK, r.status(), "REMOVE after the DELEGRETURN");
        assertFalse(Files.exists(dir.resolve("f")));
    }

    @Test
    void aRenameByAnotherClientRecallsTheDelegationFirst() throws Exception {
        Nfs4Client.OpenFile held = DelegationRecallTest.openWithDelegation(holder);
        CompoundResult r = other.compound(Compound.of(FileOps.putRootFh(), FileOps.saveFh(), FileOps.putRootFh(),
                FileOps.rename("f", "g")));
        assertRecalledAndReturned(held);
        assertEquals(Nfs4.NFS4_OK, r.status(), "RENAME after the DELEGRETURN");
        assertEquals("data", Files.readString(dir.resolve("g")));
    }

    @Test
    void aSetattrOfTheSizeByAnotherClientRecallsTheDelegationFirst() throws Exception {
        Nfs4Client.OpenFile held = DelegationRecallTest.openWithDelegation(holder);
        CompoundResult r = other.compound(Compound.of(FileOps.putFh(held.fh()), FileOps.setSize(ANONYMOUS, 2)));
        assertRecalledAndReturned(held);
        assertEquals(Nfs4.NFS4_OK, r.status(), "SETATTR after the DELEGRETURN");
        assertEquals("da", Files.readString(dir.resolve("f")));
    }

    @Test
    void aWriteWithTheAnonymousStateidByAnotherClientRecallsTheDelegationFirst() throws Exception {
        Nfs4Client.OpenFile held = DelegationRecallTest.openWithDelegation(holder);
        CompoundResult r = other.compound(Compound.of(FileOps.putFh(held.fh()), FileOps.write(ANONYMOUS, 0,
                Nfs4.FILE_SYNC4, MemorySegment.ofArray("DA".getBytes(StandardCharsets.US_ASCII)))));
        assertRecalledAndReturned(held);
        assertEquals(Nfs4.NFS4_OK, r.status(), "WRITE after the DELEGRETURN");
        assertEquals("DAta", Files.readString(dir.resolve("f")));
    }

    @Test
    void theHoldersOwnRemoveRecallsNothing() throws Exception {
        DelegationRecallTest.openWithDelegation(holder);
        CompoundResult r = holder.compound(Compound.of(FileOps.putRootFh(), FileOps.remove("f")));
        assertEquals(Nfs4.NFS4_OK, r.status());
        assertNull(holder.recalls().poll(200, TimeUnit.MILLISECONDS), "no CB_RECALL to the client that removed");
    }

    @Test
    void aWriteThroughTheServersApiRecallsTheDelegationThenWrites() throws Exception {
        Nfs4Client.OpenFile held = DelegationRecallTest.openWithDelegation(holder);
        CompletableFuture<Void> write = CompletableFuture.runAsync(() -> {
            try {
                server.write("f", 0, ByteBuffer.wrap("DATA!".getBytes(StandardCharsets.US_ASCII)));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertRecalledAndReturned(held);
        write.get(5, TimeUnit.SECONDS);
        assertEquals("DATA!", Files.readString(dir.resolve("f")));
        // the change is over: the file may be delegated again
        assertTrue(DelegationRecallTest.openWithDelegation(holder).delegation().isRead());
    }

    @Test
    void aRemoveThroughTheServersApiRecallsTheDelegationThenRemoves() throws Exception {
        Nfs4Client.OpenFile held = DelegationRecallTest.openWithDelegation(holder);
        CompletableFuture<Void> remove = CompletableFuture.runAsync(() -> {
            try {
                server.remove("f");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertRecalledAndReturned(held);
        remove.get(5, TimeUnit.SECONDS);
        assertFalse(Files.exists(dir.resolve("f")));
    }

    @Test
    void theServersApiRefusesAPathOutOfTheExport() throws Exception {
        IoCall.assertRefused(() -> server.write("../outside", 0, ByteBuffer.allocate(1)));
        IoCall.assertRefused(() -> server.remove("sub/../../f"));
        Path outside = Files.createTempFile("outside", "");
        Files.createSymbolicLink(dir.resolve("link"), outside);
        IoCall.assertRefused(() -> server.write("link", 0, ByteBuffer.allocate(1)));
        assertEquals(0, Files.size(outside), "nothing written through the link");
        Files.delete(outside);
        assertTrue(Files.exists(dir.resolve("f")));
    }

    private void assertRecalledAndReturned(Nfs4Client.OpenFile held) throws Exception {
        assertTrue(held.delegation().isRead(), "the holder got a read delegation");
        Nfs4Client.Recall r = holder.recalls().poll(5, TimeUnit.SECONDS);
        assertNotNull(r, "the holder got CB_RECALL");
        assertArrayEquals(held.delegation().stateid().other(), r.stateid().other());
        r.returned().get(5, TimeUnit.SECONDS);
        assertEquals(0, server.delegations(), "returned");
    }

    /** A call that must fail with an IOException, the file system untouched. */
    private interface IoCall {
        void run() throws Exception;

        static void assertRefused(IoCall call) {
            try {
                call.run();
            } catch (java.io.IOException e) {
                return;
            } catch (Exception e) {
                throw new AssertionError("expected an IOException, got " + e, e);
            }
            throw new AssertionError("a path out of the export was accepted");
        }
    }
}
