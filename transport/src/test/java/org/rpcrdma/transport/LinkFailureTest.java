package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A Send post that fails under the requester's and the send queue's locks loses the
 * connection exactly once (the one owner of a connection's failure): the call whose Send
 * failed and the calls behind it fail with {@link ConnectionLostException} naming the post's
 * failure, a later failure changes nothing, and the receive buffers are all back.
 */
@Timeout(30)
class LinkFailureTest {
    @Test
    void aFailedPostLosesTheConnectionOnceAndFailsEveryCall() throws Exception {
        CoreDefectsTest.FakePeer p = new CoreDefectsTest.FakePeer(1, 0);
        p.failSends = true;
        CompletableFuture<ReceivedMessage> first = p.conn.call(callMsg(0x10, 1, new byte[4]));
        CompletableFuture<ReceivedMessage> second = p.conn.call(callMsg(0x11, 1, new byte[4]));

        ExecutionException e1 = assertThrows(ExecutionException.class, () -> first.get(10, TimeUnit.SECONDS));
        ExecutionException e2 = assertThrows(ExecutionException.class, () -> second.get(10, TimeUnit.SECONDS));
        ConnectionLostException lost = assertInstanceOf(ConnectionLostException.class, e1.getCause());
        assertEquals("test: ibv_post_send failed", lost.getCause().getMessage());
        assertInstanceOf(ConnectionLostException.class, e2.getCause());
        assertFalse(p.conn.isOpen());

        // a call after the loss fails at once, and the loss is not counted again
        CompletableFuture<ReceivedMessage> late = p.conn.call(callMsg(0x12, 1, new byte[4]));
        ExecutionException e3 = assertThrows(ExecutionException.class, () -> late.get(10, TimeUnit.SECONDS));
        assertInstanceOf(ConnectionLostException.class, e3.getCause());
        assertSame(lost.getCause(), e3.getCause().getCause());
        assertEquals(1, p.conn.stats().connectionsLost());
        assertEquals(0, p.conn.outstandingCalls());
        assertEquals(0, p.conn.waitingCalls());
        assertEquals(0, p.conn.heldReceives());
    }
}
