package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;

/**
 * Chunks on backward calls (RFC 8167 §5.3) over {@link InMemoryPair}: between our client
 * and server when the client said so in its backchannel-enable call, the roles of the
 * forward direction swapped (the server exposes, the client reads and writes); never to a
 * client that did not say so (the call fails at once, nothing is sent); and ERR_CHUNK from
 * a client whose user turned them off.
 */
class BackwardChunksTest {
    private static RpcRdmaOptions opts() {
        return RpcRdmaOptions.builder().inlineThreshold(1024).backwardCredits(4).build();
    }

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(ints = {1025, 4096, 65536, 1 << 20})
    void aLongBackwardCallAndItsLongReplyTravelThroughChunks(int size) {
        try (InMemoryPair p = InMemoryPair.open(opts(), echo())) {
            p.client().enableBackchannel(echo()).join();
            byte[] args = ChunkTest.pattern(size, size);
            ReceivedMessage m = p.server().call(callMsg(21, 1, args),
                    CallOptions.DEFAULT.withMaxReplyBytes(size + 64)).join();
            assertArrayEquals(args, results(m));
            assertEquals(1, RawAccess.settled(p).server().stats().longCallsSent());
            assertEquals(1, p.client().stats().replyChunksUsed());
            assertTrue(p.client().stats().rdmaReads() > 0 && p.client().stats().rdmaWrites() > 0);
            assertEquals(0, p.exposedCount(), "the server withdrew what its backward call exposed");
            // forward calls carry on beside them
            byte[] fwd = ChunkTest.pattern(3000, 1);
            assertArrayEquals(fwd, results(p.client().call(callMsg(22, 1, fwd),
                    CallOptions.DEFAULT.withMaxReplyBytes(3064)).join()));
        }
    }

    @Test
    void aClientThatDidNotSaySoGetsNoChunkedBackwardCall() {
        try (InMemoryPair p = InMemoryPair.open(opts(), echo())) {
            // announced by the upper layer (NFSv4.1 CREATE_SESSION), not by our control program
            p.client().serveBackwardCalls(echo());
            p.server().markBackchannelReady();
            CompletableFuture<ReceivedMessage> f = p.server().call(callMsg(23, 1, new byte[2000]),
                    CallOptions.DEFAULT.withMaxReplyBytes(2100));
            assertTrue(f.isDone(), "failed at once");
            CompletionException e = assertThrows(CompletionException.class, f::join);
            assertInstanceOf(ChunksUnavailableException.class, e.getCause());
            assertEquals(0, p.client().stats().callsReceived(), "nothing was sent");
            // an inline backward call still goes
            assertArrayEquals(new byte[] {1, 2, 3}, results(p.server().call(callMsg(24, 1, new byte[] {1, 2, 3}))
                    .join()));
        }
    }

    @Test
    void aClientWithBackwardChunksOffAnswersAChunkedBackwardCallErrChunk() {
        RpcRdmaOptions o = opts().toBuilder().backwardChunks(false).build();
        try (InMemoryPair p = InMemoryPair.open(o, echo())) {
            p.client().enableBackchannel(echo()).join();
            // a server that sends one anyway: a Position-Zero Read chunk, by hand
            RpcRdmaHeader h = new RpcRdmaHeader(1, 1, 1, 1).clear().xid(0x25).credit(1).proc(RpcRdma.RDMA_NOMSG);
            h.readList().add(0, 0x1234, 2000, 0x1000);
            RawAccess.send(p.server(), ChunkTest.raw(h, null));
            assertEquals(1, p.client().stats().errChunkSent());
            assertEquals(1, p.client().stats().chunkListsRefused());
            assertEquals(0, p.client().stats().rdmaReads(), "nothing was read");
            assertTrue(p.client().isOpen() && p.server().isOpen());
        }
    }

    @Test
    void aBackwardCallOverMaxChunkBytesFailsAtOnce() {
        try (InMemoryPair p = InMemoryPair.open(opts().toBuilder().maxChunkBytes(8192).build(), echo())) {
            p.client().enableBackchannel(echo()).join();
            CompletableFuture<ReceivedMessage> f = p.server().call(callMsg(26, 1, new byte[9000]));
            CompletionException e = assertThrows(CompletionException.class, f::join);
            assertInstanceOf(ChunksUnavailableException.class, e.getCause());
            MemorySegment ok = callMsg(27, 1, new byte[5000]);
            assertEquals(5000, results(p.server().call(ok, CallOptions.DEFAULT.withMaxReplyBytes(5100)).join()).length);
        }
    }
}
