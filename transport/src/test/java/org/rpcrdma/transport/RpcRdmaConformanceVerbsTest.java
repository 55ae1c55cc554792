package org.rpcrdma.transport;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.transport.link.VerbsLink;

/**
 * {@link ConformanceTable} over real verbs (Soft-RoCE): the raw peer is the connection of a
 * real client or server endpoint on its own RC QP, our server or client the other end.
 * A connection is reused across rules and replaced only after a rule whose outcome is a
 * closed connection (connection set-up is the expensive part under emulation).
 */
@Tag("verbs")
@Timeout(value = 600, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RpcRdmaConformanceVerbsTest {
    /** As the host test; our client also has memory windows off, so a chunk is exposed by a registration. */
    static final RpcRdmaOptions SERVER_SIDE = RpcRdmaConformanceTest.SERVER_SIDE.withConnectTimeoutMillis(30_000);
    static final RpcRdmaOptions CLIENT_SIDE = RpcRdmaConformanceTest.CLIENT_SIDE.withConnectTimeoutMillis(30_000)
            .withMemoryWindows(false);

    @AfterEach
    void nothingLeft() throws Exception {
        EndpointVerbsTest.closeAndCheckNothingLeft();
    }

    @Test
    void theTableHoldsOnVerbs() throws Exception {
        InetAddress ip = EndpointVerbsTest.deviceAddress();
        new ConformancePlayer(ConformancePlayer.LinkKind.VERBS, h -> {
            AtomicReference<Connection> accepted = new AtomicReference<>();
            RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), SERVER_SIDE, h, accepted::set);
            RpcRdmaClient raw = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), SERVER_SIDE);
            if (!EndpointDefectsVerbsTest.waitFor(() -> accepted.get() != null, 30_000)) {
                throw new AssertionError("the server never saw the raw client's connection");
            }
            Connection dut = accepted.get();
            return new ConformancePlayer.Session(dut, new RawPeer(raw.connection(), false),
                    () -> exposed(dut) + exposed(raw.connection()), () -> chunkBytes(dut), () -> {
                        raw.close();
                        server.close();
                    });
        }, h -> {
            AtomicReference<RawPeer> rawPeer = new AtomicReference<>();
            // the tap is in place before the connection is accepted: nothing arrives unseen
            RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), CLIENT_SIDE, call -> { },
                    c -> rawPeer.set(new RawPeer(c, false)));
            RpcRdmaClient client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), CLIENT_SIDE);
            client.connection().serveBackwardCalls(h);
            Connection dut = client.connection();
            return new ConformancePlayer.Session(dut, rawPeer.get(),
                    () -> exposed(dut) + exposed(rawPeer.get().conn), () -> chunkBytes(dut), () -> {
                        client.close();
                        server.close();
                    });
        }, 15_000).run();
    }

    private static int exposed(Connection c) {
        return ((VerbsLink) RawAccess.link(c)).exposedNow();
    }

    private static long chunkBytes(Connection c) {
        return ((VerbsLink) RawAccess.link(c)).chunkBytesInUse();
    }
}
