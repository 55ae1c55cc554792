package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.wire.StreamReduction;

/**
 * Where DDP-eligible arguments will attach once the transport has chunks: an encoded
 * call knows where its payloads lie, in the terms the transport's chunk arithmetic
 * ({@link StreamReduction}, RFC 8166 §3.4) takes.
 */
class DdpSeamTest {
    /** An NFS-WRITE-like argument: a handle, then the DDP-eligible data. */
    record Write(int handle, MemorySegment data) {}

    static final RpcProcedure<Write, Void> WRITE = new RpcProcedure<>(7, XdrCodec.of(
            (w, a) -> {
                w.writeInt(a.handle());
                Codecs.payload(1 << 20).encode(w, a.data());
            },
            r -> new Write(r.readInt(), Codecs.payload(1 << 20).decode(r))), Codecs.VOID);

    @Test
    void anEncodedCallLocatesItsPayloadForTheReadList() {
        byte[] data = new byte[3001]; // larger than the encoder's first buffer: located once, not per pass
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) i;
        }
        MessageEncoder.Encoded e;
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), call -> { })) {
            e = new OncRpcClient(p.client(), 100003, 4).encodeCall(0x1234, WRITE, new Write(9, MemorySegment.ofArray(data)));
        }
        int header = 40; // xid .. verifier, AUTH_NONE (RFC 5531 §9)
        long at = header + 4 + 4; // after the handle and the opaque's length word
        assertArrayEquals(new long[] {at}, e.ddpOffsets());
        assertArrayEquals(new long[] {3001}, e.ddpLengths());
        assertEquals(at + 3004, e.message().byteSize(), "data and its 3 pad bytes end the message");
        assertArrayEquals(data, e.message().asSlice(at, 3001).toArray(ValueLayout.JAVA_BYTE));

        StreamReduction.Reduced r = StreamReduction.reduce(e.message().byteSize(), e.ddpOffsets(), e.ddpLengths());
        assertEquals(List.of(new StreamReduction.Range(at, 3001)), r.chunks());
        assertEquals(at, r.inlineLength(), "inline: the header, the handle and the length word");
    }

    @Test
    void noPayloadNoItemsAndEachMessageItsOwn() {
        MessageEncoder.Encoded e = MessageEncoder.encodeWithItems(w -> Codecs.OPAQUE.encode(w, new byte[10]));
        assertEquals(0, e.ddpOffsets().length);
        // a payload encoded outside a message is not located; the next message starts empty
        Codecs.payload(8).encode(new org.rpcrdma.xdr.XdrWriter(MemorySegment.ofArray(new byte[16]), 0, 16),
                MemorySegment.ofArray(new byte[3]));
        MessageEncoder.Encoded one = MessageEncoder.encodeWithItems(w -> Codecs.payload(8).encode(w,
                MemorySegment.ofArray(new byte[3])));
        assertArrayEquals(new long[] {4}, one.ddpOffsets());
        assertEquals(0, MessageEncoder.encodeWithItems(w -> w.writeInt(1)).ddpOffsets().length);
        // a codec that encodes a message of its own inside one: each keeps its own items
        MessageEncoder.Encoded outer = MessageEncoder.encodeWithItems(w -> {
            w.writeInt(0);
            MessageEncoder.Encoded inner = MessageEncoder.encodeWithItems(
                    v -> Codecs.payload(8).encode(v, MemorySegment.ofArray(new byte[2])));
            assertArrayEquals(new long[] {4}, inner.ddpOffsets());
            Codecs.payload(8).encode(w, MemorySegment.ofArray(new byte[1]));
        });
        assertArrayEquals(new long[] {8}, outer.ddpOffsets());
        assertArrayEquals(new long[] {1}, outer.ddpLengths());
    }

    /**
     * Leaving items out: the first {@code max} payloads are not in the message (their
     * length words are, the data and pad are not) and come back as the very segments the
     * codec was given; later items stay inside; each pass of a growing encode starts over.
     */
    @Test
    void theFirstItemsAreLeftOutAsTheCallersOwnSegments() {
        MemorySegment a = MemorySegment.ofArray(new byte[3001]); // over the first buffer: encoded twice
        MemorySegment b = MemorySegment.ofArray(new byte[] {1, 2, 3, 4, 5});
        MessageEncoder.Encoded e = MessageEncoder.encodeLeavingOut(w -> {
            w.writeInt(9);
            Codecs.payload(1 << 20).encode(w, a);
            w.writeInt(10);
            Codecs.payload(1 << 20).encode(w, b);
            w.writeInt(11);
        }, 1);
        assertEquals(1, e.leftOut().length);
        assertSame(a, e.leftOut()[0], "the caller's segment, not a copy");
        assertArrayEquals(new long[] {8, 16}, e.ddpOffsets(), "positions in the message as sent");
        assertArrayEquals(new long[] {3001, 5}, e.ddpLengths());
        assertEquals(4 + 4 + 4 + 4 + 8 + 4, e.message().byteSize(), "a's length word only; b and its pad inside");
        assertEquals(3001, org.rpcrdma.xdr.Xdr.getInt(e.message(), 4));
        assertEquals(10, org.rpcrdma.xdr.Xdr.getInt(e.message(), 8));
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5}, e.message().asSlice(16, 5).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(11, org.rpcrdma.xdr.Xdr.getInt(e.message(), 24));
        // nothing kept for the next message on this thread
        assertEquals(0, MessageEncoder.encodeLeavingOut(w -> w.writeInt(1), 1).leftOut().length);
    }
}
