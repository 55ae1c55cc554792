package org.rpcrdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** RC traffic between two rdma_cm ids on one device. */
class ConnectionTest extends VerbsTestBase {
    /** RFC 8797 section 5 private data: magic f6ab0e18, version 1, R, send/recv 4 KiB. */
    private static final byte[] CLIENT_PD = {(byte) 0xf6, (byte) 0xab, 0x0e, 0x18, 1, 1, 3, 3};
    private static final byte[] SERVER_PD = {(byte) 0xf6, (byte) 0xab, 0x0e, 0x18, 1, 1, 0, 7};

    private static void put(MemorySegment seg, long off, String s) {
        byte[] b = s.getBytes(StandardCharsets.US_ASCII);
        MemorySegment.copy(b, 0, seg, ValueLayout.JAVA_BYTE, off, b.length);
    }

    private static String get(MemorySegment seg, long off, int len) {
        return new String(seg.asSlice(off, len).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.US_ASCII);
    }

    @Test
    void privateDataArrivesIntactBothWays() {
        ConnectionParameters c = ConnectionParameters.defaults().withPrivateData(CLIENT_PD);
        ConnectionParameters s = ConnectionParameters.defaults().withPrivateData(SERVER_PD);
        try (Loopback lb = new Loopback(deviceAddress(), c, s, Access.LOCAL_WRITE)) {
            assertStartsWith(CLIENT_PD, lb.privateDataAtServer);
            assertStartsWith(SERVER_PD, lb.privateDataAtClient);
        }
    }

    @Test
    void sendAndReceiveWithCompletionEvent() {
        try (Loopback lb = new Loopback(deviceAddress())) {
            lb.serverRecv(7);
            lb.serverCq.requestNotify(false);
            put(lb.clientMr.segment(), 0, "hello, rdma");
            lb.send.clear();
            lb.send.send(1, lb.clientMr.lkey(), lb.clientMr.address(), 11, SendBatch.SIGNALED);
            lb.clientQp.postSend(lb.send);
            expectSuccess(lb.clientCq, lb.wc, WorkCompletions.OPCODE_SEND);
            assertEquals(1, lb.wc.wrId(0));
            assertSame(lb.serverCq, lb.serverCompletions.await(TIMEOUT_MS), "completion event for the server CQ");
            expectSuccess(lb.serverCq, lb.wc, WorkCompletions.OPCODE_RECV);
            assertEquals(7, lb.wc.wrId(0));
            assertEquals(11, lb.wc.byteLen(0));
            assertEquals(lb.serverQp.qpNum(), lb.wc.qpNum(0));
            assertEquals("hello, rdma", get(lb.serverMr.segment(), 0, 11));
        }
    }

    @Test
    void sendWithImmediate() {
        try (Loopback lb = new Loopback(deviceAddress())) {
            lb.serverRecv(8);
            lb.send.clear();
            lb.send.sendWithImm(2, lb.clientMr.lkey(), lb.clientMr.address(), 4, 0x12345678, SendBatch.SIGNALED);
            lb.clientQp.postSend(lb.send);
            expectSuccess(lb.clientCq, lb.wc, WorkCompletions.OPCODE_SEND);
            expectSuccess(lb.serverCq, lb.wc, WorkCompletions.OPCODE_RECV);
            assertTrue((lb.wc.wcFlags(0) & WorkCompletions.WITH_IMM) != 0);
            assertEquals(0x12345678, lb.wc.immData(0));
            assertFalse(RemoteInvalidation.invalidated(lb.wc, 0, 0x12345678), "immediate data is no invalidation");
        }
    }

    @Test
    void rdmaWriteAndRead() {
        try (Loopback lb = new Loopback(deviceAddress())) {
            put(lb.clientMr.segment(), 0, "written by the client");
            lb.send.clear();
            // a chain: Write then Read back into another part of the client's buffer
            lb.send.rdmaWrite(3, lb.clientMr.lkey(), lb.clientMr.address(), 21,
                    lb.serverMr.address() + 100, lb.serverMr.rkey(), 0);
            lb.send.rdmaRead(4, lb.clientMr.lkey(), lb.clientMr.address() + 1000, 21,
                    lb.serverMr.address() + 100, lb.serverMr.rkey(), SendBatch.SIGNALED);
            lb.clientQp.postSend(lb.send);
            expectSuccess(lb.clientCq, lb.wc, WorkCompletions.OPCODE_RDMA_READ);
            assertEquals(4, lb.wc.wrId(0));
            assertEquals("written by the client", get(lb.serverMr.segment(), 100, 21));
            assertEquals("written by the client", get(lb.clientMr.segment(), 1000, 21));
        }
    }

    /** Binds a type-2 window over [mr+offset, +length) from the server's QP and waits for it. */
    private static int bind(Loopback lb, MemoryWindow mw, long offset, int length) {
        int before = mw.rkey();
        lb.send.clear();
        lb.send.bindWindow(20, mw, lb.serverMr, lb.serverMr.address() + offset, length,
                Access.REMOTE_WRITE | Access.REMOTE_READ, SendBatch.SIGNALED);
        lb.serverQp.postSend(lb.send);
        expectSuccess(lb.serverCq, lb.wc, WorkCompletions.OPCODE_BIND_MW);
        assertNotEquals(before, mw.rkey(), "every bind uses a fresh rkey");
        return mw.rkey();
    }

    private static int clientWrite(Loopback lb, long remote, int rkey, String text) {
        put(lb.clientMr.segment(), 0, text);
        lb.send.clear();
        lb.send.rdmaWrite(30, lb.clientMr.lkey(), lb.clientMr.address(), text.length(), remote, rkey, SendBatch.SIGNALED);
        lb.clientQp.postSend(lb.send);
        assertEquals(1, pollOne(lb.clientCq, lb.wc));
        return lb.wc.status(0);
    }

    @Test
    void memoryWindowThenSendWithInvalidate() {
        try (Loopback lb = new Loopback(deviceAddress());
             MemoryWindow mw = lb.serverPd.allocateWindow()) {
            int rkey = bind(lb, mw, 4096, 4096);
            assertEquals(WorkCompletions.SUCCESS, clientWrite(lb, lb.serverMr.address() + 4096, rkey, "via window"));
            assertEquals("via window", get(lb.serverMr.segment(), 4096, 10));

            lb.serverRecv(9);
            lb.send.clear();
            lb.send.sendWithInvalidate(5, lb.clientMr.lkey(), lb.clientMr.address(), 8, rkey, SendBatch.SIGNALED);
            lb.clientQp.postSend(lb.send);
            expectSuccess(lb.clientCq, lb.wc, WorkCompletions.OPCODE_SEND);
            expectSuccess(lb.serverCq, lb.wc, WorkCompletions.OPCODE_RECV);
            assertEquals(rkey, lb.wc.invalidatedRkey(0));
            int flags = lb.wc.wcFlags(0);
            assertTrue((flags & (WorkCompletions.WITH_INV | RemoteInvalidation.RXE_61_WITH_INV)) != 0,
                    () -> "wc_flags 0x" + Integer.toHexString(flags));
            assertTrue(RemoteInvalidation.invalidated(lb.wc, 0, rkey));
            assertFalse(RemoteInvalidation.invalidated(lb.wc, 0, rkey + 1), "only the exposed rkey counts");

            // the window is invalid now: a Write through the old rkey fails
            assertNotEquals(WorkCompletions.SUCCESS, clientWrite(lb, lb.serverMr.address() + 4096, rkey, "too late"));
            assertEquals("via window", get(lb.serverMr.segment(), 4096, 10));
        }
    }

    @Test
    void memoryWindowLocalInvalidate() {
        try (Loopback lb = new Loopback(deviceAddress());
             MemoryWindow mw = lb.serverPd.allocateWindow()) {
            int first = bind(lb, mw, 0, 1024);
            lb.send.clear();
            lb.send.localInvalidate(21, first, SendBatch.SIGNALED);
            lb.serverQp.postSend(lb.send);
            expectSuccess(lb.serverCq, lb.wc, WorkCompletions.OPCODE_LOCAL_INV);
            int second = bind(lb, mw, 0, 1024); // rebinding after invalidation rotates the key
            assertNotEquals(first, second);
            assertEquals(WorkCompletions.SUCCESS, clientWrite(lb, lb.serverMr.address(), second, "rebound"));
            assertEquals("rebound", get(lb.serverMr.segment(), 0, 7));
            lb.send.clear();
            lb.send.localInvalidate(22, second, SendBatch.SIGNALED);
            lb.serverQp.postSend(lb.send);
            expectSuccess(lb.serverCq, lb.wc, WorkCompletions.OPCODE_LOCAL_INV);
            assertNotEquals(WorkCompletions.SUCCESS, clientWrite(lb, lb.serverMr.address(), second, "invalid"));
        }
    }

    @Test
    void sendWithoutReceiveIsAnRnrError() {
        ConnectionParameters noRnrRetry = new ConnectionParameters(new byte[0], 1, 1, 7, 0);
        try (Loopback lb = new Loopback(deviceAddress(), noRnrRetry, noRnrRetry, Access.LOCAL_WRITE)) {
            lb.send.clear();
            lb.send.send(6, lb.clientMr.lkey(), lb.clientMr.address(), 16, SendBatch.SIGNALED);
            lb.clientQp.postSend(lb.send);
            assertEquals(1, pollOne(lb.clientCq, lb.wc));
            assertEquals(WorkCompletions.RNR_RETRY_EXCEEDED, lb.wc.status(0),
                    () -> "status " + WorkCompletions.statusString(lb.wc.status(0)));
        }
    }

    @Test
    void disconnectReachesBothSides() {
        try (Loopback lb = new Loopback(deviceAddress())) {
            lb.serverRecv(10);
            // Our DREQ gives the peer DISCONNECTED at once; ours follows the peer's own
            // rdma_disconnect (its DREP), or the DREQ timeout: so the peer answers first.
            lb.client.disconnect();
            CmEvent ev = expectEvent(lb.serverChannel, CmEvent.Type.DISCONNECTED);
            assertSame(lb.server, ev.id());
            lb.server.disconnect();
            expectEvent(lb.clientChannel, CmEvent.Type.DISCONNECTED);
            // the posted receive is flushed
            assertEquals(1, pollOne(lb.serverCq, lb.wc));
            assertEquals(WorkCompletions.FLUSHED, lb.wc.status(0));
            assertEquals(10, lb.wc.wrId(0));
        }
    }
}
