package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.transport.chunk.ChunkBuffer;
import org.rpcrdma.transport.link.CompletionSink;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.transport.link.VerbsLink;
import org.rpcrdma.transport.rpc.ConnectionEngine;
import org.rpcrdma.transport.rpc.ReceiveQueue;
import org.rpcrdma.transport.rpc.StatsCounters;

/**
 * The far end of a conformance session: a {@link Connection} of a real endpoint (or of an
 * {@link InMemoryPair}) turned into a raw peer. It sends bytes exactly as built, sees the
 * exact bytes our endpoint sends, exposes its own memory for chunks, and posts RDMA Reads
 * and Writes on our endpoint's memory as a responder would; it interprets nothing itself.
 *
 * <p>It takes the place of its connection's engine as the sink of the link's completions:
 * a received message is copied out undecoded and its receive buffer goes back to the
 * engine's receive queue (reposted to what the engine needs, as the engine does), an RDMA
 * completion is the test's own operation's; Send completions, flushes and the link's loss
 * go on to the engine, which keeps the send contexts and the connection's life.
 */
final class RawPeer implements CompletionSink {
    /** A region of the raw peer's memory exposed to our endpoint under {@code rkey}. */
    record Chunk(ChunkBuffer buffer, int rkey, long address, int length) {
        byte[] bytes() {
            return buffer.segment().asSlice(0, length).toArray(ValueLayout.JAVA_BYTE);
        }
    }

    final Connection conn;
    private final ConnectionEngine engine;
    private final boolean rdmaCompletesInline;
    private final LinkedBlockingQueue<byte[]> inbox = new LinkedBlockingQueue<>();
    private final LinkedBlockingQueue<Integer> rdmaDone = new LinkedBlockingQueue<>();
    private final List<Chunk> exposed = new ArrayList<>();
    private int nextToken;

    /**
     * @param rdmaCompletesInline the link copies an RDMA Read or Write when it is posted
     *                            (in memory): its completion need not be awaited
     */
    RawPeer(Connection conn, boolean rdmaCompletesInline) {
        this.conn = conn;
        this.rdmaCompletesInline = rdmaCompletesInline;
        this.engine = conn.engine();
        Link link = RawAccess.link(conn);
        if (link instanceof VerbsLink v) {
            v.deliverTo(this);
        } else {
            InMemoryPair.deliverTo(link, this);
        }
    }

    @Override
    public void received(int slot, int length) {
        ReceiveQueue receives = engine.receives();
        MemorySegment buf;
        try {
            buf = receives.completed(slot);
        } catch (IllegalStateException e) {
            return; // the connection was lost meanwhile: its buffers were reclaimed
        }
        try {
            inbox.add(buf.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE));
            receives.replenish(engine.requiredReceives());
        } catch (RuntimeException e) {
            engine.onLinkLost(e);
        } finally {
            engine.releaseReceive(slot);
        }
    }

    @Override
    public void rdmaCompleted(int token) {
        rdmaDone.add(token);
    }

    @Override
    public void sendCompleted(int slot) {
        engine.sendCompleted(slot);
    }

    @Override
    public void flushed(int slot) {
        engine.flushed(slot);
    }

    @Override
    public void onLinkLost(Throwable cause) {
        engine.onLinkLost(cause);
    }

    @Override
    public MemorySegment receiveBuffer(int slot) {
        return engine.receiveBuffer(slot);
    }

    @Override
    public boolean remoteInvalidation() {
        return engine.remoteInvalidation();
    }

    @Override
    public StatsCounters counters() {
        return engine.counters();
    }

    @Override
    public int outstandingCalls() {
        return engine.outstandingCalls();
    }

    @Override
    public String toString() {
        return engine + " (raw peer)";
    }

    void send(byte[] message) {
        RawAccess.send(conn, MemorySegment.ofArray(message));
    }

    /** The next message our endpoint sent, or null after {@code ms}. */
    byte[] next(long ms) throws InterruptedException {
        return inbox.poll(ms, TimeUnit.MILLISECONDS);
    }

    /** Messages received and not taken yet (discarded). */
    List<byte[]> drain() {
        List<byte[]> l = new ArrayList<>();
        inbox.drainTo(l);
        return l;
    }

    /** Exposes {@code content} (then {@code spare} bytes of 0xEE) to our endpoint's Reads, or Writes if writable. */
    Chunk expose(byte[] content, int spare, boolean writable) {
        int len = content.length + spare;
        ChunkBuffer b = RawAccess.link(conn).allocateChunk(len);
        MemorySegment s = b.segment();
        s.asSlice(0, len).fill((byte) 0xEE);
        MemorySegment.copy(MemorySegment.ofArray(content), 0, s, 0, content.length);
        int rkey = RawAccess.link(conn).expose(b, 0, len, writable);
        Chunk c = new Chunk(b, rkey, s.address(), len);
        exposed.add(c);
        return c;
    }

    /** Withdraws every exposure of this row and frees its memory. */
    void withdrawAll() {
        for (Chunk c : exposed) {
            RawAccess.link(conn).withdraw(new int[] {c.rkey()}, 1, () -> c.buffer().release());
        }
        exposed.clear();
    }

    /** RDMA Write of {@code data} to our endpoint's memory (rkey, address); no need to wait before the Send that follows. */
    void write(int rkey, long address, byte[] data) throws InterruptedException {
        rdma(true, rkey, address, data.length, data);
    }

    /** RDMA Read of {@code length} bytes of our endpoint's memory. */
    byte[] read(int rkey, long address, int length) throws InterruptedException {
        return rdma(false, rkey, address, length, null);
    }

    private byte[] rdma(boolean write, int rkey, long address, int length, byte[] data) throws InterruptedException {
        ChunkBuffer local = RawAccess.link(conn).allocateChunk(Math.max(1, length));
        try {
            int token = nextToken++ & 0x3;
            if (write) {
                MemorySegment.copy(MemorySegment.ofArray(data), 0, local.segment(), 0, length);
                RawAccess.link(conn).postWrite(token, local, 0, length, rkey, address);
            } else {
                RawAccess.link(conn).postRead(token, local, 0, length, rkey, address);
            }
            if (!rdmaCompletesInline) {
                Integer done = rdmaDone.poll(15, TimeUnit.SECONDS);
                if (done == null) {
                    return null;
                }
            }
            return local.segment().asSlice(0, length).toArray(ValueLayout.JAVA_BYTE);
        } finally {
            local.release(); // copied (in memory) or completed (verbs) by now
        }
    }
}
