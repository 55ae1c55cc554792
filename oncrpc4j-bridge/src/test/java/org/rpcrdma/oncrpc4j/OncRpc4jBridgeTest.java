package org.rpcrdma.oncrpc4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.oncrpc4j.EchoProgram.*;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.dcache.oncrpc4j.rpc.OncRpcClient;
import org.dcache.oncrpc4j.rpc.OncRpcProgram;
import org.dcache.oncrpc4j.rpc.OncRpcSvc;
import org.dcache.oncrpc4j.rpc.OncRpcSvcBuilder;
import org.dcache.oncrpc4j.rpc.RpcAuthTypeNone;
import org.dcache.oncrpc4j.rpc.RpcCall;
import org.dcache.oncrpc4j.rpc.RpcTransport;
import org.dcache.oncrpc4j.rpc.net.IpProtocolType;
import org.dcache.oncrpc4j.xdr.XdrVoid;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * An unmodified oncrpc4j program ({@link EchoProgram}) served over the bridge on an
 * in-memory RPC-over-RDMA pair, and the same program on oncrpc4j's own TCP service: the
 * same client code gets the same answers from both.
 */
class OncRpc4jBridgeTest {
    static final List<String> EXPECTED = List.of(
            "null",
            "echo 100 bytes",
            "echo 60000 bytes",
            "whoami 1000/100/[100, 200]",
            "OncRpcAcceptedException: GARBAGE_ARGS",
            "OncRpcAcceptedException: SYSTEM",
            "OncRpcAcceptedException: SYSTEM",
            "OncRpcRejectedException: AUTH_ERROR",
            "OncRpcAcceptedException: PROG_MISMATCH",
            "OncRpcAcceptedException: PROC_UNAVAIL",
            "OncRpcAcceptedException: PROG_UNAVAIL",
            "OncRpcAcceptedException: PROG_UNAVAIL",
            "callback [5, 4, 3, 2, 1]",
            "future 60000 bytes",
            "handler 7 bytes",
            "handler failed OncRpcAcceptedException: SYSTEM");

    private final EchoProgram program = new EchoProgram();
    private OncRpcRdmaSvc svc;
    private OncRpcRdmaSvc callbacks;
    private InMemoryPair pair;
    private RdmaRpcTransport client;

    @BeforeEach
    void open() throws Exception {
        // the one change from an oncrpc4j server: OncRpcRdmaSvcBuilder for OncRpcSvcBuilder
        svc = new OncRpcRdmaSvcBuilder().withWorkerThreadIoStrategy().withWorkerThreadPoolSize(8).build();
        svc.register(PROGRAM, program);
        callbacks = new OncRpcRdmaSvcBuilder().withRpcService(CB_PROGRAM, callbackService()).build();
        pair = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(4).build(), svc.callHandler());
        pair.client().enableBackchannel(callbacks.callHandler()).get(5, TimeUnit.SECONDS);
        client = new RdmaRpcTransport(pair.client(), null, new InetSocketAddress(InetAddress.getLoopbackAddress(),
                RpcRdmaOptions.DEFAULT_PORT), 256 * 1024);
    }

    @AfterEach
    void close() {
        program.release.countDown();
        pair.close();
        client.close();
        svc.stop();
        callbacks.stop();
    }

    @Test
    void programAnswersOverRdmaAsOverOncRpc4jTcp() throws Exception {
        List<String> rdma = Scenarios.run(client);
        List<String> tcp;
        EchoProgram tcpProgram = new EchoProgram();
        OncRpcSvc tcpSvc = new OncRpcSvcBuilder().withTCP().withoutAutoPublish().withBindAddress("127.0.0.1")
                .withPort(0).withWorkerThreadIoStrategy().withServiceName("echo-tcp").build();
        tcpSvc.register(PROGRAM, tcpProgram);
        tcpSvc.start();
        try (OncRpcClient c = OncRpcClient.newBuilder().withTCP().withWorkerThreadIoStrategy()
                .withRpcService(CB_PROGRAM, callbackService()).build(tcpSvc.getInetSocketAddress(IpProtocolType.TCP))) {
            tcp = Scenarios.run(c.connect());
        } finally {
            tcpProgram.release.countDown();
            tcpSvc.stop();
        }
        assertEquals(EXPECTED, rdma, "over the bridge");
        assertEquals(tcp, rdma, "the bridge answers as oncrpc4j's TCP service does");

        // the 60 KB results went through the caller's Reply chunks, the program unaware
        assertEquals(2, pair.server().stats().replyChunksUsed(), "replies sent through a Reply chunk");
        assertEquals(2, pair.client().stats().repliesThroughReplyChunk(), "replies received through one");
        assertIdle();
    }

    @Test
    void theProgramSeesThePeersAddress() throws Exception {
        OncRpcProgram whoCalls = new OncRpcProgram(0x20000124, 1);
        AtomicReference<InetSocketAddress> seen = new AtomicReference<>();
        svc.register(whoCalls, call -> {
            seen.set(call.getTransport().getRemoteSocketAddress());
            call.reply(XdrVoid.XDR_VOID);
        });
        new RpcCall(whoCalls.getNumber(), whoCalls.getVersion(), new RpcAuthTypeNone(), client)
                .call(1, XdrVoid.XDR_VOID, XdrVoid.XDR_VOID, 5, TimeUnit.SECONDS);
        assertEquals(InMemoryPair.ADDRESS, seen.get(), "the client's address, as the transport knows it");
    }

    @Test
    void timeoutLeavesNothingBehind() throws Exception {
        assertEquals("timeout", Scenarios.timeout(client));
        assertTrue(client.getReplyQueue().getPendingRequests().isEmpty(), "the timed-out call is forgotten");
        program.release.countDown(); // its late reply arrives and is dropped
        assertIdle();
        assertEquals("echo 3 bytes", Scenarios.echo(new RpcCall(PROG, VERS, new RpcAuthTypeNone(), client),
                Scenarios.pattern(3)));
    }

    @Test
    void manyConcurrentCalls() throws Exception {
        RpcCall call = new RpcCall(PROG, VERS, new RpcAuthTypeNone(), client);
        List<CompletableFuture<Blob>> futures = new ArrayList<>();
        List<byte[]> sent = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            byte[] b = Scenarios.pattern(i % 10 == 0 ? 10_000 + i : i);
            sent.add(b);
            // backward calls among them only on verbs: the in-memory wire delivers a message on
            // the sending thread, under its send lock, where a concurrent backward call deadlocks
            futures.add(call.call(ECHO, new Blob(b), Blob.class));
        }
        for (int i = 0; i < futures.size(); i++) {
            byte[] expected = sent.get(i);
            assertEquals(Scenarios.check(expected, expected),
                    Scenarios.check(expected, futures.get(i).get(10, TimeUnit.SECONDS).bytes), "call " + i);
        }
        assertIdle();
    }

    /** Every credit, receive buffer and waiting call back where it was. */
    private void assertIdle() throws InterruptedException {
        await(() -> pair.client().outstandingCalls() == 0 && pair.server().peerOutstandingCalls() == 0
                && pair.server().outstandingCalls() == 0 && pair.client().peerOutstandingCalls() == 0
                && pair.client().heldReceives() == 0 && pair.server().heldReceives() == 0);
        assertEquals(0, pair.client().outstandingCalls(), "client calls outstanding");
        assertEquals(0, pair.server().peerOutstandingCalls(), "calls unanswered on the server");
        assertEquals(0, pair.server().outstandingCalls(), "backward calls outstanding");
        assertEquals(0, pair.client().peerOutstandingCalls(), "backward calls unanswered on the client");
        assertEquals(0, pair.client().heldReceives(), "receive buffers held on the client");
        assertEquals(0, pair.server().heldReceives(), "receive buffers held on the server");
        assertTrue(client.getReplyQueue().getPendingRequests().isEmpty(), "oncrpc4j calls waiting");
    }

    private static void await(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
    }
}
