package org.rpcrdma.oncrpc.example;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;
import org.rpcrdma.oncrpc.OncRpcClient;
import org.rpcrdma.oncrpc.RpcDispatcher;
import org.rpcrdma.oncrpc.RpcTransport;
import org.rpcrdma.oncrpc.example.NotificationProtocol.Notification;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.RpcRdmaServer;

/**
 * An ONC RPC server on the transport that calls its clients back: clients SUBSCRIBE to a
 * topic with a forward call; {@link #publish} sends each subscriber a NOTIFY as a
 * backward call on its own connection (RFC 8167).
 *
 * <p>The rule it shows: a server cannot connect to a client, so a backward call to a client
 * whose connection was lost waits for that client to reconnect (up to
 * {@code RpcRdmaOptions.backchannelWaitMillis}, RFC 8167 §5.4) and is then sent on the new
 * connection; {@link #publish}'s future completes when every subscriber answered, came
 * back too late, or was gone for good.
 *
 * <pre>{@code
 * try (NotificationServer s = NotificationServer.listen(new InetSocketAddress(ip, 0), options)) {
 *     ... clients connect and subscribe ...
 *     int delivered = s.publish("news", "hello").join();
 * }
 * }</pre>
 */
public final class NotificationServer implements AutoCloseable {
    private final LongFunction<RpcTransport> backchannels;
    private final Map<String, Set<Long>> subscribers = new ConcurrentHashMap<>();
    private RpcRdmaServer server;

    /**
     * A server whose backward calls to client {@code id} go through
     * {@code backchannels.apply(id)}; register it with a dispatcher ({@link #register}).
     */
    public NotificationServer(LongFunction<RpcTransport> backchannels) {
        this.backchannels = backchannels;
    }

    /** A server listening on {@code bind} over RDMA; backward calls go through each client's {@code Backchannel}. */
    public static NotificationServer listen(InetSocketAddress bind, RpcRdmaOptions options) {
        RpcRdmaServer[] rdma = new RpcRdmaServer[1];
        NotificationServer s = new NotificationServer(id -> RpcTransport.of(rdma[0].backchannel(id)));
        RpcDispatcher d = new RpcDispatcher();
        s.register(d);
        rdma[0] = RpcRdmaServer.listen(bind, options, d, null);
        s.server = rdma[0];
        return s;
    }

    /** Serves SUBSCRIBE through {@code d}. */
    public void register(RpcDispatcher d) {
        d.program(NotificationProtocol.PROGRAM, NotificationProtocol.VERSION)
                .procedure(NotificationProtocol.SUBSCRIBE, (sub, call) -> {
                    subscribers.computeIfAbsent(sub.topic(), t -> ConcurrentHashMap.newKeySet()).add(sub.clientId());
                    call.reply(null);
                });
    }

    /** The RDMA endpoint of {@link #listen}, or null. */
    public RpcRdmaServer rdmaServer() {
        return server;
    }

    /** Client ids subscribed to {@code topic}. */
    public Set<Long> subscribers(String topic) {
        return Set.copyOf(subscribers.getOrDefault(topic, Set.of()));
    }

    /**
     * Sends {@code message} to every subscriber of {@code topic} as a backward NOTIFY; the
     * future completes with the number that took it (a subscriber whose call failed, for
     * instance one that did not come back in time, is not counted).
     */
    public CompletableFuture<Integer> publish(String topic, String message) {
        Notification n = new Notification(topic, message);
        List<CompletableFuture<Boolean>> acks = new ArrayList<>();
        for (long id : subscribers.getOrDefault(topic, Set.of())) {
            OncRpcClient cb = new OncRpcClient(backchannels.apply(id), NotificationProtocol.CALLBACK_PROGRAM,
                    NotificationProtocol.CALLBACK_VERSION);
            acks.add(cb.callAsync(NotificationProtocol.NOTIFY, n).exceptionally(e -> false));
        }
        return CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new))
                .thenApply(v -> (int) acks.stream().filter(CompletableFuture::join).count());
    }

    @Override
    public void close() {
        if (server != null) {
            server.close();
        }
    }
}
