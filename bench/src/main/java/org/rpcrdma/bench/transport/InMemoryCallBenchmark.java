package org.rpcrdma.bench.transport;

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
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.ReplyCallback;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.xdr.Xdr;

/**
 * What the transport itself costs per forward call, with no device: an {@link InMemoryPair}
 * does everything a verbs connection does (RPC-over-RDMA header encode/decode both ways,
 * credit accounting, XID table, receive pool repost, send-context ring) except the
 * hardware, on one thread. Add this to a raw-verbs Send round trip to get the transport's
 * round trip on real hardware. Runs on the host: {@code java -jar bench/target/benchmarks.jar
 * InMemoryCall -prof gc}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class InMemoryCallBenchmark {
    /** Bytes of RPC call (and of the echoed reply's results). */
    /** 65536: over the 8 KiB threshold, so a long call (Position-Zero Read chunk) and a Reply chunk. */
    @Param({"40", "1024", "4000", "65536"})
    public int size;

    private InMemoryPair pair;
    /** The same, with the server's handler marked {@link CallHandler#immediate} (one reused call object). */
    private InMemoryPair immediatePair;
    /** The reply's length, as the callback saw it (on the pair's completion thread). */
    private volatile long seen;
    private final ReplyCallback callback = new ReplyCallback() {
        @Override
        public void onReply(MemorySegment r) {
            seen = r.byteSize();
        }

        @Override
        public void onFailure(Throwable cause) {
            throw new IllegalStateException(cause);
        }
    };
    private MemorySegment call;
    private CallOptions callOptions;
    private CallOptions readOptions;
    private MemorySegment reply;
    private int xid;

    @Setup(Level.Trial)
    public void setUp() {
        reply = MemorySegment.ofArray(new byte[24 + size - 40 + 40]);
        // The handler answers at once with a preallocated reply of the same size (an
        // application's cost is not the transport's).
        CallHandler h = c -> {
            Xdr.putInt(reply, 0, c.xid());
            Xdr.putInt(reply, 4, 1); // REPLY; MSG_ACCEPTED, AUTH_NONE, SUCCESS are zero
            c.reply(reply);
        };
        pair = InMemoryPair.open(RpcRdmaOptions.builder().inlineThreshold(8192).build(), h);
        immediatePair = InMemoryPair.open(RpcRdmaOptions.builder().inlineThreshold(8192).build(),
                CallHandler.immediate(h));
        call = MemorySegment.ofArray(new byte[size]);
        // options made once: a Reply chunk where the reply does not fit inline
        callOptions = size > 8000 ? CallOptions.DEFAULT.withMaxReplyBytes((int) reply.byteSize()) : CallOptions.DEFAULT;
        readOptions = callOptions.withTimeout(5, TimeUnit.SECONDS);
        Xdr.putInt(call, 8, 2); // CALL (0), RPC version 2
        Xdr.putInt(call, 12, 0x20000099);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pair.close();
        immediatePair.close();
    }

    @Benchmark
    public long call() {
        Xdr.putInt(call, 0, ++xid);
        ReceivedMessage m = pair.client().call(call, callOptions).join();
        long n = m.bytes().byteSize();
        m.release();
        return n;
    }

    /** The blocking call a user writes first, answered by an immediate handler; the reply released. */
    @Benchmark
    public long callAndWait() throws Exception {
        Xdr.putInt(call, 0, ++xid);
        try (ReceivedMessage m = immediatePair.client().callAndWait(call, readOptions)) {
            return m.bytes().byteSize();
        }
    }

    /** The future shape, answered by an immediate handler; the reply released. */
    @Benchmark
    public long futureGet() throws Exception {
        Xdr.putInt(call, 0, ++xid);
        try (ReceivedMessage m = immediatePair.client().call(call, readOptions).get()) {
            return m.bytes().byteSize();
        }
    }

    /**
     * The zero-allocation shapes: a blocking call whose reply is read in place,
     * answered by an immediate handler.
     */
    @Benchmark
    public long callAndRead() throws Exception {
        Xdr.putInt(call, 0, ++xid);
        Connection c = immediatePair.client();
        return c.callAndRead(call, readOptions, MemorySegment::byteSize);
    }

    /**
     * A callback call answered by an immediate handler: the pair delivers the call and the
     * reply on its sides' completion threads (no caller polls), as a NIC's poller would; the
     * benchmark thread spins until the callback ran.
     */
    @Benchmark
    public long callback() {
        Xdr.putInt(call, 0, ++xid);
        seen = -1;
        immediatePair.client().call(call, callOptions, callback);
        long s;
        while ((s = seen) < 0) {
            Thread.onSpinWait();
        }
        return s;
    }
}
