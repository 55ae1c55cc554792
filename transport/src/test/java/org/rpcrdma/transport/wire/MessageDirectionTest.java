package org.rpcrdma.transport.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.rpcrdma.transport.wire.RpcRdma.*;
import static org.rpcrdma.transport.wire.RpcRdmaMalformedTest.CALL;
import static org.rpcrdma.transport.wire.RpcRdmaMalformedTest.REPLY;
import static org.rpcrdma.transport.wire.RpcRdmaMalformedTest.X;
import static org.rpcrdma.transport.wire.RpcRdmaMalformedTest.fixed;
import static org.rpcrdma.transport.wire.Wire.*;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** What a message the decoder refused tells of its direction (RFC 8167 §2.4.1: XIDs are per direction). */
class MessageDirectionTest {
    private static int of(byte[] b) {
        assertThrows(RpcRdmaProtocolException.class, () -> decode(b), "the example must be malformed");
        return MessageDirection.of(MemorySegment.ofArray(b), 0, b.length);
    }

    @Test
    void aMalformedInlineMessageIsTheDirectionOfItsRpcMsgType() {
        byte[] badRead = readEntry(6, 1, 4, 0); // misaligned position
        assertEquals(RPC_CALL, of(cat(fixed(RDMA_MSG), badRead, words(0, 0, 0), CALL)));
        assertEquals(RPC_REPLY, of(cat(fixed(RDMA_MSG), badRead, words(0, 0, 0), REPLY)));
        assertEquals(RPC_CALL, of(cat(words(X, 1, 16, RDMA_MSGP, 0, 0), badRead, words(0, 0, 0), CALL)));
        // an rdma_proc we do not know, read as RDMA_MSG: a call after empty lists
        assertEquals(RPC_CALL, of(cat(words(X, 1, 16, 9, 0, 0, 0), CALL)));
        // a reply with a used Reply chunk: the shape is fine, the message is a reply
        assertEquals(RPC_REPLY, of(cat(fixed(RDMA_MSG), words(0, 0, 1, 1), hloo(1, 100, 0), REPLY)));
    }

    @Test
    void rdmaNomsgIsACallWithAPositionZeroChunkAndAReplyWithAReplyChunk() {
        // a Position-Zero chunk too short to be a call is refused later; here: a call beside a bad chunk
        assertEquals(RPC_CALL, of(cat(fixed(RDMA_NOMSG), readEntry(0, 1, 64, 0), readEntry(6, 2, 4, 0),
                words(0, 0, 0))));
        assertEquals(RPC_REPLY, of(cat(fixed(RDMA_NOMSG), readEntry(8, 1, 4, 0), words(0, 0, 1, 1), hloo(1, 100, 0))));
        assertEquals(RPC_REPLY, of(cat(fixed(RDMA_ERROR), words(7))));
    }

    @Test
    void whatTheBytesDoNotTellIsUnknown() {
        assertEquals(MessageDirection.UNKNOWN, of(cat(words(X, 2, 16, RDMA_MSG, 0, 0, 0), CALL))); // another version
        assertEquals(MessageDirection.UNKNOWN, of(cat(fixed(RDMA_MSG), words(2, 0, 0), CALL))); // bad discriminator
        assertEquals(MessageDirection.UNKNOWN, of(cat(fixed(RDMA_MSG), words(0, 0, 0), rpc(X + 1, RPC_CALL, 2))));
        assertEquals(MessageDirection.UNKNOWN, of(cat(fixed(RDMA_MSG), words(0, 1, 1000), hloo(1, 2, 3), words(0, 0))));
        assertEquals(MessageDirection.UNKNOWN, of(cat(fixed(RDMA_NOMSG), words(0, 0, 0))));
        assertEquals(MessageDirection.UNKNOWN, of(words(X, 1, 16)));
        assertEquals(MessageDirection.UNKNOWN, of(cat(words(X, 1, 16, 9), words(7, 7, 7, 7)))); // nothing like RDMA_MSG
    }

    @Test
    void everyPrefixIsReadWithinItsBounds() {
        byte[] m = cat(fixed(RDMA_MSG), readEntry(6, 1, 4, 0), words(0, 1, 2), hloo(1, 2, 3), hloo(4, 5, 6),
                words(0, 1, 1), hloo(7, 8, 9), CALL);
        for (int n = 0; n <= m.length; n++) {
            // a slice of exactly n bytes: a read past it would throw IndexOutOfBoundsException
            MemorySegment s = MemorySegment.ofArray(java.util.Arrays.copyOf(m, n));
            int d = MessageDirection.of(s, 0, n);
            boolean rpcHeaderThere = n >= m.length - CALL.length + 8; // its xid and msg_type
            assertEquals(rpcHeaderThere ? RPC_CALL : MessageDirection.UNKNOWN, d, "prefix of " + n + " bytes");
        }
    }
}
