package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.EndpointVerbsTest.closeAndCheckNothingLeft;
import static org.rpcrdma.transport.EndpointVerbsTest.deviceAddress;

import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.rpc.CallFuture;

/**
 * A thread waiting for a call's future ({@code get}, {@code get(timeout)}, {@code join})
 * over busy-polling verbs takes the reply off the completion queue itself, as callAndWait
 * does, instead of parking until the poller thread hands it over (an unpark and a
 * scheduler wake-up per call, most of the future shape's extra time in the guest).
 */
@Tag("verbs")
class FutureWaitVerbsTest {
    private static final byte[] ARGS = "twelve bytes".getBytes();

    @Test
    void aThreadWaitingForAFutureTakesItsOwnReplyInBusyPoll() throws Exception {
        InetAddress ip = deviceAddress();
        // a fresh JVM under TCG on a loaded host took over 30 s to connect
        RpcRdmaOptions o = RpcRdmaOptions.builder().busyPoll(true).connectTimeoutMillis(120_000).build();
        RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, echo(), null);
        RpcRdmaClient client = null;
        try {
            client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
            int calls = 300;
            int own = 0;
            for (int i = 1; i <= calls; i++) {
                CallFuture f = (CallFuture) client.call(callMsg(i, 1, ARGS), CallOptions.timeout(5, TimeUnit.SECONDS));
                ReceivedMessage m = switch (i % 3) {
                    case 0 -> f.get();
                    case 1 -> f.get(5, TimeUnit.SECONDS);
                    default -> f.join();
                };
                try (m) {
                    byte[] back = m.bytes().asSlice(24).toArray(ValueLayout.JAVA_BYTE);
                    assertArrayEquals(ARGS, back, "call " + i + " echoed");
                }
                own += f.deliveredBy() == Thread.currentThread() ? 1 : 0;
            }
            // the poller thread may take a reply before the waiter starts polling, but rarely:
            // the waiter polls from right after its Send, a round trip under rxe takes tens of µs
            assertTrue(own >= calls / 2, own + " of " + calls + " replies taken by the waiting thread");
            assertEquals(0, client.connection().outstandingCalls(), "no call left behind");
        } finally {
            closeAndCheckNothingLeft(client, server);
        }
    }
}
