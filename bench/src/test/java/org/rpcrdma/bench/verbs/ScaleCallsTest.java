package org.rpcrdma.bench.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;
import org.rpcrdma.xdr.Xdr;

class ScaleCallsTest {
    @Test
    void aSmallCallIsEchoedAndItsReplyChecks() {
        MemorySegment r = ScaleCalls.reply(ScaleCalls.call(0x1234, 7, 64));
        assertEquals(ScaleCalls.REPLY_HEADER + 64, r.byteSize());
        assertEquals(0x1234, Xdr.getInt(r, 0));
        assertNull(ScaleCalls.problem(0x1234, 64, r));
    }

    @Test
    void aLongCallIsAnsweredWithItsLengthAndCrcInline() {
        MemorySegment r = ScaleCalls.reply(ScaleCalls.call(99, 7, 6144));
        assertEquals(ScaleCalls.REPLY_HEADER + 8, r.byteSize());
        assertEquals(6144, Xdr.getInt(r, ScaleCalls.REPLY_HEADER));
        assertNull(ScaleCalls.problem(99, 6144, r));
    }

    @Test
    void anotherCallsReplyOrAChangedByteIsAProblem() {
        MemorySegment other = ScaleCalls.reply(ScaleCalls.call(5, 7, 64));
        assertTrue(ScaleCalls.problem(6, 64, other).contains("not for XID 6"), ScaleCalls.problem(6, 64, other));
        MemorySegment r = ScaleCalls.reply(ScaleCalls.call(6, 7, 64));
        r.set(ValueLayout.JAVA_BYTE, ScaleCalls.REPLY_HEADER + 10, (byte) ~r.get(ValueLayout.JAVA_BYTE,
                ScaleCalls.REPLY_HEADER + 10));
        assertEquals("XID 6: byte 10 differs", ScaleCalls.problem(6, 64, r));
        MemorySegment longReply = ScaleCalls.reply(ScaleCalls.call(8, 7, 6144));
        Xdr.putInt(longReply, ScaleCalls.REPLY_HEADER + 4, 0);
        assertEquals("XID 8: the long call's length or CRC-32 differs", ScaleCalls.problem(8, 6144, longReply));
    }
}
