package org.rpcrdma.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.transport.endpoint.ConnectionAssembly;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.transport.rpc.ConnectionEngine;
import org.rpcrdma.transport.rpc.ConnectionParams;
import org.rpcrdma.transport.rpc.StatsCounters;

/**
 * Two {@link Connection}s joined by an in-memory "RC QP": a Send copies into a receive the
 * peer has posted, or, like rnr_retry_count 0, kills the connection when none is posted.
 * Each side has one completion thread, as with a CQ poller.
 */
final class LoopbackPair implements AutoCloseable {
    final Connection client;
    final Connection server;
    final Side clientSide;
    final Side serverSide;

    LoopbackPair(int inline, int clientCredits, int backwardCredits, int serverCredits) {
        this(inline, clientCredits, backwardCredits, serverCredits, 0);
    }

    /** @param callTimeoutMillis the default call timeout of both sides (0: none) */
    LoopbackPair(int inline, int clientCredits, int backwardCredits, int serverCredits, long callTimeoutMillis) {
        Arena arena = Arena.ofAuto();
        int cRecv = 2 * (clientCredits + backwardCredits) + 8;
        int sRecv = 2 * (serverCredits + backwardCredits) + 8;
        clientSide = new Side();
        serverSide = new Side();
        clientSide.peer = serverSide;
        serverSide.peer = clientSide;
        StatsCounters cs = new StatsCounters();
        StatsCounters ss = new StatsCounters();
        client = new ConnectionEngine("client", new ConnectionParams(true, inline, inline, clientCredits, backwardCredits,
                false, 4, callTimeoutMillis), clientSide,
                ConnectionAssembly.receivePool(clientSide, arena.allocate((long) cRecv * inline), cRecv, inline, 4, cs), 16,
                arena.allocate(16L * inline), cs).connection();
        server = new ConnectionEngine("server", new ConnectionParams(false, inline, inline, Math.max(1, backwardCredits),
                serverCredits, false, 4, callTimeoutMillis), serverSide,
                ConnectionAssembly.receivePool(serverSide, arena.allocate((long) sRecv * inline), sRecv, inline, 4, ss), 16,
                arena.allocate(16L * inline), ss).connection();
        clientSide.conn = client;
        serverSide.conn = server;
        clientSide.exec.execute(client.engine()::start);
        serverSide.exec.execute(server.engine()::start);
        clientSide.sync();
        serverSide.sync();
    }

    static final class Side implements Link {
        Connection conn;
        final ExecutorService exec = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "loopback-poller");
            t.setDaemon(true);
            return t;
        });
        final ArrayDeque<Integer> posted = new ArrayDeque<>();
        Side peer;
        volatile boolean down;
        volatile String failure;

        @Override
        public void postSend(int slot, MemorySegment buffer, int length, boolean signalled) {
            deliver(buffer, length);
            if (signalled) {
                exec.execute(() -> conn.engine().sendCompleted(slot));
            }
        }

        /** Puts raw bytes on the wire towards the peer (tests inject malformed or rogue messages). */
        void deliver(MemorySegment buffer, int length) {
            if (down) {
                return;
            }
            Integer r;
            synchronized (peer.posted) {
                r = peer.posted.poll();
            }
            if (r == null) {
                failure = "RNR: no receive posted at peer";
                disconnect();
                return;
            }
            int slot = r;
            // Receives land in the receiving connection's own pool buffers.
            MemorySegment dst = peer.conn.engine().receiveBuffer(slot);
            MemorySegment.copy(buffer, 0, dst, 0, length);
            peer.exec.execute(() -> peer.conn.engine().received(slot, length));
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
            exec.execute(() -> conn.engine().onLinkLost(new RpcRdmaException("disconnected")));
            peer.exec.execute(() -> peer.conn.engine().onLinkLost(new RpcRdmaException("peer disconnected")));
        }

        void sync() {
            try {
                exec.submit(() -> {}).get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }
    }

    @Override
    public void close() {
        client.close(1, TimeUnit.SECONDS);
        server.close(1, TimeUnit.SECONDS);
        clientSide.exec.shutdownNow();
        serverSide.exec.shutdownNow();
    }
}
