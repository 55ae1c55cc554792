package org.rpcrdma.transport;

import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicInteger;
import org.rpcrdma.transport.core.RpcRdmaStats;
import org.rpcrdma.transport.verbs.CmEvent;
import org.rpcrdma.transport.verbs.CmId;
import org.rpcrdma.transport.verbs.ConnectionParameters;
import org.rpcrdma.transport.verbs.EventChannel;
import org.rpcrdma.transport.wire.ConnectPrivate;
import org.rpcrdma.transport.wire.ConnectSettings;

/**
 * The client endpoint: initiates one RC connection through rdma_cm, sends RFC 8797 private
 * data with connect, applies the negotiated inline thresholds, and exposes the
 * {@link Connection} (forward requester, backward responder once
 * {@link Connection#enableBackchannel} was called).
 *
 * <pre>{@code
 * try (RpcRdmaClient c = RpcRdmaClient.connect(new InetSocketAddress("10.0.0.1", 20049), RpcRdmaOptions.defaults())) {
 *     ReceivedMessage reply = c.connection().call(rpcCallBytes).get();
 * }
 * }</pre>
 */
public final class RpcRdmaClient implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RpcRdmaClient.class.getName());
    private static final AtomicInteger GENERATION = new AtomicInteger();

    private final EventChannel events;
    private final CmId id;
    private final VerbsLink link;
    private final Connection connection;
    private final Thread cmThread;
    private volatile boolean closing;

    private RpcRdmaClient(EventChannel events, CmId id, VerbsLink link, Connection connection) {
        this.events = events;
        this.id = id;
        this.link = link;
        this.connection = connection;
        this.cmThread = Thread.ofPlatform().daemon().name("rpcrdma-client-cm").start(this::watch);
    }

    /** Connects to {@code server} (port from the address; 20049 is the usual one). */
    public static RpcRdmaClient connect(InetSocketAddress server, RpcRdmaOptions o) {
        EventChannel ec = new EventChannel();
        CmId id = null;
        VerbsLink link = null;
        boolean ok = false;
        try {
            id = ec.createId();
            id.resolveAddress(null, server, o.connectTimeoutMillis());
            expect(ec, CmEvent.Type.ADDR_RESOLVED, o, server);
            id.resolveRoute(o.connectTimeoutMillis());
            expect(ec, CmEvent.Type.ROUTE_RESOLVED, o, server);
            link = new VerbsLink(id, o.sendContexts(), o.inlineThreshold(), o.receiveBuffers(), o.inlineThreshold(),
                    o.busyPoll(), GENERATION.incrementAndGet());
            ConnectPrivate mine = new ConnectPrivate(false, o.inlineThreshold(), o.inlineThreshold());
            // rnr_retry_count 0 (a missing receive is an error, as in Linux), retry_count 7.
            // Like xprtrdma, offer the server RDMA Read resources (it reads Read chunks from
            // us) and initiate none ourselves; Linux svcrdma rejects a client offering 0.
            id.connect(new ConnectionParameters(mine.toBytes(), 8, 0, 7, 0));
            CmEvent est = expect(ec, CmEvent.Type.ESTABLISHED, o, server);
            ConnectSettings s = ConnectSettings.negotiate(mine, ConnectPrivate.decode(est.privateData()));
            Connection c = new Connection("client->" + server,
                    new Connection.Params(true, s.clientToServer(), s.serverToClient(), o.credits(), o.backwardCredits(),
                            s.remoteInvalidation(), o.signalEvery()),
                    o.receiveBuffers(), o.receiveBatch(), o.sendContexts(), link.sendMemory(), link.receiveMemory(),
                    new RpcRdmaStats());
            link.start(c, "rpcrdma-client-cq");
            LOG.log(Level.DEBUG, "connected to {0}: inline {1}/{2}", server, s.clientToServer(), s.serverToClient());
            RpcRdmaClient client = new RpcRdmaClient(ec, id, link, c);
            ok = true;
            return client;
        } finally {
            if (!ok) {
                if (link != null) {
                    link.destroy();
                }
                if (id != null) {
                    id.close();
                }
                ec.close();
            }
        }
    }

    private static CmEvent expect(EventChannel ec, CmEvent.Type type, RpcRdmaOptions o, InetSocketAddress server) {
        CmEvent ev = ec.poll(o.connectTimeoutMillis() + 1000L);
        if (ev == null) {
            throw new RpcRdmaException("connect to " + server + ": no " + type + " within " + o.connectTimeoutMillis() + " ms");
        }
        if (ev.type() != type) {
            throw new RpcRdmaException("connect to " + server + ": " + ev.type() + " (status " + ev.status()
                    + ") instead of " + type);
        }
        return ev;
    }

    private void watch() {
        while (!closing) {
            CmEvent ev = events.poll(200);
            if (ev == null) {
                continue;
            }
            if (ev.type() == CmEvent.Type.DISCONNECTED || ev.type() == CmEvent.Type.DEVICE_REMOVAL) {
                connection.onLinkLost(new RpcRdmaException("rdma_cm " + ev.type()));
                return;
            }
        }
    }

    public Connection connection() {
        return connection;
    }

    /** Fails pending calls, disconnects and releases every verbs resource. */
    @Override
    public void close() {
        connection.close();
        closing = true;
        try {
            cmThread.join(3000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        link.destroy();
        id.close();
        events.close();
    }
}
