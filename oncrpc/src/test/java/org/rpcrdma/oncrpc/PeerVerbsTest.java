package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.RpcRdmaServer;

/** Over rxe: the server sees the client's real IPv4 address and its instance id; the client sees the server's. */
@Tag("verbs")
class PeerVerbsTest {
    @Test
    void theServerSeesTheClientsAddressAndId() throws Exception {
        InetAddress ip = VerbsEnv.address();
        AtomicReference<PeerTest.Seen> seen = new AtomicReference<>();
        RpcDispatcher d = new RpcDispatcher();
        d.program(0x20000051, 1).procedure(PeerTest.WHO, (v, call) -> {
            seen.set(new PeerTest.Seen(call.remoteAddress(), call.clientId()));
            call.reply(null);
        });
        RpcRdmaServer server = null;
        RpcRdmaClient client = null;
        try {
            RpcRdmaOptions o = VerbsEnv.OPTS.toBuilder().backwardCredits(2).build();
            server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, d, null);
            client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
            client.enableBackchannel(new RpcDispatcher()).get(30, TimeUnit.SECONDS);
            new OncRpcClient(client, 0x20000051, 1).call(PeerTest.WHO, null);
            InetSocketAddress from = seen.get().address();
            assertInstanceOf(Inet4Address.class, from.getAddress());
            assertEquals(ip, from.getAddress(), "the client connected from the rxe address");
            assertEquals(client.clientId(), seen.get().clientId());
            assertEquals(new InetSocketAddress(ip, server.port()), client.connection().remoteAddress());
            assertEquals(from, server.connections().iterator().next().remoteAddress());
        } finally {
            VerbsEnv.closeAndCheckNothingLeft(client, server);
        }
    }
}
