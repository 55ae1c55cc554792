package org.rpcrdma.bench.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.RpcRdmaStats;
import org.rpcrdma.xdr.Xdr;

class LossyCallsTest {
    private static final LossyCalls.Kind[] ALL = LossyCalls.Kind.values();

    @Test
    void callsOfEveryKindAreAnsweredOnceWithTheirOwnBytesThroughTheirChunks() throws Exception {
        XidLedger ledger = new XidLedger();
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.builder().inlineThreshold(4096).build(),
                LossyCalls.handler(ledger))) {
            CallPump.Result r = new CallPump(List.of(p.client()), 4, 1000, LossyCalls.of(LossyCalls.options(30), ALL))
                    .run(TimeUnit.SECONDS.toNanos(2), TimeUnit.SECONDS.toNanos(30));
            // the first window (one call of each kind) goes at once; cold and under load, maybe no more
            assertTrue(r.clean() && r.sent() >= ALL.length, r.toString());
            assertTrue(ledger.check(1000, r.sent()).exactlyOnce(), ledger.check(1000, r.sent()).toString());
            RpcRdmaStats c = p.client().stats();
            RpcRdmaStats s = p.server().stats();
            int each = r.sent() / ALL.length; // the kinds in turn: each kind at least this often
            assertTrue(c.longCallsSent() >= each, "long calls: " + c);
            assertTrue(s.replyChunksUsed() >= each, "Reply chunks: " + s);
            assertTrue(s.rdmaReads() >= 2L * each && s.rdmaWrites() >= 2L * each, "RDMA Reads and Writes: " + s);
        }
    }

    @Test
    void theKindsComeInTurnByXid() {
        assertEquals(LossyCalls.Kind.INLINE, LossyCalls.kindOf(8, ALL));
        assertEquals(LossyCalls.Kind.DDP, LossyCalls.kindOf(7, ALL));
        assertEquals(LossyCalls.Kind.LONG_CALL, LossyCalls.kindOf(0x40000001, LossyCalls.Kind.INLINE,
                LossyCalls.Kind.LONG_CALL));
    }

    @Test
    void aWrongPatternOrPlacedByteIsAProblem() {
        CallPump.Call pattern = LossyCalls.make(LossyCalls.Kind.REPLY_CHUNK, 5, LossyCalls.options(1));
        MemorySegment reply = MemorySegment.ofArray(new byte[ScaleCalls.REPLY_HEADER + LossyCalls.SIZE]);
        Xdr.putInt(reply, 0, 5);
        for (int i = 0; i < LossyCalls.SIZE; i++) {
            reply.set(ValueLayout.JAVA_BYTE, ScaleCalls.REPLY_HEADER + i, ScaleCalls.argByte(5, i));
        }
        assertNull(pattern.check().problem(reply));
        reply.set(ValueLayout.JAVA_BYTE, ScaleCalls.REPLY_HEADER + 100, (byte) 0x55);
        assertEquals("Reply chunk XID 5: byte 100 differs", pattern.check().problem(reply));

        CallPump.Call ddp = LossyCalls.make(LossyCalls.Kind.DDP, 6, LossyCalls.options(1));
        MemorySegment short_ = MemorySegment.ofArray(new byte[ScaleCalls.REPLY_HEADER + 4]);
        Xdr.putInt(short_, 0, 6);
        Xdr.putInt(short_, ScaleCalls.REPLY_HEADER, LossyCalls.SIZE);
        // nothing was placed in the receptacle: its zeros are not the data
        assertEquals("DDP XID 6: placed byte 0 differs", ddp.check().problem(short_));
    }
}
