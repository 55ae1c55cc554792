package org.rpcrdma.oncrpc.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.oncrpc.VerbsEnv;
import org.rpcrdma.oncrpc.example.NotificationProtocol.Notification;
import org.rpcrdma.transport.Backchannel;
import org.rpcrdma.transport.Connection;

/**
 * The notification example on real verbs, and the rule it is there to show: a backward
 * call to a client whose connection was lost waits for the client to reconnect and is then
 * delivered on the new connection (RFC 8167 §5.4).
 */
@Tag("verbs")
class NotificationVerbsTest {
    private NotificationServer server;
    private NotificationClient client;

    @AfterEach
    void tearDown() throws Exception {
        VerbsEnv.closeAndCheckNothingLeft(client, server);
    }

    @Test
    void aNotificationWaitsForTheSubscriberToReconnect() throws Exception {
        InetAddress ip = VerbsEnv.address();
        server = NotificationServer.listen(new InetSocketAddress(ip, 0), VerbsEnv.OPTS);
        List<Notification> got = new CopyOnWriteArrayList<>();
        client = NotificationClient.connect(new InetSocketAddress(ip, server.rdmaServer().port()),
                VerbsEnv.OPTS.toBuilder().backwardCredits(4).build(), got::add);
        client.subscribe("news");
        assertEquals(1, server.publish("news", "first").get(30, TimeUnit.SECONDS));
        assertEquals(List.of(new Notification("news", "first")), got);

        Backchannel bc = server.rdmaServer().backchannel(client.rdmaClient().clientId());
        Connection before = bc.connection();
        // the server drops the client's connection; the client has a backchannel to keep,
        // so it connects again by itself
        for (Connection c : server.rdmaServer().connections()) {
            c.close();
        }
        CompletableFuture<Integer> f = server.publish("news", "while you were away");
        // the client can't have come back yet (it first has to see the disconnect): the
        // notification waits in its Backchannel instead of failing
        assertEquals(1, bc.waitingCalls(), "the backward call is parked for the client");
        assertEquals(1, f.get(60, TimeUnit.SECONDS));
        assertEquals(List.of(new Notification("news", "first"), new Notification("news", "while you were away")), got);
        assertEquals(1, client.rdmaClient().reconnects());
        assertNotSame(before, bc.connection(), "delivered on the client's new connection");
        assertTrue(bc.connection().isOpen());
        assertEquals(0, bc.waitingCalls());
    }
}
