package org.rpcrdma.bench.verbs;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
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
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.RpcRdmaServer;
import org.rpcrdma.xdr.Xdr;

/**
 * The transport's forward call round trip (RDMA_MSG call, handler echoes the arguments,
 * RDMA_MSG reply), at the same Send sizes as {@link SendLatencyBenchmark}, with the inline
 * threshold set to the smallest multiple of 1 KiB that holds the message. The difference
 * from {@code SendLatencyBenchmark.roundTrip} (copy) is what the transport adds on top of
 * raw verbs: header coding, credits, XID matching, the completion thread hand-off.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class TransportLatencyBenchmark {
    /** Bytes in the call's Send: 28-byte RDMA_MSG header + the RPC call (at least a 40-byte NULL call). */
    @Param({"64", "1024", "4096", "16384"})
    public int size;

    /** Completion handling: busy-polling threads, or completion-channel events. */
    @Param({"false", "true"})
    public boolean busyPoll;

    private RpcRdmaServer server;
    private RpcRdmaClient client;
    private MemorySegment call;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        InetAddress ip = SendLatencyBenchmark.address();
        int rpc = Math.max(40, size - SendLatencyBenchmark.HEADER);
        int inline = Math.max(1024, (size + 1023) / 1024 * 1024);
        RpcRdmaOptions o = RpcRdmaOptions.builder().inlineThreshold(inline).busyPoll(busyPoll)
                .connectTimeoutMillis(30_000).build();
        CallHandler echo = c -> {
            MemorySegment m = c.message().bytes();
            MemorySegment r = MemorySegment.ofArray(new byte[24 + (int) m.byteSize() - 40]);
            Xdr.putInt(r, 0, c.xid());
            Xdr.putInt(r, 4, 1); // REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS
            MemorySegment.copy(m, 40, r, 24, m.byteSize() - 40);
            c.reply(r);
        };
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, echo, null);
        client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
        call = MemorySegment.ofArray(new byte[rpc]);
        Xdr.putInt(call, 4, 0); // CALL
        Xdr.putInt(call, 8, 2); // RPC version 2
        Xdr.putInt(call, 12, 0x20000099);
        Xdr.putInt(call, 16, 1);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        client.close();
        server.close();
    }

    private int xid;
    private static final CallOptions TEN_SECONDS = CallOptions.timeout(10, TimeUnit.SECONDS);

    @Benchmark
    public long call() throws Exception {
        Xdr.putInt(call, 0, ++xid);
        ReceivedMessage m = client.connection().callAndWait(call, TEN_SECONDS);
        long n = m.bytes().byteSize();
        m.release();
        return n;
    }
}
