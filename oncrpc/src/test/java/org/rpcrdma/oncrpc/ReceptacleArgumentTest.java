package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.InMemoryPair;

/**
 * The receptacle of a READ-like call is an argument of the call, not part of its result
 * codec: one procedure constant whose result holds a {@link Codecs#payload}, and each call
 * gives the memory its DDP result lands in (offered as a write chunk, RFC 8166 §3.4.6).
 */
class ReceptacleArgumentTest {
    /** One constant for every call: count in, (eof, data, trailer) out. */
    static final RpcProcedure<Integer, DdpReplyTest.Read> READ =
            new RpcProcedure<>(1, Codecs.INT, DdpReplyTest.readResult(null));

    @Test
    void eachCallsResultLandsInTheReceptacleItGave() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(DdpReplyTest.small(), DdpReplyTest.server())) {
            OncRpcClient c = new OncRpcClient(p.client(), DdpReplyTest.PROG, 1);
            MemorySegment a = MemorySegment.ofArray(new byte[16_384]);
            MemorySegment b = MemorySegment.ofArray(new byte[16_384]);
            DdpReplyTest.Read ra = c.call(READ, 10_001, a);
            DdpReplyTest.Read rb = c.call(READ, 9_000, b, 10, TimeUnit.SECONDS);
            assertEquals(a.address(), ra.data().address(), "the first call's data is in its receptacle");
            assertEquals(b.address(), rb.data().address(), "the second call's in its own");
            assertArrayEquals(DdpReplyTest.pattern(10_001, 1), ra.data().toArray(ValueLayout.JAVA_BYTE));
            assertArrayEquals(DdpReplyTest.pattern(9_000, 1), rb.data().toArray(ValueLayout.JAVA_BYTE));
            assertEquals(0x7e7e, ra.trailer());
            assertEquals(0x7e7e, rb.trailer());
            assertEquals(2, p.server().stats().rdmaWrites(), "both placed by RDMA Write");
            assertEquals(10_001 + 9_000, p.server().stats().rdmaBytesWritten());
            assertEquals(0, p.client().outstandingCalls());
        }
    }

    @Test
    void theFormWithMaxReplyBytesTakesTheReceptacleToo() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(DdpReplyTest.small(), DdpReplyTest.server())) {
            OncRpcClient c = new OncRpcClient(p.client(), DdpReplyTest.PROG, 1);
            MemorySegment r = MemorySegment.ofArray(new byte[16_384]);
            DdpReplyTest.Read read = c.callAsync(READ, 10_001, r, 0).get(10, TimeUnit.SECONDS);
            assertEquals(r.address(), read.data().address());
            assertArrayEquals(DdpReplyTest.pattern(10_001, 1), read.data().toArray(ValueLayout.JAVA_BYTE));
            assertEquals(0x7e7e, read.trailer());
        }
    }

    @Test
    void withoutAReceptacleTheResultIsOnTheHeapInline() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(DdpReplyTest.small(), DdpReplyTest.server())) {
            OncRpcClient c = new OncRpcClient(p.client(), DdpReplyTest.PROG, 1);
            DdpReplyTest.Read read = c.call(READ, 10_001);
            assertArrayEquals(DdpReplyTest.pattern(10_001, 1), read.data().toArray(ValueLayout.JAVA_BYTE));
            assertEquals(1, p.client().stats().repliesThroughReplyChunk(), "no write chunk: the Reply chunk");
            assertEquals(0, p.server().stats().errChunkSent());
        }
    }
}
