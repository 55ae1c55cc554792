package org.rpcrdma.bench.transport;

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
import org.rpcrdma.transport.CallHandler;
import org.rpcrdma.transport.CallOptions;
import org.rpcrdma.transport.DdpArgument;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.xdr.Xdr;

/**
 * A WRITE-like call whose DDP payload lies in ordinary arena memory, over an
 * {@link InMemoryPair}: with the registration cache off ({@code cacheBytes} 0) the payload
 * is copied into chunk memory, with it on the call finds its memory in the cache (every
 * call after the first is a hit) and exposes it in place. The difference is what a hit
 * saves on the host at each size (the server's RDMA Read, a copy here, is the same for
 * both); it sets {@code RegistrationCache.MIN_BYTES}. Run with
 * {@code -Dorg.rpcrdma.registrationCacheMinBytes=0} (a {@code -jvmArgsAppend}) so that
 * small sizes are cached too: {@code java -jar bench/target/benchmarks.jar RegistrationCache
 * -jvmArgsAppend -Dorg.rpcrdma.registrationCacheMinBytes=0 -prof gc}. What a miss costs
 * (ibv_reg_mr) only the guest can say.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RegistrationCacheBenchmark {
    @Param({"4096", "8192", "16384", "65536", "262144", "1048576"})
    public int size;

    @Param({"0", "67108864"})
    public long cacheBytes;

    private InMemoryPair pair;
    private Arena arena;
    private MemorySegment call;
    private CallOptions ddp;
    private int xid;

    @Setup(Level.Trial)
    public void setUp() {
        MemorySegment reply = MemorySegment.ofArray(new byte[28]);
        CallHandler h = c -> {
            Xdr.putInt(reply, 0, c.xid());
            Xdr.putInt(reply, 4, 1); // REPLY; MSG_ACCEPTED, AUTH_NONE, SUCCESS are zero
            c.reply(reply);
        };
        pair = InMemoryPair.open(RpcRdmaOptions.builder().inlineThreshold(4096)
                .maxChunkBytes(2 << 20).registrationCacheBytes(cacheBytes).build(), h);
        arena = Arena.ofShared();
        call = arena.allocate(44 + size + 8, 4096);
        Xdr.putInt(call, 8, 2); // CALL (0), RPC version 2
        Xdr.putInt(call, 12, 0x20000099);
        Xdr.putInt(call, 40, size);
        ddp = CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44, size));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pair.close();
        arena.close();
    }

    @Benchmark
    public long ddpWrite() {
        Xdr.putInt(call, 0, ++xid);
        ReceivedMessage m = pair.client().call(call, ddp).join();
        long n = m.bytes().byteSize();
        m.release();
        return n;
    }
}
