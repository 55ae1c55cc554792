package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.RegisteredBuffer;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaServer;
import org.rpcrdma.transport.RpcRdmaStats;

/**
 * Over rxe: a typed 1 MiB DDP argument in a {@link RegisteredBuffer} is exposed in place
 * (a memory window over the caller's own registration) and pulled by the server's RDMA
 * Read; the handler reads it where the Read put it; the bytes are the same; nothing stays.
 */
@Tag("verbs")
class TypedDdpArgumentVerbsTest {
    @Test
    void aRegisteredOneMebibyteArgumentGoesByRdmaReadWithoutACopy() throws Exception {
        InetAddress ip = VerbsEnv.address();
        RpcRdmaServer server = null;
        RpcRdmaClient client = null;
        CompletableFuture<TypedDdpArgumentTest.Seen> seen = new CompletableFuture<>();
        CompletableFuture<Connection> serverSide = new CompletableFuture<>();
        RpcDispatcher d = new RpcDispatcher();
        d.program(TypedDdpArgumentTest.PROG, 1).procedure(TypedDdpArgumentTest.WRITE, (a, call) -> {
            long crc = TypedDdpArgumentTest.crc(a.data());
            seen.complete(new TypedDdpArgumentTest.Seen(crc, a.data().isNative(), a.data().isReadOnly(), a.handle()));
            serverSide.complete(call.connection());
            call.reply(crc ^ a.trailer());
        });
        try {
            var opts = VerbsEnv.OPTS.toBuilder().maxChunkBytes(2 * TypedDdpArgumentTest.MIB).chunkMemoryBytes(8L << 20)
                    .build();
            server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), opts, d, null);
            client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), opts);
            OncRpcClient c = new OncRpcClient(client, TypedDdpArgumentTest.PROG, 1);
            RegisteredBuffer b = client.allocateRegistered(TypedDdpArgumentTest.MIB);
            TypedDdpArgumentTest.fill(b.segment(), 13);
            long want = TypedDdpArgumentTest.crc(b.segment());

            long got = c.call(TypedDdpArgumentTest.WRITE, new TypedDdpArgumentTest.Write(8, b.segment(), 0x77), null, 0,
                    60, TimeUnit.SECONDS);

            assertEquals(want ^ 0x77, got);
            assertEquals(want, seen.get().crc(), "the server read the same bytes");
            assertTrue(seen.get().nativeMemory(), "in the memory the RDMA Read filled, not a heap copy");
            assertTrue(seen.get().readOnly());
            Supplier<RpcRdmaStats> cs = client.connection()::stats;
            Supplier<RpcRdmaStats> ss = serverSide.get()::stats;
            assertEquals(1, cs.get().zeroCopyExposures(), "the argument exposed in place");
            assertEquals(0, cs.get().longCallsSent(), "a DDP read chunk, the rest inline");
            assertEquals(TypedDdpArgumentTest.MIB, ss.get().rdmaBytesRead(), "the data alone, by RDMA Read");
            assertEquals(0, client.connection().outstandingCalls());
            assertEquals(0, serverSide.get().peerOutstandingCalls());
            assertEquals(0, serverSide.get().heldReceives());
            assertEquals(1, cs.get().localInvalidations() + cs.get().remoteInvalidations(), "its rkey withdrawn");
            b.close();
            assertEquals(1, cs.get().registeredBufferDeregistrations(), "no call holds the buffer: deregistered at once");
        } finally {
            VerbsEnv.closeAndCheckNothingLeft(client, server);
        }
    }
}
