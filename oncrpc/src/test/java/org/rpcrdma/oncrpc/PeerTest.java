package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * A server sees who calls it: the peer's address and, once the client enabled its
 * backchannel, the client's instance id (the id its {@code Backchannel} is found by), on
 * the connection and on each {@link RpcServerCall}. The in-memory pair has no network:
 * each side's peer is the unresolved address {@code in-memory:0}.
 */
class PeerTest {
    record Seen(InetSocketAddress address, long clientId) {}

    static final RpcProcedure<Void, Void> WHO = new RpcProcedure<>(1, Codecs.VOID, Codecs.VOID);

    @Test
    void theServerSeesThePeerAddressAndTheClientIdOnTheCallAndTheConnection() throws Exception {
        AtomicReference<Seen> seen = new AtomicReference<>();
        RpcDispatcher d = new RpcDispatcher();
        d.program(0x20000051, 1).procedure(WHO, (v, call) -> {
            seen.set(new Seen(call.remoteAddress(), call.clientId()));
            call.reply(null);
        });
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), d)) {
            OncRpcClient c = new OncRpcClient(p.client(), 0x20000051, 1);
            c.call(WHO, null);
            assertEquals(InMemoryPair.ADDRESS, seen.get().address());
            assertTrue(seen.get().address().isUnresolved(), "no network address is claimed");
            assertEquals(0, seen.get().clientId(), "no backchannel enabled: the client has not said who it is");
            assertEquals(InMemoryPair.ADDRESS, p.server().remoteAddress());
            assertEquals(InMemoryPair.ADDRESS, p.client().remoteAddress());

            long id = p.client().clientId();
            assertNotEquals(0, id, "the in-memory client has an instance id as an RpcRdmaClient does");
            p.client().enableBackchannel(new RpcDispatcher()).get(10, TimeUnit.SECONDS);
            c.call(WHO, null);
            assertEquals(id, seen.get().clientId());
            assertEquals(id, p.server().clientId());
        }
    }
}
