package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaServer;

/** Over rxe: a 60 KB typed result with no option comes back through the Reply chunk the call offered. */
@Tag("verbs")
class LargeResultVerbsTest {
    @Test
    void sixtyKilobyteResultThroughTheReplyChunk() throws Exception {
        InetAddress ip = VerbsEnv.address();
        RpcRdmaServer server = null;
        RpcRdmaClient client = null;
        try {
            server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), VerbsEnv.OPTS, TestProgram.dispatcher(), null);
            client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), VerbsEnv.OPTS);
            OncRpcClient c = new OncRpcClient(client, TestProgram.PROG, TestProgram.V2);
            byte[] data = LargeResultTest.pattern(60_000);
            assertArrayEquals(data, c.call(TestProgram.ECHO_OPAQUE, data, 30, TimeUnit.SECONDS));
            assertEquals(1, client.connection().stats().repliesThroughReplyChunk());
            assertEquals(0, client.connection().outstandingCalls());
        } finally {
            VerbsEnv.closeAndCheckNothingLeft(client, server);
        }
    }
}
