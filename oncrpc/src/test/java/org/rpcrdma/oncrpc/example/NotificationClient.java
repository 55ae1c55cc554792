package org.rpcrdma.oncrpc.example;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.rpcrdma.oncrpc.OncRpcClient;
import org.rpcrdma.oncrpc.RpcDispatcher;
import org.rpcrdma.oncrpc.example.NotificationProtocol.Notification;
import org.rpcrdma.oncrpc.example.NotificationProtocol.Subscribe;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * A client of {@link NotificationServer}: serves the NOTIFY program on its backchannel
 * with an {@link RpcDispatcher} (the same class a server uses) and subscribes with forward
 * calls. The endpoint re-enables the backchannel after a reconnect by itself.
 */
public final class NotificationClient implements AutoCloseable {
    private final RpcRdmaClient client;
    private final OncRpcClient rpc;

    private NotificationClient(RpcRdmaClient client) {
        this.client = client;
        this.rpc = new OncRpcClient(client, NotificationProtocol.PROGRAM, NotificationProtocol.VERSION);
    }

    /** The dispatcher that hands each NOTIFY to {@code listener} and answers true. */
    public static RpcDispatcher callbacks(Consumer<Notification> listener) {
        RpcDispatcher d = new RpcDispatcher();
        d.program(NotificationProtocol.CALLBACK_PROGRAM, NotificationProtocol.CALLBACK_VERSION)
                .procedure(NotificationProtocol.NOTIFY, (n, call) -> {
                    listener.accept(n);
                    call.reply(true);
                });
        return d;
    }

    /**
     * Connects (granting the server backward credits, at least 1) and enables the
     * backchannel; {@code listener} runs on the connection's completion thread and must not block.
     */
    public static NotificationClient connect(InetSocketAddress server, RpcRdmaOptions options,
            Consumer<Notification> listener) throws Exception {
        RpcRdmaOptions o = options.backwardCredits() > 0 ? options : options.toBuilder().backwardCredits(4).build();
        RpcRdmaClient c = RpcRdmaClient.connect(server, o);
        try {
            c.enableBackchannel(callbacks(listener)).get(o.connectTimeoutMillis() + 30_000L, TimeUnit.MILLISECONDS);
            return new NotificationClient(c);
        } catch (Exception e) {
            c.close();
            throw e;
        }
    }

    /** Subscribes to {@code topic} (blocking). */
    public void subscribe(String topic) throws InterruptedException {
        rpc.call(NotificationProtocol.SUBSCRIBE, new Subscribe(client.clientId(), topic));
    }

    /** The RDMA endpoint (its {@code reconnects()}, its connection). */
    public RpcRdmaClient rdmaClient() {
        return client;
    }

    @Override
    public void close() {
        client.close();
    }
}
