package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RpcRdmaStatsTest {
    /** A snapshot does not move when the connection counts on; a new one shows what happened since. */
    @Test
    void aSnapshotIsImmutableAndANewOneSeesTheCallsSince() {
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), echo())) {
            RpcRdmaStats clientBefore = p.client().stats();
            RpcRdmaStats serverBefore = RawAccess.settled(p).server().stats();
            assertEquals(0, clientBefore.callsSent());
            assertEquals(0, serverBefore.callsReceived());
            for (int i = 1; i <= 3; i++) {
                assertArrayEquals(new byte[] {(byte) i}, results(p.client().call(callMsg(i, 1, new byte[] {(byte) i})).join()));
            }
            assertEquals(0, clientBefore.callsSent(), "the old snapshot kept its value");
            assertEquals(Map.copyOf(clientBefore.asMap()), Map.copyOf(clientBefore.asMap()));
            RpcRdmaStats client = p.client().stats();
            RpcRdmaStats server = RawAccess.settled(p).server().stats();
            assertEquals(3, client.callsSent(), "requester");
            assertEquals(3, client.repliesReceived(), "requester");
            assertEquals(0, client.callsReceived(), "the client served nothing");
            assertEquals(3, server.callsReceived(), "responder");
            assertEquals(3, server.repliesSent(), "responder");
            assertEquals(0, server.callsSent(), "the server called nothing");
            assertNotEquals(clientBefore, client);
            assertEquals(client, p.client().stats(), "nothing happened between the two");
            assertEquals(client.hashCode(), p.client().stats().hashCode());
        }
    }

    /** asMap: one entry per accessor, by its name, with its value; the map cannot be changed. */
    @Test
    void asMapHasOneEntryPerAccessorByItsName() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), echo())) {
            results(p.client().call(callMsg(7, 1, new byte[8])).join());
            RpcRdmaStats s = p.client().stats();
            Map<String, Long> byAccessor = new LinkedHashMap<>();
            for (Method m : RpcRdmaStats.class.getDeclaredMethods()) {
                if (Modifier.isPublic(m.getModifiers()) && m.getReturnType() == long.class && m.getParameterCount() == 0) {
                    byAccessor.put(m.getName(), (Long) m.invoke(s));
                }
            }
            assertEquals(52, byAccessor.size(), byAccessor.keySet()::toString);
            assertEquals(byAccessor, s.asMap());
            assertEquals(1L, s.asMap().get("callsSent"));
            assertEquals(s.asMap().toString(), s.toString());
            assertThrows(UnsupportedOperationException.class, () -> s.asMap().put("callsSent", 0L));
        }
    }

    /** The public type hands out values only: no field, no constructor a user could call. */
    @Test
    void thePublicTypeHasNoMutableStateAndNoPublicConstructor() {
        assertEquals(0, RpcRdmaStats.class.getFields().length);
        assertEquals(0, RpcRdmaStats.class.getConstructors().length);
        for (var f : RpcRdmaStats.class.getDeclaredFields()) {
            assertTrue(Modifier.isFinal(f.getModifiers()), f.toString());
        }
    }

    /** A server's snapshot counts all its connections' work, as a connection's own does. */
    @Test
    void theServerSideSnapshotMatchesItsConnections() {
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(1).build(), echo())) {
            p.client().enableBackchannel(echo()).join();
            results(p.server().call(callMsg(1, 9, new byte[4])).join());
            assertEquals(1, RawAccess.settled(p).server().stats().callsSent(), "the server as requester of a backward call");
            assertEquals(1, p.client().stats().callsReceived(), "the client as its responder");
            assertEquals(1, p.client().stats().repliesSent());
            assertEquals(1, RawAccess.settled(p).server().stats().repliesReceived());
        }
    }
}
