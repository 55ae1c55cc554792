package org.rpcrdma.oncrpc.example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rpcrdma.oncrpc.OncRpcClient;
import org.rpcrdma.oncrpc.RpcDispatcher;
import org.rpcrdma.oncrpc.example.NotificationProtocol.Notification;
import org.rpcrdma.oncrpc.example.NotificationProtocol.Subscribe;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * The notification example over the transport joined in memory: subscribe forward,
 * notifications backward. Waiting for a reconnecting client needs a real endpoint's
 * Backchannel: {@code NotificationVerbsTest}.
 */
class NotificationExampleTest {
    private InMemoryPair pair;

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    @Test
    void subscribersGetEachNotificationAsABackwardCall() throws Exception {
        NotificationServer ns = new NotificationServer(id -> pair.server());
        RpcDispatcher d = new RpcDispatcher();
        ns.register(d);
        pair = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), d);
        List<Notification> got = new CopyOnWriteArrayList<>();
        pair.client().enableBackchannel(NotificationClient.callbacks(got::add)).get(5, TimeUnit.SECONDS);
        OncRpcClient rpc = new OncRpcClient(pair.client(), NotificationProtocol.PROGRAM,
                NotificationProtocol.VERSION);
        rpc.call(NotificationProtocol.SUBSCRIBE, new Subscribe(42, "news"));
        assertEquals(Set.of(42L), ns.subscribers("news"));

        assertEquals(1, ns.publish("news", "hello").get(5, TimeUnit.SECONDS));
        assertEquals(0, ns.publish("sport", "nobody listens").get(5, TimeUnit.SECONDS));
        assertEquals(List.of(new Notification("news", "hello")), got);

        // a subscriber whose connection is gone (no Backchannel to wait with here) is not counted
        pair.client().close(0, TimeUnit.MILLISECONDS);
        assertEquals(0, ns.publish("news", "lost").get(5, TimeUnit.SECONDS));
        assertEquals(1, got.size());
    }
}
