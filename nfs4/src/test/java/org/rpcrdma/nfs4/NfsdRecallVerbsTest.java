package org.rpcrdma.nfs4;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.xdr.AuthSys;

/**
 * Against the Linux kernel's nfsd over RDMA in the guest ({@code scripts/verbs-tests --nfsd}:
 * {@code rdma-vm run --nfsd}, export on tmpfs): a read delegation, its recall as a backward
 * CB_COMPOUND {CB_SEQUENCE, CB_RECALL} on our own RDMA connection when the file is written
 * locally in the guest (the local open breaks nfsd's lease), our answer and DELEGRETURN,
 * and the local write completing; then 1 MiB READ and WRITE by direct data placement and a
 * READDIR through our Reply chunk. No nfsd: the test fails, never skips.
 */
@Tag("verbs")
@Tag("nfsd")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class NfsdRecallVerbsTest {
    static void step(String what) {
        System.err.println("[nfsd test] " + what);
    }

    static final int BACKWARD_CREDITS = 4;
    static final AuthSys ROOT = new AuthSys(0, "rpcrdma-nfs4-test", 0, 0, new int[0]);

    static String env(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            fail(name + " is not set: run in the guest with nfsd (scripts/verbs-tests --nfsd)");
        }
        return v;
    }

    static Nfs4Client connect() throws InterruptedException {
        RpcRdmaOptions o = RpcRdmaOptions.builder().connectTimeoutMillis(30_000).callTimeoutMillis(30_000)
                .backwardCredits(BACKWARD_CREDITS).build();
        step("connecting to nfsd at " + env("RDMA_VM_IP") + ":" + env("RDMA_VM_NFS_PORT"));
        return Nfs4Client.connect(new InetSocketAddress(env("RDMA_VM_IP"), Integer.parseInt(env("RDMA_VM_NFS_PORT"))),
                o, ROOT);
    }

    static Path export(String name) {
        return Path.of(env("RDMA_VM_NFS_EXPORT"), name);
    }

    @Test
    void aReadDelegationIsRecalledOnOurConnectionAndReturnedWhileForwardCallsGoOn() throws Exception {
        String name = "recall-" + System.nanoTime();
        Path file = export(name);
        Files.writeString(file, "before");
        try (Nfs4Client c = connect()) {
            SessionOps.SessionResult s = c.session();
            assertTrue((s.flags() & Nfs4.CREATE_SESSION4_FLAG_CONN_BACK_CHAN) != 0, "back channel bound: " + s);
            assertEquals(BACKWARD_CREDITS, s.back().maxRequests(),
                    "back channel ca_maxrequests: our backward credits, accepted as sent: " + s.back());

            step("session up: " + s);
            Nfs4Client.OpenFile f = c.open(name,
                    Nfs4.OPEN4_SHARE_ACCESS_READ | Nfs4.OPEN4_SHARE_ACCESS_WANT_READ_DELEG);
            step("opened " + name + ": " + f.delegation());
            assertTrue(f.delegation().isRead(), "a read delegation: " + f.delegation());
            assertEquals(0, c.lastSequenceFlags() & (Nfs4.SEQ4_STATUS_CB_PATH_DOWN
                    | Nfs4.SEQ4_STATUS_CB_PATH_DOWN_SESSION | Nfs4.SEQ4_STATUS_BACKCHANNEL_FAULT),
                    "nfsd sees our back channel up");
            Connection conn = c.connection();
            // nfsd accepts with responder resources 0 (it never lets a client read its memory):
            // our RDMA Read depth follows, so we never offer chunked backward calls here.
            assertEquals(0, conn.rdmaDepth(), "our RDMA Read depth against nfsd, which grants none");
            long backwardCallsBefore = conn.stats().callsReceived();
            long backwardRepliesBefore = conn.stats().repliesSent();
            assertEquals(0, c.callbacks().compounds.sum(), "nothing backward before the recall");

            // forward calls all along: GETATTRs from before the local write until after it completes
            AtomicReference<Throwable> forwardFailure = new AtomicReference<>();
            AtomicInteger forwardDuringRecall = new AtomicInteger();
            AtomicLong recallSeenAt = new AtomicLong(Long.MAX_VALUE);
            CompletableFuture<Long> localWrite = new CompletableFuture<>();
            Thread forward = new Thread(() -> {
                try {
                    // until the local write is done, and at least one call issued after the recall
                    // arrived has completed (under a loaded TCG guest the write may finish first)
                    while (!localWrite.isDone()
                            || (forwardDuringRecall.get() == 0 && recallSeenAt.get() != Long.MAX_VALUE)) {
                        long sent = System.nanoTime();
                        c.size(f.fh());
                        if (sent > recallSeenAt.get()) {
                            forwardDuringRecall.incrementAndGet();
                        }
                    }
                } catch (Throwable t) {
                    forwardFailure.set(t);
                }
            }, "forward-getattr");
            forward.start();

            // the local write in the guest breaks nfsd's lease: it waits for our DELEGRETURN
            Thread writer = new Thread(() -> {
                long t0 = System.nanoTime();
                try {
                    Files.writeString(file, "after the local write");
                    localWrite.complete(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                } catch (Throwable t) {
                    localWrite.completeExceptionally(t);
                }
            }, "local-write");
            writer.start();

            step("local write started");
            Nfs4Client.Recall r = c.recalls().poll(60, TimeUnit.SECONDS);
            recallSeenAt.set(r == null ? Long.MAX_VALUE - 1 : System.nanoTime());
            step("recall: " + r);
            assertNotNull(r, "no CB_RECALL within 60 s");
            assertTrue(r.stateid().sameState(f.delegation().stateid()), r.stateid() + " vs " + f.delegation());
            assertArrayEquals(f.fh(), r.fh(), "CB_RECALL names our file");
            r.returned().get(60, TimeUnit.SECONDS);
            step("delegation returned");
            long waited = localWrite.get(60, TimeUnit.SECONDS);
            step("local write done after " + waited + " ms");
            assertTrue(waited < 30_000, "the local write waited " + waited
                    + " ms: it should end at our DELEGRETURN, well before nfsd's 45 s lease-break time");
            forward.join(60_000);
            if (forwardFailure.get() != null) {
                throw new AssertionError("a forward call failed during the recall", forwardFailure.get());
            }
            assertTrue(forwardDuringRecall.get() >= 1, "forward calls issued after the recall arrived completed");

            // the callback came over RDMA on our connection: backward call and reply counted there
            assertTrue(conn.stats().callsReceived() - backwardCallsBefore >= 1, "backward calls on our connection");
            assertTrue(conn.stats().repliesSent() - backwardRepliesBefore >= 1, "backward replies from it");
            assertEquals(1, c.callbacks().recallsReceived.sum());
            List<Integer> xids = c.callbacks().compoundXids();
            assertEquals(List.of(r.xid()), xids, "one CB_COMPOUND, the recall's XID");
            assertEquals(21, c.size(f.fh()), "the local write is visible");
            c.close(f);
        }
    }

    static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + (i >>> 11) + seed);
        }
        return b;
    }

    /** Runs {@code step} with a bound, printing the connection's counters when it fails. */
    static <T> T bounded(Nfs4Client c, String what, java.util.concurrent.Callable<T> step) throws Exception {
        Connection conn = c.connection();
        try {
            return org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(60),
                    step::call, what);
        } catch (Throwable t) {
            step(what + " failed: " + t + "; connection " + conn + " open " + conn.isOpen() + ", current "
                    + c.connection() + "; stats " + conn.stats());
            throw t;
        }
    }

    /** A READ of {@code n} bytes: the data through our write chunk (the reply is larger than inline). */
    void readThroughAWriteChunk(int n) throws Exception {
        String name = "read-" + n + "-" + System.nanoTime();
        byte[] content = pattern(n, 1);
        Files.write(export(name), content);
        try (Nfs4Client c = connect(); Arena arena = Arena.ofShared()) {
            Nfs4Client.OpenFile f = c.open(name, Nfs4.OPEN4_SHARE_ACCESS_READ | Nfs4.OPEN4_SHARE_ACCESS_WANT_NO_DELEG);
            MemorySegment receptacle = arena.allocate(n);
            step("opened " + name + "; READ of " + n);
            FileOps.ReadResult rr = bounded(c, "READ of " + n, () -> c.read(f, 0, receptacle));
            step("READ returned " + rr.data().byteSize() + " bytes, eof " + rr.eof());
            assertEquals(n, rr.data().byteSize(), "one READ of all of it");
            assertArrayEquals(content, rr.data().toArray(ValueLayout.JAVA_BYTE));
            c.close(f);
        }
    }

    /** A WRITE of {@code n} bytes: the data in a read chunk nfsd pulls, the rest of the call inline. */
    void writeThroughAReadChunk(int n) throws Exception {
        String name = "write-" + n + "-" + System.nanoTime();
        Path file = export(name);
        Files.write(file, new byte[0]);
        byte[] next = pattern(n, 7);
        try (Nfs4Client c = connect()) {
            Nfs4Client.OpenFile f = c.open(name, Nfs4.OPEN4_SHARE_ACCESS_BOTH | Nfs4.OPEN4_SHARE_ACCESS_WANT_NO_DELEG);
            long longCalls = c.connection().stats().longCallsSent();
            step("opened " + name + "; WRITE of " + n);
            FileOps.WriteResult w = bounded(c, "WRITE of " + n, () -> c.write(f, 0, MemorySegment.ofArray(next)));
            step("WRITE: " + w);
            assertEquals(n, w.count());
            assertEquals(Nfs4.FILE_SYNC4, w.committed());
            assertEquals(longCalls, c.connection().stats().longCallsSent(),
                    "the data went in a read chunk, the rest of the call inline: not a long call");
            assertArrayEquals(next, Files.readAllBytes(file), "nfsd wrote what we sent");
            c.close(f);
        }
    }

    @Test
    void aReadOf64KiBThroughAWriteChunk() throws Exception {
        readThroughAWriteChunk(64 * 1024);
    }

    @Test
    void aReadOf1MiBThroughAWriteChunk() throws Exception {
        readThroughAWriteChunk(1 << 20);
    }

    @Test
    void aWriteOf64KiBThroughAReadChunk() throws Exception {
        writeThroughAReadChunk(64 * 1024);
    }

    @Test
    void aWriteOf1MiBThroughAReadChunk() throws Exception {
        writeThroughAReadChunk(1 << 20);
    }

    @Test
    void aReaddirLargerThanInlineComesThroughOurReplyChunk() throws Exception {
        Set<String> names = new HashSet<>();
        long bytes = 0;
        for (int i = 0; i < 250; i++) {
            String name = "readdir-entry-with-a-long-name-to-fill-the-reply-" + i;
            Files.writeString(export(name), "x");
            names.add(name);
            bytes += name.length();
        }
        assertTrue(bytes > 2 * 4096, "the names alone exceed the 4 KiB inline threshold");
        try (Nfs4Client c = connect()) {
            long viaChunkBefore = c.connection().stats().repliesThroughReplyChunk();
            FileOps.ReaddirResult d = c.readRootDir(256 * 1024);
            step("READDIR: " + d.entries().size() + " entries, eof " + d.eof());
            assertTrue(c.connection().stats().repliesThroughReplyChunk() > viaChunkBefore,
                    "nfsd sent the READDIR reply through our Reply chunk (RDMA_NOMSG)");
            Set<String> seen = new HashSet<>();
            d.entries().forEach(e -> seen.add(e.name()));
            assertTrue(d.eof(), "the whole directory in one reply");
            assertTrue(seen.containsAll(names), "every entry listed");
        }
    }

}
