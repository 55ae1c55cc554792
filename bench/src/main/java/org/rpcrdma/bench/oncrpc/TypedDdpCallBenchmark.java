package org.rpcrdma.bench.oncrpc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.rpcrdma.oncrpc.Codecs;
import org.rpcrdma.oncrpc.OncRpcClient;
import org.rpcrdma.oncrpc.RpcDispatcher;
import org.rpcrdma.oncrpc.RpcProcedure;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * A typed WRITE-like call with a DDP argument over an {@link InMemoryPair}: the argument
 * handed by the typed layer to the transport, sent as a read chunk, pulled by the
 * (emulated) RDMA Read and decoded by the typed server, which answers an int. The
 * argument lies in ordinary native memory ({@code memory=shared}: copied once into chunk
 * memory) or in a {@code RegisteredBuffer} ({@code memory=registered}: exposed in place).
 * What the typed layer allocates per call is the point:
 * {@code java -jar bench/target/benchmarks.jar TypedDdpCall -prof gc}
 * (gc.alloc.rate.norm, bytes per call).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class TypedDdpCallBenchmark {
    static final int MAX = 4 << 20;
    static final RpcProcedure<MemorySegment, Integer> WRITE = new RpcProcedure<>(1, Codecs.payload(MAX), Codecs.INT);

    /** Bytes of payload. */
    @Param({"1048576"})
    public int size;

    /** Where the argument lies: {@code shared} (an Arena's) or {@code registered} (the pair's allocator). */
    @Param({"shared", "registered"})
    public String memory;

    private Arena arena;
    private InMemoryPair pair;
    private OncRpcClient client;
    private MemorySegment data;

    @Setup(Level.Trial)
    public void setUp() {
        RpcDispatcher d = new RpcDispatcher();
        d.program(0x20000066, 1).procedure(WRITE, (payload, call) -> call.reply((int) payload.byteSize()));
        pair = InMemoryPair.open(RpcRdmaOptions.builder().maxChunkBytes(MAX + 4096)
                .chunkMemoryBytes(16L << 20).build(), d);
        client = new OncRpcClient(pair.client(), 0x20000066, 1);
        arena = Arena.ofShared();
        data = memory.equals("registered") ? pair.allocateRegistered(size).segment() : arena.allocate(size);
        data.fill((byte) 7);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pair.close();
        arena.close();
    }

    @Benchmark
    public int ddpWrite() throws InterruptedException {
        return client.call(WRITE, data, null, 0);
    }
}
