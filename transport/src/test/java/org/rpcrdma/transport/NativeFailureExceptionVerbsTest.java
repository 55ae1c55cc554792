package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.verbs.LiveResources;

/**
 * On a real device (Soft-RoCE in the guest): a connect that the peer's connection manager
 * refuses fails with the transport's exception naming the step
 * (rdma_connect), the errno and the rdma_cm event, leaving no verbs object behind.
 */
@Tag("verbs")
class NativeFailureExceptionVerbsTest {
    private static final int ECONNREFUSED = 111;

    @Test
    void connectToAPortNobodyListensOnNamesRdmaConnectAndTheRejection() throws Exception {
        InetAddress ip = EndpointVerbsTest.deviceAddress();
        int before = LiveResources.total();
        NativeFailureException e = assertThrows(NativeFailureException.class, () -> RpcRdmaClient.connect(
                new InetSocketAddress(ip, 1), RpcRdmaOptions.builder().connectTimeoutMillis(10_000).build()));
        assertEquals("rdma_connect", e.function());
        assertEquals(ECONNREFUSED, e.errno(), e.getMessage());
        assertTrue(e.getMessage().startsWith("rdma_connect failed: errno 111 (Connection refused): REJECTED"
                + " (reject reason 8), connect to "), e.getMessage());
        assertEquals(before, LiveResources.total(), "verbs objects left behind: " + LiveResources.snapshot());
    }
}
