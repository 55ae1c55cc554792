package org.rpcrdma.bench.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.rpcrdma.bindings.VerbsInline;
import org.rpcrdma.transport.verbs.RecvBatch;
import org.rpcrdma.transport.verbs.SendBatch;
import org.rpcrdma.transport.verbs.WorkCompletions;

/**
 * The Java side of one verbs round trip without the device: filling the Send's
 * {@code ibv_send_wr} and SGE, a receive's {@code ibv_recv_wr}, and reading one work
 * completion's fields, as {@code WorkRequests} and the completion path do per message,
 * and the Java side of the post/poll downcalls ({@link VerbsInline}, the provider's
 * function replaced by libc's {@code abs}, which reads one register and touches no
 * memory, on memory of shared arenas as the link's).
 * This is what C1 (the guest's JIT) magnifies; compare it under
 * {@code -jvmArgsAppend -XX:TieredStopAtLevel=1} and under C2:
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar WorkRequest -f 1 -wi 3 -i 5 -jvmArgsAppend -XX:TieredStopAtLevel=1
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class WorkRequestBenchmark {
    private SendBatch send;
    private RecvBatch recv;
    private WorkCompletions wc;
    private long wrId;
    private Arena arena;
    private MemorySegment nullFunction;
    private MemorySegment qp;
    private MemorySegment wr;
    private MemorySegment bad;
    private MemorySegment wcs;

    @Setup(Level.Trial)
    public void setUp() {
        send = new SendBatch(1, 1);
        recv = new RecvBatch(1);
        wc = new WorkCompletions(16);
        arena = Arena.ofShared();
        nullFunction = Linker.nativeLinker().defaultLookup().find("abs").orElseThrow();
        qp = arena.allocate(256);
        wr = arena.allocate(128);
        bad = arena.allocate(ValueLayout.ADDRESS);
        wcs = arena.allocate(48 * 16);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        send.close();
        recv.close();
        wc.close();
        arena.close();
    }

    /** One signalled IBV_WR_SEND with one SGE, as a Send of an RPC message. */
    @Benchmark
    public int send() {
        send.clear();
        return send.send(++wrId, 0x1234, 0x10000L, 92, SendBatch.SIGNALED);
    }

    /** One receive, as the repost after a message arrived. */
    @Benchmark
    public int receive() {
        recv.clear();
        return recv.add(++wrId, 0x1234, 0x10000L, 1024);
    }

    /** The fields the completion path reads of one receive completion. */
    @Benchmark
    public long completion() {
        return wc.wrId(0) + wc.status(0) + wc.opcode(0) + wc.byteLen(0) + wc.wcFlags(0) + wc.qpNum(0);
    }

    /** The Java side of one ibv_post_send downcall (critical, four pointers). */
    @Benchmark
    public int postDowncall() {
        return VerbsInline.ibvPostSend(nullFunction, qp, wr, bad);
    }

    /** The Java side of one ibv_poll_cq downcall: what each turn of a busy poll costs us. */
    @Benchmark
    public int pollDowncall() {
        return VerbsInline.ibvPollCq(nullFunction, qp, 16, wcs);
    }
}
