package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.transport.wire.RpcRdmaEncoder;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * {@link ChunkBehaviour} over real verbs (Soft-RoCE guest), and a hostile second client of
 * the same server: its bad chunk lists cost its calls and a bad rkey only its own
 * connection (verbs only: the in-memory pair has one client).
 */
@Tag("verbs")
class ChunkVerbsTest extends ChunkBehaviour {
    @Override
    LinkFixture link() {
        return LinkFixture.VERBS;
    }

    @Test
    void hostileChunkListsCostTheirCallAndABadRkeyOnlyItsOwnConnection() throws Exception {
        try (LinkFixture.Ends e = link().open(opts(1024), echo())) {
            // a second client that plays by hand; backward credits keep receives posted for
            // the answers to calls it never made through its requester
            Connection hostile = e.anotherClient(opts(1024).toBuilder().backwardCredits(4).build());
            // 4 GiB - 1 in a Position-Zero Read chunk: refused before anything is allocated or read
            RpcRdmaHeader h = new RpcRdmaHeader(8, 1, 1, 1).clear().xid(0x70).credit(1).proc(RpcRdma.RDMA_NOMSG);
            h.readList().add(0, 0x1234, 0xFFFF_FFFFL, 0x1000);
            RawAccess.send(hostile, encoded(h));
            assertTrue(link().await(() -> e.serverStats().errChunkSent() == 1));
            assertEquals(0, e.serverStats().rdmaReads());
            assertTrue(hostile.isOpen());
            // a read chunk under an rkey the client never exposed: the server's RDMA Read fails
            h = new RpcRdmaHeader(8, 1, 1, 1).clear().xid(0x71).credit(1).proc(RpcRdma.RDMA_NOMSG);
            h.readList().add(0, 0x7777, 100, 0x1000);
            RawAccess.send(hostile, encoded(h));
            assertTrue(link().await(() -> !hostile.isOpen()), "a remote access error ends that connection");
            // the well-behaved client carries on
            byte[] args = pattern(5000, 5);
            assertArrayEquals(args, results(get(e.client().call(callMsg(1, 1, args),
                    CallOptions.DEFAULT.withMaxReplyBytes(5064)))));
        }
    }

    /**
     * A reply through the Reply chunk is one ibv_post_send on the server: its RDMA Write(s)
     * and the RDMA_NOMSG Send after them in one chain (RC ordering places the Writes' data
     * before the Send completes at the requester, RFC 8166 §3.5.4), where separate posts
     * would make each a system call. The long call's RDMA Read is a post of its own.
     */
    @Test
    void aReplyThroughTheReplyChunkPostsItsWritesAndSendAtOnce() throws Exception {
        try (LinkFixture.Ends e = link().open(opts(1024), echo())) {
            Connection c = e.client();
            byte[] warm = pattern(3000, 1);
            assertArrayEquals(warm, results(get(c.call(callMsg(1, 1, warm), CallOptions.DEFAULT.withMaxReplyBytes(3064)))));
            RpcRdmaStats before = e.serverStats();
            int calls = 5;
            for (int i = 0; i < calls; i++) {
                byte[] args = pattern(20_000 + i, i);
                ReceivedMessage m = get(c.call(callMsg(2 + i, 1, args), CallOptions.DEFAULT.withMaxReplyBytes(args.length + 64)));
                assertArrayEquals(args, results(m));
                m.release();
            }
            RpcRdmaStats after = e.serverStats();
            assertEquals(calls, after.replyChunksUsed() - before.replyChunksUsed(), after::toString);
            long writes = after.rdmaWrites() - before.rdmaWrites();
            assertTrue(writes >= calls, after::toString);
            long reads = after.rdmaReads() - before.rdmaReads();
            assertEquals(calls, reads, "one RDMA Read per long call: " + after);
            assertEquals(reads + calls, after.sendQueuePosts() - before.sendQueuePosts(),
                    "server posts for " + calls + " long calls answered through the Reply chunk with " + writes
                            + " RDMA Writes: one per Read, one per reply");
            noRkeysLeft(e);
        }
    }

    /**
     * A long call's window bind and its Send are one ibv_post_send on the client: the bind
     * waits in the send chain and goes out ahead of the Send (RC executes them in order, so
     * the window is bound before the server can read through its rkey), where separate posts
     * would make each a system call. The server's Send with Invalidate withdraws the window,
     * so the call posts no LOCAL_INV either (RFC 8797 §7).
     */
    @Test
    void aLongCallPostsItsWindowBindAndSendAtOnce() throws Exception {
        try (LinkFixture.Ends e = link().open(opts(1024), emptyReply())) {
            Connection c = e.client();
            get(c.call(callMsg(1, 1, pattern(3000, 1)), CallOptions.DEFAULT.withMaxReplyBytes(512))).release();
            RpcRdmaStats before = c.stats();
            int calls = 5;
            for (int i = 0; i < calls; i++) {
                get(c.call(callMsg(2 + i, 1, pattern(3000 + i, i)), CallOptions.DEFAULT.withMaxReplyBytes(512))).release();
            }
            RpcRdmaStats after = c.stats();
            assertEquals(calls, after.longCallsSent() - before.longCallsSent(), after::toString);
            assertEquals(calls, after.windowsBound() - before.windowsBound(), after::toString);
            assertEquals(calls, after.remoteInvalidations() - before.remoteInvalidations(), after::toString);
            assertEquals(calls, after.sendQueuePosts() - before.sendQueuePosts(),
                    "client posts for " + calls + " long calls: one each, the bind with the Send: " + after);
            noRkeysLeft(e);
        }
    }

    /**
     * A registered-memory echo exposes two rkeys (the call in place, the Reply chunk in chunk
     * memory: two windows), and both binds go out with the call's Send in one ibv_post_send.
     * The reply invalidates one rkey (RFC 8797 §4.1), the client withdraws the other with a
     * LOCAL_INV: two posts per call, where a bind posted on its own would make three.
     */
    @Test
    void aRegisteredMemoryEchoPostsBothWindowBindsWithItsSend() throws Exception {
        try (LinkFixture.Ends e = link().open(opts(1024), echo());
                RegisteredBuffer buf = e.allocateRegistered(4096)) {
            Connection c = e.client();
            byte[] args = pattern(3000, 7);
            echoInPlace(c, buf, 1, args);
            RpcRdmaStats before = c.stats();
            int calls = 5;
            for (int i = 0; i < calls; i++) {
                echoInPlace(c, buf, 2 + i, args);
            }
            RpcRdmaStats after = c.stats();
            assertEquals(2 * calls, after.windowsBound() - before.windowsBound(), after::toString);
            assertEquals(calls, after.remoteInvalidations() - before.remoteInvalidations(), after::toString);
            long localInv = after.localInvalidations() - before.localInvalidations();
            assertEquals(calls, localInv, after::toString);
            assertEquals(calls + localInv, after.sendQueuePosts() - before.sendQueuePosts(),
                    "client posts for " + calls + " echoes of two rkeys: the binds with the Send, then a LOCAL_INV: "
                            + after);
            noRkeysLeft(e);
        }
    }

    private void echoInPlace(Connection c, RegisteredBuffer buf, int xid, byte[] args) throws Exception {
        MemorySegment call = callMsg(xid, 1, args);
        MemorySegment.copy(call, 0, buf.segment(), 0, call.byteSize());
        ReceivedMessage m = get(c.call(buf.segment().asSlice(0, call.byteSize()),
                CallOptions.DEFAULT.withMaxReplyBytes(8000)));
        assertArrayEquals(args, results(m));
        m.release();
    }

    /** A SUCCESS reply with no results, whatever the call carried. */
    private static CallHandler emptyReply() {
        return call -> {
            MemorySegment r = MemorySegment.ofArray(new byte[24]);
            int[] w = {call.xid(), OncRpc.REPLY, OncRpc.MSG_ACCEPTED, OncRpc.AUTH_NONE, 0, OncRpc.SUCCESS};
            for (int i = 0; i < w.length; i++) {
                Xdr.putInt(r, i * 4L, w[i]);
            }
            call.reply(r);
        };
    }

    private static MemorySegment encoded(RpcRdmaHeader h) {
        int n = org.rpcrdma.transport.wire.RpcRdmaEncoder.encodedLength(h);
        MemorySegment m = MemorySegment.ofArray(new byte[n]);
        org.rpcrdma.transport.wire.RpcRdmaEncoder.encode(h, m, 0, n);
        return m;
    }
}
