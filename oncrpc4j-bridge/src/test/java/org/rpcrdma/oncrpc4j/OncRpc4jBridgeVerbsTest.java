package org.rpcrdma.oncrpc4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.rpcrdma.oncrpc4j.EchoProgram.*;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.dcache.oncrpc4j.rpc.RpcAuthTypeNone;
import org.dcache.oncrpc4j.rpc.RpcCall;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.verbs.Device;
import org.rpcrdma.transport.verbs.LiveResources;

/**
 * The oncrpc4j program of {@link OncRpc4jBridgeTest} served over real verbs (Soft-RoCE in
 * the guest): the same answers as over oncrpc4j's TCP service, backward calls from the
 * program's handler on the client's RDMA connection, and many calls at once with backward
 * calls among them.
 */
@Tag("verbs")
class OncRpc4jBridgeVerbsTest {
    private static final RpcRdmaOptions OPTS = RpcRdmaOptions.builder().connectTimeoutMillis(30_000)
            .backwardCredits(4).build();

    @Test
    void oncrpc4jProgramOverRxeWithBackwardCalls() throws Exception {
        InetAddress ip = address();
        EchoProgram program = new EchoProgram();
        OncRpcRdmaSvc svc = new OncRpcRdmaSvcBuilder().withBindAddress(ip.getHostAddress()).withPort(0)
                .withRdmaOptions(OPTS).withWorkerThreadPoolSize(8).build();
        svc.register(PROGRAM, program);
        OncRpcRdmaSvc callbacks = new OncRpcRdmaSvcBuilder().withRpcService(CB_PROGRAM, callbackService()).build();
        svc.start();
        InetSocketAddress server = svc.getInetSocketAddress();
        RdmaRpcTransport t = null;
        try (RpcRdmaClient client = RpcRdmaClient.connect(server, OPTS)) {
            client.enableBackchannel(callbacks.callHandler()).get(30, TimeUnit.SECONDS);
            t = new RdmaRpcTransport(client.connection(), null, server, 256 * 1024);
            assertEquals(OncRpc4jBridgeTest.EXPECTED, Scenarios.run(t));

            RpcCall call = new RpcCall(PROG, VERS, new RpcAuthTypeNone(), t);
            List<CompletableFuture<Blob>> futures = new ArrayList<>();
            // a server's backward calls must fit inline: their arguments stay small
            for (int i = 0; i < 100; i++) {
                futures.add(call.call(i % 4 == 0 ? CALLBACK : ECHO, new Blob(Scenarios.pattern(size(i))), Blob.class));
            }
            for (int i = 0; i < futures.size(); i++) {
                byte[] expected = Scenarios.pattern(size(i));
                if (i % 4 == 0) {
                    expected = reversed(expected);
                }
                byte[] got = futures.get(i).get(60, TimeUnit.SECONDS).bytes;
                assertEquals(Scenarios.check(expected, expected), Scenarios.check(expected, got), "call " + i);
            }
            assertEquals(0, client.connection().outstandingCalls(), "client calls outstanding");
            assertEquals(0, client.connection().peerOutstandingCalls(), "backward calls unanswered");
            assertTrue(t.getReplyQueue().getPendingRequests().isEmpty(), "oncrpc4j calls waiting");
        } finally {
            program.release.countDown();
            if (t != null) {
                t.close();
            }
            svc.stop();
            callbacks.stop();
        }
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (LiveResources.total() != 0 && System.nanoTime() < end) {
            Thread.sleep(10);
        }
        assertEquals(0, LiveResources.total(), () -> "verbs objects left open: " + LiveResources.snapshot());
    }

    private static int size(int i) {
        return i % 4 == 0 ? i * 10 : i * 97;
    }

    private static byte[] reversed(byte[] b) {
        byte[] r = new byte[b.length];
        for (int k = 0; k < r.length; k++) {
            r[k] = b[r.length - 1 - k];
        }
        return r;
    }

    /** As scripts/verbs-tests finds it: RPCRDMA_TEST_IP or RDMA_VM_IP, else the first device's netdev. */
    private static InetAddress address() throws Exception {
        for (String n : new String[] {"RPCRDMA_TEST_IP", "RDMA_VM_IP"}) {
            String v = System.getenv(n);
            if (v != null && !v.isEmpty()) {
                return InetAddress.getByName(v);
            }
        }
        List<String> devs = Device.list();
        if (devs.isEmpty()) {
            return fail("no RDMA device: run the verbs tests in the Soft-RoCE guest (scripts/verbs-tests)");
        }
        String netdev = Files.readString(Path.of("/sys/class/infiniband", devs.get(0), "ports/1/gid_attrs/ndevs/0")).trim();
        for (InetAddress a : Collections.list(NetworkInterface.getByName(netdev).getInetAddresses())) {
            if (a instanceof Inet4Address) {
                return a;
            }
        }
        return fail("netdev " + netdev + " has no IPv4 address");
    }
}
