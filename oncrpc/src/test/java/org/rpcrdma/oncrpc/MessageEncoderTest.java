package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A thread that encodes a large message again (an NFS WRITE of 1 MiB after another) encodes
 * it once, into the scratch buffer the first one grew, and gets a copy of exactly its size.
 */
class MessageEncoderTest {
    @Test
    void aSecondLargeMessageOnTheSameThreadIsEncodedOnce() {
        MemorySegment data = MemorySegment.ofArray(new byte[1 << 20]);
        data.fill((byte) 5);
        AtomicInteger passes = new AtomicInteger();
        MessageEncoder.Encoded first = MessageEncoder.encodeWithItems(w -> {
            passes.incrementAndGet();
            w.writeInt(42);
            Codecs.payload(2 << 20).encode(w, data);
        });
        assertEquals(4 + 4 + (1 << 20), first.message().byteSize(), "exactly the message");
        int firstPasses = passes.getAndSet(0);
        MessageEncoder.Encoded second = MessageEncoder.encodeWithItems(w -> {
            passes.incrementAndGet();
            w.writeInt(43);
            Codecs.payload(2 << 20).encode(w, data);
        });
        assertEquals(1, passes.get(), "encoded once (the first message took " + firstPasses + " passes)");
        assertEquals(4 + 4 + (1 << 20), second.message().byteSize());
        assertEquals(42, first.message().get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), 0),
                "the first message is its own copy, not overwritten by the second");
        assertArrayEquals(new long[] {8}, second.ddpOffsets());
        assertArrayEquals(new long[] {1 << 20}, second.ddpLengths());
    }
}
