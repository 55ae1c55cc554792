package org.rpcrdma.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import org.rpcrdma.transport.core.Link;

/**
 * A client and a server {@link Connection} joined in memory instead of by an RC QP: the
 * whole transport (header coding, credits per direction, XID tables, receive pool) with no
 * RDMA device. For testing call handlers and upper layers without hardware, and for
 * measuring what the transport itself costs per call.
 *
 * <p>A Send is copied into a receive the peer has posted, or, as with rnr_retry_count 0,
 * ends the connection when none is. Deliveries run on the thread that sent, one at a time
 * (a trampoline, so a handler that replies at once does not recurse): a call answered
 * synchronously has completed when {@code call} returns. Not thread-safe for sends from
 * several threads at once; use the real endpoints for that.
 *
 * <pre>{@code
 * try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), handler)) {
 *     ReceivedMessage reply = p.client().call(rpcCall).join();
 * }
 * }</pre>
 */
public final class InMemoryPair implements AutoCloseable {
    private final Arena arena = Arena.ofShared();
    private final Connection client;
    private final Connection server;
    // The wire: deliveries in order, kept in primitive arrays so that a call and its reply
    // allocate nothing here (what a benchmark of this pair shows is the transport's).
    private static final int RECEIVE = 0;
    private static final int SEND_DONE = 1;
    private static final int LOST = 2;
    private final Object wire = new Object();
    private int[] kinds = new int[64];
    private int[] slots = new int[64];
    private int[] lengths = new int[64];
    private End[] targets = new End[64];
    private int head;
    private int count;
    private boolean draining;

    private InMemoryPair(RpcRdmaOptions o, CallHandler handler) {
        End c = new End();
        End s = new End();
        c.peer = s;
        s.peer = c;
        client = side(true, "in-memory client", o, c);
        server = side(false, "in-memory server", o, s);
        server.handler(handler);
        client.start();
        server.start();
    }

    /** One side as an endpoint would build it: the receive pool first, then the connection. */
    private Connection side(boolean isClient, String name, RpcRdmaOptions o, End end) {
        int inline = o.inlineThreshold();
        RpcRdmaStats stats = new RpcRdmaStats();
        var pool = Connection.receivePool(end, arena.allocate((long) o.receiveBuffers(isClient) * inline),
                o.receiveBuffers(isClient), inline, o.receiveBatch(), stats);
        Connection conn = new Connection(name, new Connection.Params(isClient, inline, inline, o.ownCalls(isClient),
                o.peerCalls(isClient), false, o.signalEvery(), o.callTimeoutMillis()), end, pool,
                o.sendContexts(isClient), arena.allocate((long) o.sendContexts(isClient) * inline), stats);
        end.conn = conn;
        return conn;
    }

    /** Opens a pair with the options' inline threshold and credits; {@code handler} serves forward calls. */
    public static InMemoryPair open(RpcRdmaOptions options, CallHandler handler) {
        return new InMemoryPair(options, handler);
    }

    public Connection client() {
        return client;
    }

    public Connection server() {
        return server;
    }

    /** Runs deliveries in order on this thread; nested sends are queued behind the current one. */
    private void transmit(int kind, End target, int slot, int length) {
        synchronized (wire) {
            if (count == kinds.length) {
                grow();
            }
            int i = (head + count) % kinds.length;
            kinds[i] = kind;
            targets[i] = target;
            slots[i] = slot;
            lengths[i] = length;
            count++;
            if (draining) {
                return;
            }
            draining = true;
        }
        while (true) {
            int k;
            End t;
            int sl;
            int len;
            synchronized (wire) {
                if (count == 0) {
                    draining = false;
                    return;
                }
                k = kinds[head];
                t = targets[head];
                sl = slots[head];
                len = lengths[head];
                targets[head] = null;
                head = (head + 1) % kinds.length;
                count--;
            }
            switch (k) {
                case RECEIVE -> t.conn.onReceive(sl, len);
                case SEND_DONE -> t.conn.onSendCompleted(sl);
                default -> t.conn.onLinkLost(new RpcRdmaException("in-memory link disconnected"));
            }
        }
    }

    private void grow() {
        int n = kinds.length * 2;
        int[] k = new int[n];
        int[] sl = new int[n];
        int[] len = new int[n];
        End[] t = new End[n];
        for (int j = 0; j < count; j++) {
            int i = (head + j) % kinds.length;
            k[j] = kinds[i];
            sl[j] = slots[i];
            len[j] = lengths[i];
            t[j] = targets[i];
        }
        kinds = k;
        slots = sl;
        lengths = len;
        targets = t;
        head = 0;
    }

    /** One side's "QP": its posted receives, in order. */
    private final class End implements Link {
        Connection conn;
        final ArrayDeque<Integer> posted = new ArrayDeque<>();
        End peer;
        volatile boolean down;

        @Override
        public void postSend(int slot, MemorySegment buffer, int length, boolean signalled) {
            if (down) {
                return;
            }
            Integer r;
            synchronized (peer.posted) {
                r = peer.posted.poll();
            }
            if (r == null) {
                disconnect(); // like RNR with rnr_retry_count 0
                return;
            }
            int recv = r;
            MemorySegment.copy(buffer, 0, peer.conn.receiveBuffer(recv), 0, length);
            transmit(RECEIVE, peer, recv, length);
            if (signalled) {
                transmit(SEND_DONE, this, slot, 0);
            }
        }

        @Override
        public void postReceives(int[] slots, int count) {
            synchronized (posted) {
                for (int i = 0; i < count; i++) {
                    posted.add(slots[i]);
                }
            }
        }

        @Override
        public void disconnect() {
            if (down) {
                return;
            }
            down = true;
            peer.down = true;
            transmit(LOST, this, 0, 0);
            transmit(LOST, peer, 0, 0);
        }
    }

    /** Closes both connections (failing what is pending) and frees their memory. */
    @Override
    public void close() {
        client.close(0, java.util.concurrent.TimeUnit.MILLISECONDS);
        server.close(0, java.util.concurrent.TimeUnit.MILLISECONDS);
        arena.close();
    }
}
