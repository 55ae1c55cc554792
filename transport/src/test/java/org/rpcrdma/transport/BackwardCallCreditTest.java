package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.endpoint.ConnectionAssembly;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.transport.rpc.ConnectionEngine;
import org.rpcrdma.transport.rpc.ConnectionParams;
import org.rpcrdma.transport.rpc.StatsCounters;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.xdr.Xdr;

/**
 * A server's backward call carries in rdma_credit the backward credits it requests (RFC
 * 8167 §4.1, RFC 8166 §3.3.1: a call's credit value is its requester's request, its most
 * calls outstanding), not the forward credits it grants the client, on every call.
 */
class BackwardCallCreditTest {
    /** A link that records every Send and takes receives without delivering anything. */
    private static final class Recorder implements Link {
        final List<byte[]> sent = new CopyOnWriteArrayList<>();

        @Override
        public void postSend(int slot, MemorySegment buffer, int length, boolean signalled) {
            sent.add(buffer.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE));
        }

        @Override
        public void postReceives(int[] slots, int count) {
        }

        @Override
        public void disconnect() {
        }
    }

    @Test
    void aBackwardCallRequestsTheServersBackwardCredits() {
        Recorder link = new Recorder();
        Arena arena = Arena.ofAuto();
        StatsCounters stats = new StatsCounters();
        int backwardLimit = 5;
        int forwardGrant = 32;
        int recv = backwardLimit + forwardGrant + 8;
        Connection server = new ConnectionEngine("server", new ConnectionParams(false, 1024, 1024, backwardLimit,
                forwardGrant, false, 4, 0), link, ConnectionAssembly.receivePool(link, arena.allocate(recv * 1024L), recv, 1024,
                4, stats), 48, arena.allocate(48L * 1024), stats).connection();
        server.engine().start();
        try {
            server.markBackchannelReady();
            server.call(callMsg(0x71, 1, new byte[8]));
            assertEquals(1, link.sent.size(), "the first backward call goes at once (a window of 1)");
            MemorySegment h = MemorySegment.ofArray(link.sent.get(0));
            assertEquals(0x71, Xdr.getInt(h, 0));
            assertEquals(RpcRdma.RPCRDMA_VERSION, Xdr.getInt(h, 4));
            assertEquals(backwardLimit, Xdr.getInt(h, 8), "rdma_credit: the backward credits requested");
            assertEquals(RpcRdma.RDMA_MSG, Xdr.getInt(h, 12));
        } finally {
            server.close(0, java.util.concurrent.TimeUnit.MILLISECONDS);
        }
    }
}
