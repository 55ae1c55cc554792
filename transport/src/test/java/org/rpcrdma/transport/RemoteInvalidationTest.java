package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rpcrdma.transport.wire.OncRpc;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.transport.wire.Xdr;

/**
 * Remote invalidation over {@link InMemoryPair} (RFC 8797 §7): a responder of ours answers
 * with Send with Invalidate when R was negotiated and the call exposed exactly one rkey;
 * the requester then posts no invalidation of its own for it (never twice), and withdraws
 * every other rkey itself. With the option off nothing is sent that way.
 */
class RemoteInvalidationTest {
    /** Answers every call with an empty accepted reply (it fits inline). */
    static final CallHandler SMALL_REPLY = call -> {
        MemorySegment r = MemorySegment.ofArray(new byte[24]);
        Xdr.putInt(r, 0, call.xid());
        Xdr.putInt(r, 4, OncRpc.REPLY);
        call.reply(r);
    };

    @ParameterizedTest(name = "remote invalidation {0}")
    @ValueSource(booleans = {true, false})
    void oneRkeyIsInvalidatedByTheRespondersSendAndSeveralByTheRequester(boolean on) {
        RpcRdmaOptions o = RpcRdmaOptions.defaults().withInlineThreshold(1024).withRemoteInvalidation(on);
        try (InMemoryPair p = InMemoryPair.open(o, SMALL_REPLY)) {
            assertEquals(on, p.client().remoteInvalidation());
            RpcRdmaStats cs = p.client().stats();
            RpcRdmaStats ss = p.server().stats();
            // a long call (one rkey: its Position-Zero Read chunk), a reply that fits inline
            p.client().call(callMsg(1, 1, new byte[3000]), 0).join().release();
            assertEquals(on ? 1 : 0, ss.sendsWithInvalidate.sum());
            assertEquals(on ? 1 : 0, cs.remoteInvalidations.sum());
            assertEquals(on ? 0 : 1, cs.localInvalidations.sum());
            // a long call offering a Reply chunk: two rkeys, a plain Send, both withdrawn by us
            p.client().call(callMsg(2, 1, new byte[3000]), 8000).join().release();
            assertEquals(on ? 1 : 0, ss.sendsWithInvalidate.sum());
            assertEquals(on ? 1 : 0, cs.remoteInvalidations.sum());
            assertEquals(on ? 2 : 3, cs.localInvalidations.sum());
            // an inline call offering only a Reply chunk: one rkey again
            p.client().call(callMsg(3, 1, new byte[10]), 8000).join().release();
            assertEquals(on ? 2 : 0, ss.sendsWithInvalidate.sum());
            assertEquals(0, p.exposedCount(), "no rkey outlives its call");
            assertEquals(0, cs.remoteInvalidationsUnnegotiated.sum());
            assertTrue(p.client().isOpen());
        }
    }

    @ParameterizedTest(name = "remote invalidation {0}")
    @ValueSource(booleans = {true, false})
    void aReadChunkRkeyInvalidatedByTheReplyCannotBeReadAgain(boolean on) {
        RpcRdmaOptions o = RpcRdmaOptions.defaults().withInlineThreshold(1024).withRemoteInvalidation(on)
                .withBackwardCredits(8);
        try (InMemoryPair p = InMemoryPair.open(o, SMALL_REPLY)) {
            MemorySegment mem = MemorySegment.ofArray(new byte[4096]);
            MemorySegment call = callMsg(0x44, 1, new byte[2000]);
            MemorySegment.copy(call, 0, mem, 0, call.byteSize());
            int rkey = p.exposeOnClient(mem.asSlice(0, call.byteSize()), false);
            RpcRdmaHeader h = new RpcRdmaHeader(8, 1, 1, 1).clear().xid(0x44).credit(4).proc(RpcRdma.RDMA_NOMSG);
            h.readList().add(0, rkey, call.byteSize(), mem.address());
            p.client().postRaw(ChunkTest.raw(h, null));
            assertEquals(1, p.server().stats().repliesSent.sum());
            assertEquals(on ? 1 : 0, p.server().stats().sendsWithInvalidate.sum());
            assertEquals(on ? 0 : 1, p.exposedCount(), "the Send with Invalidate withdrew the rkey");
            // the same call again under the same rkey: with it invalidated, the Read is a remote access error
            p.client().postRaw(ChunkTest.raw(h, null));
            assertEquals(!on, p.server().isOpen());
            assertFalse(on && p.client().isOpen());
        }
    }

    /**
     * A call whose one rkey the responder may invalidate is abandoned before its reply: the
     * connection is disconnected before our LOCAL_INV (a late Send with Invalidate of an
     * rkey already invalid is an error; on Debian 6.1 rxe a kernel panic). With R off the
     * connection stays and the rkey is withdrawn at once.
     */
    @ParameterizedTest(name = "remote invalidation {0}")
    @ValueSource(booleans = {true, false})
    void anAbandonedCallThePeerMayInvalidateDisconnectsFirst(boolean on) {
        java.util.List<IncomingCall> held = new java.util.ArrayList<>();
        RpcRdmaOptions o = RpcRdmaOptions.defaults().withInlineThreshold(1024).withRemoteInvalidation(on)
                .withReconnectAttempts(0);
        CallHandler holdNine = call -> {
            if (call.xid() == 9) {
                held.add(call);
            } else {
                SMALL_REPLY.handle(call);
            }
        };
        try (InMemoryPair p = InMemoryPair.open(o, holdNine)) {
            // a first reply opens the credit window: one abandoned call then does not hold every credit
            p.client().call(callMsg(8, 1, new byte[16]), 0).join().release();
            java.util.concurrent.CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(9, 1, new byte[3000]), 0);
            assertEquals(1, held.size(), "the server pulled the call");
            f.cancel(false);
            assertEquals(!on, p.client().isOpen());
            assertEquals(0, p.exposedCount());
        }
    }
}
