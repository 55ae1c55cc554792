package org.rpcrdma.bench.wire;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaDecoder;
import org.rpcrdma.transport.wire.RpcRdmaEncoder;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.transport.wire.RpcRdmaProtocolException;
import org.rpcrdma.transport.wire.WriteList;
import org.rpcrdma.xdr.OpaqueAuth;
import org.rpcrdma.xdr.RpcCallHeader;
import org.rpcrdma.xdr.RpcMessageException;
import org.rpcrdma.xdr.RpcReplyHeader;
import org.rpcrdma.xdr.Xdr;
import org.rpcrdma.xdr.XdrReader;
import org.rpcrdma.xdr.XdrWriter;

/**
 * Cost of the RPC-over-RDMA header codec on native (registered-buffer-like) memory:
 * an inline RDMA_MSG header, and a header with one 16-segment Write chunk (an NFS READ
 * reply's shape). Run with {@code -prof gc} to see bytes allocated per op; the goal is
 * zero for decoding an inline RDMA_MSG.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar 'wire.*' -f 1 -wi 3 -i 5 -w 1 -r 1 -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class HeaderCodecBenchmark {
    private static final int THRESHOLD = 4096;
    private static final int RPC_BYTES = 120;

    private Arena arena;
    private MemorySegment sendBuf;
    private MemorySegment inlineMsg;
    private int inlineLength;
    private MemorySegment writeListMsg;
    private int writeListLength;
    private RpcRdmaHeader header;
    private RpcRdmaHeader writeListHeader;
    private int xid = 0x1000;
    private MemorySegment replyMsg;
    private final XdrWriter writer = new XdrWriter();
    private final XdrReader reader = new XdrReader();
    private final RpcReplyHeader reply = new RpcReplyHeader();

    @Setup(Level.Trial)
    public void setup() {
        arena = Arena.ofShared();
        sendBuf = arena.allocate(THRESHOLD, 8);
        header = RpcRdmaHeader.forInlineThreshold(THRESHOLD);

        // Inline RDMA_MSG Call: 28-byte header + a 120-byte RPC message.
        inlineMsg = arena.allocate(THRESHOLD, 8);
        int h = RpcRdmaEncoder.encodeInlineMsg(inlineMsg, 0, xid, 32);
        Xdr.putInt(inlineMsg, h, xid);
        Xdr.putInt(inlineMsg, h + 4, RpcRdma.RPC_CALL);
        inlineLength = h + RPC_BYTES;

        // RDMA_MSG Call with one 16-segment Write chunk.
        writeListHeader = RpcRdmaHeader.forInlineThreshold(THRESHOLD).clear().xid(xid).credit(32);
        WriteList w = writeListHeader.writeList();
        w.beginChunk();
        for (int i = 0; i < 16; i++) {
            w.addSegment(0x100 + i, 65536, 0x7f00_0000_0000L + 65536L * i);
        }
        writeListMsg = arena.allocate(THRESHOLD, 8);
        int wl = RpcRdmaEncoder.encode(writeListHeader, writeListMsg, 0, THRESHOLD);
        Xdr.putInt(writeListMsg, wl, xid);
        Xdr.putInt(writeListMsg, wl + 4, RpcRdma.RPC_CALL);
        writeListLength = wl + RPC_BYTES;

        replyMsg = arena.allocate(64, 8);
        RpcReplyHeader.encodeAccepted(new XdrWriter(replyMsg, 0, 64), xid, OpaqueAuth.NONE, 0);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public int encodeInlineMsg() {
        return RpcRdmaEncoder.encodeInlineMsg(sendBuf, 0, xid, 32);
    }

    @Benchmark
    public long decodeInlineMsg() throws RpcRdmaProtocolException {
        RpcRdmaDecoder.decode(inlineMsg, 0, inlineLength, header);
        return header.messageOffset() + header.rpcMsgType();
    }

    @Benchmark
    public long encodeDecodeInlineMsg() throws RpcRdmaProtocolException {
        int n = RpcRdmaEncoder.encodeInlineMsg(inlineMsg, 0, xid, 32);
        RpcRdmaDecoder.decode(inlineMsg, 0, inlineLength, header);
        return n + header.messageLength();
    }

    /** ONC RPC Call header, AUTH_NONE, into a send buffer after a 28-byte transport header. */
    @Benchmark
    public int encodeRpcCallAuthNone() {
        return RpcCallHeader.encodeAuthNone(writer.reset(sendBuf, 28, THRESHOLD - 28), xid, 100003, 4, 1);
    }

    /** ONC RPC accepted/SUCCESS Reply header. */
    @Benchmark
    public long decodeRpcReply() throws RpcMessageException {
        return reply.decode(reader.reset(replyMsg, 0, 64)).resultsOffset();
    }

    @Benchmark
    public int encodeWriteList16() {
        return RpcRdmaEncoder.encode(writeListHeader, sendBuf, 0, THRESHOLD);
    }

    @Benchmark
    public long decodeWriteList16() throws RpcRdmaProtocolException {
        RpcRdmaDecoder.decode(writeListMsg, 0, writeListLength, header);
        return header.writeList().chunkLength(0);
    }

    @Benchmark
    public long encodeDecodeWriteList16() throws RpcRdmaProtocolException {
        int n = RpcRdmaEncoder.encode(writeListHeader, writeListMsg, 0, THRESHOLD);
        RpcRdmaDecoder.decode(writeListMsg, 0, writeListLength, header);
        return n + header.writeList().segments().count();
    }
}
