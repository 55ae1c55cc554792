package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/**
 * On this host (its kernel has no RDMA, so there is no {@code /dev/infiniband/rdma_cm}),
 * the endpoints fail with the transport's exception naming the call and its errno, not
 * with an exception of the bindings.
 */
class NativeFailureExceptionTest {
    private static final int ENODEV = 19;

    @Test
    void connectOnAHostWithoutRdmaNamesTheCallAndItsErrno() {
        NativeFailureException e = assertThrows(NativeFailureException.class,
                () -> RpcRdmaClient.connect(new InetSocketAddress("127.0.0.1", 20049), RpcRdmaOptions.defaults()));
        assertEquals("rdma_create_event_channel", e.function());
        assertEquals(ENODEV, e.errno());
        assertEquals("rdma_create_event_channel failed: errno 19 (No such device)", e.getMessage());
    }

    @Test
    void listenOnAHostWithoutRdmaNamesTheCallAndItsErrno() {
        NativeFailureException e = assertThrows(NativeFailureException.class,
                () -> RpcRdmaServer.listen(new InetSocketAddress("127.0.0.1", 0), RpcRdmaOptions.defaults(),
                        call -> { }, null));
        assertEquals("rdma_create_event_channel", e.function());
        assertEquals(ENODEV, e.errno());
    }
}
