package org.rpcrdma.nfs4;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.nfs4.NfsdRecallVerbsTest.step;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.rpc.ApiBridge;

/**
 * Against the Linux kernel's nfsd in the guest ({@code scripts/verbs-tests --nfsd}): the
 * client's link drops while it holds a delegation; the client connects again (it has a
 * back channel to keep, RFC 8167 §5.4), binds the new connection's back channel to its
 * session with BIND_CONN_TO_SESSION (RFC 8167 §3.2, RFC 8881 §18.34), and a recall still
 * reaches it there: the local write in the guest ends at our DELEGRETURN.
 */
@Tag("verbs")
@Tag("nfsd")
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class NfsdReconnectVerbsTest {
    /**
     * The client's link is lost (not closed by us), as a pulled cable or a dead port would
     * lose it; there is no cable in the guest, so the transport's own loss path is taken,
     * through the engine behind the connection ({@code rpc.ApiBridge}, exported to these
     * tests by the build).
     */
    static void dropLink(Connection c) {
        ApiBridge.access().engine(c).onLinkLost(new RpcRdmaException("test: link down"));
    }

    @Test
    void afterTheLinkDropsTheClientReconnectsBindsItsBackChannelAndARecallStillArrives() throws Exception {
        String name = "reconnect-recall-" + System.nanoTime();
        Path file = NfsdRecallVerbsTest.export(name);
        Files.writeString(file, "before");
        try (Nfs4Client c = NfsdRecallVerbsTest.connect()) {
            Nfs4Client.OpenFile f = c.open(name, Nfs4.OPEN4_SHARE_ACCESS_READ | Nfs4.OPEN4_SHARE_ACCESS_WANT_READ_DELEG);
            assertTrue(f.delegation().isRead(), "a read delegation: " + f.delegation());
            Connection first = c.connection();
            step("dropping the link of " + first);
            dropLink(first);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while ((c.connection() == first || !c.connection().isOpen()) && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            assertNotSame(first, c.connection(), "the client did not reconnect");
            step("reconnected: " + c.connection());
            // forward calls go on on the new connection
            assertTrue(c.size(f.fh()) >= 0);
            step("SEQUENCE flags after the reconnect: 0x" + Integer.toHexString(c.lastSequenceFlags()));
            until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (c.backChannelBinds() == 0 && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            // at least once: nfsd may report CB_PATH_DOWN again until its probe of the new path
            // is done, and a slow guest can take longer than the rebind period (exactly-once for
            // one connection is BackChannelBinderTest's)
            assertTrue(c.backChannelBinds() >= 1, "BIND_CONN_TO_SESSION bound the new connection's back channel");

            CompletableFuture<Long> localWrite = new CompletableFuture<>();
            Thread writer = new Thread(() -> {
                long t0 = System.nanoTime();
                try {
                    Files.writeString(file, "after the reconnect");
                    localWrite.complete(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                } catch (Throwable t) {
                    localWrite.completeExceptionally(t);
                }
            }, "local-write");
            writer.setDaemon(true);
            writer.start();
            step("local write started");
            Nfs4Client.Recall r = c.recalls().poll(60, TimeUnit.SECONDS);
            step("recall: " + r + "; SEQUENCE flags 0x" + Integer.toHexString(c.lastSequenceFlags()));
            assertNotNull(r, "no CB_RECALL within 60 s after the reconnect: the back channel is not bound");
            assertArrayEquals(f.fh(), r.fh(), "CB_RECALL names our file");
            r.returned().get(60, TimeUnit.SECONDS);
            long waited = localWrite.get(60, TimeUnit.SECONDS);
            step("local write done after " + waited + " ms");
            assertTrue(waited < 30_000, "the local write waited " + waited + " ms: it should end at our DELEGRETURN");
            c.close(f);
        }
    }
}
