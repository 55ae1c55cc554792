package org.rpcrdma.oncrpc4j.example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;
import org.rpcrdma.oncrpc4j.OncRpcRdmaSvc;
import org.rpcrdma.oncrpc4j.RdmaRpcTransport;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaOptions;

/** The README example's server and client, over the in-memory pair. */
class HelloRdmaTest {
    @Test
    void helloOverTheBridge() throws Exception {
        OncRpcRdmaSvc svc = HelloRdma.service(0);
        try (InMemoryPair pair = InMemoryPair.open(RpcRdmaOptions.defaults(), svc.callHandler());
             RdmaRpcTransport transport = new RdmaRpcTransport(pair.client(), null,
                    new InetSocketAddress("127.0.0.1", RpcRdmaOptions.DEFAULT_PORT), 1 << 20)) {
            assertEquals("hello rdma", HelloRdma.hello(transport, "rdma"));
        } finally {
            svc.stop();
        }
    }
}
