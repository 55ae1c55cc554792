package org.rpcrdma.oncrpc.example;

import org.rpcrdma.oncrpc.Codecs;
import org.rpcrdma.oncrpc.RpcProcedure;
import org.rpcrdma.oncrpc.XdrCodec;

/**
 * A small notification protocol, in XDR:
 * <pre>
 * struct subscribe_args { unsigned hyper client_id; string topic&lt;255&gt;; };
 * struct notification   { string topic&lt;255&gt;; string message&lt;1024&gt;; };
 * program NOTIFY_PROG {            // forward: client to server
 *     version NOTIFY_V1 { void SUBSCRIBE(subscribe_args) = 1; } = 1;
 * } = 0x20000200;
 * program NOTIFY_CB_PROG {         // backward: server to client (RFC 8167)
 *     version NOTIFY_CB_V1 { bool NOTIFY(notification) = 1; } = 1;
 * } = 0x20000201;
 * </pre>
 * {@code client_id} is the client endpoint's {@code RpcRdmaClient.clientId()}, by which
 * the server finds that client's backchannel across its reconnects.
 */
public final class NotificationProtocol {
    private NotificationProtocol() {}

    public static final int PROGRAM = 0x2000_0200;
    public static final int VERSION = 1;
    public static final int CALLBACK_PROGRAM = 0x2000_0201;
    public static final int CALLBACK_VERSION = 1;

    /** A client asks for the notifications of one topic. */
    public record Subscribe(long clientId, String topic) {}

    /** One notification. */
    public record Notification(String topic, String message) {}

    static final XdrCodec<String> TOPIC = Codecs.string(255);
    static final XdrCodec<String> MESSAGE = Codecs.string(1024);

    static final XdrCodec<Subscribe> SUBSCRIBE_ARGS = XdrCodec.of(
            (w, s) -> {
                w.writeLong(s.clientId());
                TOPIC.encode(w, s.topic());
            },
            r -> new Subscribe(r.readLong(), TOPIC.decode(r)));

    static final XdrCodec<Notification> NOTIFICATION = XdrCodec.of(
            (w, n) -> {
                TOPIC.encode(w, n.topic());
                MESSAGE.encode(w, n.message());
            },
            r -> new Notification(TOPIC.decode(r), MESSAGE.decode(r)));

    /** SUBSCRIBE: forward, client to server. */
    public static final RpcProcedure<Subscribe, Void> SUBSCRIBE = new RpcProcedure<>(1, SUBSCRIBE_ARGS, Codecs.VOID);

    /** NOTIFY: backward, server to client; the client answers whether it took it. */
    public static final RpcProcedure<Notification, Boolean> NOTIFY = new RpcProcedure<>(1, NOTIFICATION, Codecs.BOOL);
}
