package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.endpoint.ConnectionAssembly;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.transport.rpc.ConnectionEngine;
import org.rpcrdma.transport.rpc.ConnectionParams;
import org.rpcrdma.transport.rpc.ReceivePool;
import org.rpcrdma.transport.rpc.ReceiveQueue;
import org.rpcrdma.transport.rpc.StatsCounters;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * The receive handshake between a sender and the completion thread (Requester.pumpLocked,
 * Arrivals.received): a sender publishes the receives its call needs BEFORE it counts the
 * posted ones, so a completion thread that takes a receive and then reads the need cannot miss
 * both the sender's need and the sender its take (one receive short at a full window: RNR).
 */
class ReceiveHandshakeTest {
    /** A link that only records; the receive queue under test posts through it. */
    static final class QuietLink implements Link {
        @Override
        public void postSend(int slot, MemorySegment buffer, int length, boolean signalled) {
        }

        @Override
        public void postReceives(int[] slots, int count) {
        }

        @Override
        public void disconnect() {
        }
    }

    /** Records, at each ensurePosted, what it was asked and what the requester had published then. */
    static final class Watching implements ReceiveQueue {
        final ReceivePool pool;
        Connection conn;
        volatile boolean refuse;
        final List<int[]> asked = new ArrayList<>();

        Watching(ReceivePool pool) {
            this.pool = pool;
        }

        @Override
        public int replenish(int required) {
            return pool.replenish(required);
        }

        @Override
        public boolean ensurePosted(int required) {
            asked.add(new int[] {required, conn.engine().requiredReceives()});
            return !refuse && pool.ensurePosted(required);
        }

        @Override
        public MemorySegment completed(int slot) {
            return pool.completed(slot);
        }

        @Override
        public void flushed(int slot) {
            pool.flushed(slot);
        }

        @Override
        public void release(int slot) {
            pool.release(slot);
        }

        @Override
        public void shutdown() {
            pool.shutdown();
        }

        @Override
        public MemorySegment buffer(int slot) {
            return pool.buffer(slot);
        }

        @Override
        public int posted() {
            return pool.posted();
        }

        @Override
        public int held() {
            return pool.held();
        }

        @Override
        public int capacity() {
            return pool.capacity();
        }
    }

    private static MemorySegment nullCall(Arena arena, int xid) {
        MemorySegment m = arena.allocate(40);
        Xdr.putInt(m, 0, xid);
        Xdr.putInt(m, 4, OncRpc.CALL);
        Xdr.putInt(m, 8, 2);
        Xdr.putInt(m, 12, 100003);
        Xdr.putInt(m, 16, 4);
        return m;
    }

    private static Watching open(Arena arena, int credits, int grant) {
        QuietLink link = new QuietLink();
        StatsCounters stats = new StatsCounters();
        int recv = credits + grant + 8;
        Watching w = new Watching(ConnectionAssembly.receivePool(link, arena.allocate(recv * 1024L), recv, 1024, 1, stats));
        w.conn = new ConnectionEngine("handshake", new ConnectionParams(true, 1024, 1024, credits, grant, false, 4, 0), link, w,
                16, arena.allocate(16L * 1024), stats).connection();
        w.conn.engine().start();
        return w;
    }

    @Test
    void aCallsReceiveIsPublishedBeforeThePostedOnesAreCounted() {
        try (Arena arena = Arena.ofShared()) {
            Watching w = open(arena, 4, 2);
            // one call: a client's window is one credit until the server's first reply grants more
            CompletableFuture<ReceivedMessage> f = w.conn.call(nullCall(arena, 0x100));
            assertFalse(f.isDone());
            assertEquals(1, w.asked.size());
            int[] a = w.asked.get(0);
            assertEquals(1 + 2, a[0], "receives asked for: its reply + the grant");
            assertEquals(a[0], a[1], "the requester had published its need before it counted the posted receives");
            assertEquals(1 + 2, w.conn.engine().requiredReceives());
            w.conn.close(0, java.util.concurrent.TimeUnit.MILLISECONDS);
        }
    }

    @Test
    void aCallThatCannotBeSentGivesItsReceiveBack() {
        try (Arena arena = Arena.ofShared()) {
            Watching w = open(arena, 4, 2);
            w.refuse = true; // no receive for its reply: the call waits
            CompletableFuture<ReceivedMessage> f = w.conn.call(nullCall(arena, 0x200));
            assertFalse(f.isDone());
            assertTrue(w.asked.size() >= 1);
            assertEquals(3, w.asked.get(0)[1], "published while it was counted");
            assertEquals(2, w.conn.engine().requiredReceives(), "not sent: only the grant is needed");
            w.conn.close(0, java.util.concurrent.TimeUnit.MILLISECONDS);
        }
    }
}
