package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.IncomingCall;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * The typed server places DDP-eligible results in the write chunks the caller offered
 * (RFC 8166 §3.4.6: a responder MUST): a Linux-style READ that offers a write chunk and no
 * Reply chunk gets its data placed, result k goes to chunk k, and results beyond the chunks
 * stay in the reply, which then goes through the Reply chunk when it does not fit inline
 * (implementation-experience draft §3.8).
 */
class DdpReplyTest {
    static final int PROG = 0x20000078;
    static final int MAX = 1 << 20;

    /** READ-like results: eof, the data (DDP-eligible), a trailer. */
    record Read(int eof, MemorySegment data, int trailer) {}

    /** Two READs' results in one reply (an NFSv4 COMPOUND may carry several). */
    record Reads(MemorySegment first, MemorySegment second, int trailer) {}

    static XdrCodec<Read> readResult(MemorySegment receptacle) {
        return XdrCodec.of((w, r) -> {
            w.writeInt(r.eof());
            Codecs.payload(MAX).encode(w, r.data());
            w.writeInt(r.trailer());
        }, r -> new Read(r.readInt(), receptacle == null ? Codecs.payload(MAX).decode(r)
                : Codecs.payloadInto(receptacle).decode(r), r.readInt()));
    }

    static XdrCodec<Reads> readsResult(MemorySegment receptacle) {
        return XdrCodec.of((w, r) -> {
            Codecs.payload(MAX).encode(w, r.first());
            Codecs.payload(MAX).encode(w, r.second());
            w.writeInt(r.trailer());
        }, r -> new Reads(receptacle == null ? Codecs.payload(MAX).decode(r) : Codecs.payloadInto(receptacle).decode(r),
                Codecs.payload(MAX).decode(r), r.readInt()));
    }

    static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    /** Procedure 1: READ of {@code count} bytes; procedure 2: two READs of {@code count} and {@code count + 1}. */
    static RpcDispatcher server() {
        RpcDispatcher d = new RpcDispatcher();
        RpcProgramVersion v = d.program(PROG, 1);
        v.procedure(new RpcProcedure<>(1, Codecs.INT, readResult(null)),
                (count, call) -> call.reply(new Read(1, MemorySegment.ofArray(pattern(count, 1)), 0x7e7e)));
        v.procedure(new RpcProcedure<>(2, Codecs.INT, readsResult(null)), (count, call) -> call.reply(
                new Reads(MemorySegment.ofArray(pattern(count, 2)), MemorySegment.ofArray(pattern(count + 1, 3)), 0x5a)));
        return d;
    }

    static RpcRdmaOptions small() {
        return RpcRdmaOptions.builder().inlineThreshold(1024).build();
    }

    @Test
    void aWriteChunkAndNoReplyChunkGetsTheResultPlaced() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(small(), server())) {
            OncRpcClient c = new OncRpcClient(p.client(), PROG, 1);
            MemorySegment receptacle = MemorySegment.ofArray(new byte[16_384]);
            // 10001 bytes, far over the 1 KiB threshold; no Reply chunk offered (maxReplyBytes 0)
            Read r = c.call(new RpcProcedure<>(1, Codecs.INT, readResult(receptacle)), 10_001, receptacle, 0);
            assertEquals(1, r.eof());
            assertEquals(receptacle.address(), r.data().address(), "the data is in the receptacle, placed");
            assertArrayEquals(pattern(10_001, 1), r.data().toArray(ValueLayout.JAVA_BYTE));
            assertEquals(0x7e7e, r.trailer(), "the item after the placed data decodes from the reduced reply");
            assertEquals(1, p.server().stats().rdmaWrites());
            assertEquals(10_001, p.server().stats().rdmaBytesWritten(), "the data alone, no pad");
            assertEquals(0, p.server().stats().errChunkSent());
            // a small result goes to the write chunk too: the responder MUST use it
            Read s = c.call(new RpcProcedure<>(1, Codecs.INT, readResult(receptacle)), 5, receptacle, 0);
            assertArrayEquals(pattern(5, 1), s.data().toArray(ValueLayout.JAVA_BYTE));
            assertEquals(2, p.server().stats().rdmaWrites());
            assertEquals(0, p.client().outstandingCalls());
            assertEquals(0, p.server().peerOutstandingCalls());
        }
    }

    @Test
    void tooFewWriteChunksTheRestInlineThroughTheReplyChunk() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(small(), server())) {
            OncRpcClient c = new OncRpcClient(p.client(), PROG, 1);
            MemorySegment receptacle = MemorySegment.ofArray(new byte[8192]);
            // two results of 3000 and 3001 bytes, one write chunk, a Reply chunk of 8 KiB
            Reads r = c.call(new RpcProcedure<>(2, Codecs.INT, readsResult(receptacle)), 3000, receptacle, 8192);
            assertEquals(receptacle.address(), r.first().address(), "the first result went to the write chunk");
            assertArrayEquals(pattern(3000, 2), r.first().toArray(ValueLayout.JAVA_BYTE));
            assertArrayEquals(pattern(3001, 3), r.second().toArray(ValueLayout.JAVA_BYTE), "the second, inline");
            assertEquals(0x5a, r.trailer());
            assertEquals(1, p.server().stats().replyChunksUsed(), "the rest is over 1 KiB: the Reply chunk");
            assertEquals(2, p.server().stats().rdmaWrites(), "one Write into the write chunk, one into the Reply chunk");
            assertEquals(3000 + 24 + 4 + 4 + 3004 + 4, p.server().stats().rdmaBytesWritten(),
                    "the first result, then the reduced reply (header, two length words, the second, trailer)");
        }
    }

    /**
     * A call as the transport delivered it, presented to the dispatcher as if it had offered
     * {@code chunks} write chunks (our requester offers one; a peer may offer several), and
     * the reply the dispatcher gives it recorded (then sent inline to end the call).
     */
    static final class Offering implements IncomingCall {
        final int chunks;
        final IncomingCall real;
        MemorySegment reply;
        List<MemorySegment> payloads = List.of();

        Offering(int chunks, IncomingCall real) {
            this.chunks = chunks;
            this.real = real;
        }

        @Override
        public ReceivedMessage message() {
            return real.message();
        }

        @Override
        public int xid() {
            return real.xid();
        }

        @Override
        public Connection connection() {
            return real.connection();
        }

        @Override
        public void reply(MemorySegment rpcReply) {
            replyDdp(rpcReply, List.of());
        }

        @Override
        public void reply(MemorySegment rpcReply, MemorySegment payload) {
            replyDdp(rpcReply, List.of(payload));
        }

        @Override
        public void replyDdp(MemorySegment rpcReply, List<MemorySegment> ps) {
            reply = MemorySegment.ofArray(rpcReply.toArray(ValueLayout.JAVA_BYTE));
            payloads = ps.stream().map(p -> MemorySegment.ofArray(p.toArray(ValueLayout.JAVA_BYTE))).toList();
            real.reply(rpcReply);
        }

        @Override
        public int writeChunkCount() {
            return chunks;
        }

        @Override
        public long writeChunkCapacity(int chunk) {
            return chunk < chunks ? MAX : 0;
        }
    }

    /** Procedure {@code proc} with argument {@code count}, served by {@link #server()} as if {@code chunks} were offered. */
    static Offering offer(int chunks, int xid, int proc, int count) throws Exception {
        RpcDispatcher d = server();
        Offering[] seen = new Offering[1];
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), real -> {
            seen[0] = new Offering(chunks, real);
            d.handle(seen[0]);
        })) {
            int[] w = {xid, OncRpc.CALL, 2, PROG, 1, proc, 0, 0, 0, 0, count};
            MemorySegment m = MemorySegment.ofArray(new byte[4 * w.length]);
            for (int i = 0; i < w.length; i++) {
                Xdr.putInt(m, 4L * i, w[i]);
            }
            p.client().call(m).get(5, java.util.concurrent.TimeUnit.SECONDS).close();
        }
        return seen[0];
    }

    @Test
    void twoResultsGoIntoTwoWriteChunksInOrder() throws Exception {
        Offering in = offer(2, 0x77, 2, 9);
        assertEquals(2, in.payloads.size(), "one payload per write chunk");
        assertArrayEquals(pattern(9, 2), in.payloads.get(0).toArray(ValueLayout.JAVA_BYTE), "result 0 to chunk 0");
        assertArrayEquals(pattern(10, 3), in.payloads.get(1).toArray(ValueLayout.JAVA_BYTE), "result 1 to chunk 1");
        // reduced: the reply header, each result's length word (data and pad gone), the trailer
        int[] want = {0x77, OncRpc.REPLY, OncRpc.MSG_ACCEPTED, OncRpc.AUTH_NONE, 0, OncRpc.SUCCESS, 9, 10, 0x5a};
        assertArrayEquals(want, words(in.reply));
    }

    @Test
    void noWriteChunkLeavesEverythingInline() throws Exception {
        Offering in = offer(0, 0x78, 1, 5);
        assertEquals(List.of(), in.payloads);
        assertEquals(24 + 4 + 4 + 8 + 4, in.reply.byteSize(), "eof, length word, data with its pad, trailer");
    }

    @Test
    void oneWriteChunkTakesTheFirstResultOnly() throws Exception {
        Offering in = offer(1, 0x79, 2, 4);
        assertEquals(1, in.payloads.size());
        assertArrayEquals(pattern(4, 2), in.payloads.get(0).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(24 + 4 + 4 + 8 + 4, in.reply.byteSize(), "the second result (5 bytes and pad) stays inline");
    }

    static int[] words(MemorySegment m) {
        int[] w = new int[(int) m.byteSize() / 4];
        for (int i = 0; i < w.length; i++) {
            w[i] = Xdr.getInt(m, 4L * i);
        }
        return w;
    }
}
