package org.rpcrdma.bench.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.rpcrdma.transport.verbs.Access;
import org.rpcrdma.transport.verbs.CmEvent;
import org.rpcrdma.transport.verbs.CmId;
import org.rpcrdma.transport.verbs.CompletionQueue;
import org.rpcrdma.transport.verbs.ConnectionParameters;
import org.rpcrdma.transport.verbs.Device;
import org.rpcrdma.transport.verbs.EventChannel;
import org.rpcrdma.transport.verbs.MemoryRegion;
import org.rpcrdma.transport.verbs.ProtectionDomain;
import org.rpcrdma.transport.verbs.QueuePair;
import org.rpcrdma.transport.verbs.QueuePairCapabilities;
import org.rpcrdma.transport.verbs.RecvBatch;
import org.rpcrdma.transport.verbs.SendBatch;
import org.rpcrdma.transport.verbs.WorkCompletions;

/**
 * Raw-verbs Send round trip against message size (the inline threshold decides how big an
 * inline RPC-over-RDMA message can be, RFC 8166 §3.3.2), on one RC connection between two
 * rdma_cm ids on one device. One thread drives both ends and busy-polls both CQs, so the
 * number is the verbs and device path alone, like ib_send_lat (which reports half of it).
 *
 * <p>Two ways to build the Send, the choice RFC 8166 leaves to the sender:
 * <ul>
 *   <li>{@code copy}: the 28-byte transport header and the RPC message are copied into one
 *       registered buffer, one SGE (what {@code Connection} does today);
 *   <li>{@code gather}: the header from its own registered buffer and the RPC message
 *       from where it already is (registered), two SGEs, no copy.
 * </ul>
 * Needs an RDMA device: the address comes from {@code -Drpcrdma.ip} or RDMA_VM_IP /
 * RPCRDMA_TEST_IP ({@code scripts/bench} runs it in the Soft-RoCE guest).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class SendLatencyBenchmark {
    static final int HEADER = 28; // RDMA_MSG with three empty chunk lists

    /** Bytes in the Send: header + RPC message, i.e. the inline threshold it needs. */
    @Param({"64", "1024", "4096", "16384"})
    public int size;

    @Param({"copy", "gather"})
    public String mode;

    private Pair pair;
    private boolean gather;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        pair = new Pair(address(), size);
        gather = mode.equals("gather");
        pair.postServerRecv();
        pair.postClientRecv();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pair.close();
    }

    /** Client Send → server receive → server Send back → client receive, both CQs busy-polled. */
    @Benchmark
    public int roundTrip() {
        Pair p = pair;
        p.send.clear();
        if (gather) {
            p.send.send(1, p.clientHdrMr.lkey(), p.clientHdrMr.address(), HEADER, p.flags());
            p.send.addSge(p.clientMsgMr.lkey(), p.clientMsgMr.address(), size - HEADER);
        } else {
            MemorySegment.copy(p.clientHdrMr.segment(), 0, p.clientSendMr.segment(), 0, HEADER);
            MemorySegment.copy(p.userMessage, 0, p.clientSendMr.segment(), HEADER, size - HEADER);
            p.send.send(1, p.clientSendMr.lkey(), p.clientSendMr.address(), size, p.flags());
        }
        p.clientQp.postSend(p.send);
        int got = p.awaitRecv(p.serverCq);
        p.postServerRecv();
        p.send.clear();
        p.send.send(2, p.serverMr.lkey(), p.serverMr.address(), size, p.flags()); // echo from the receive buffer
        p.serverQp.postSend(p.send);
        got += p.awaitRecv(p.clientCq);
        p.postClientRecv();
        return got;
    }

    static InetAddress address() throws Exception {
        String ip = System.getProperty("rpcrdma.ip");
        for (String env : new String[] {"RDMA_VM_IP", "RPCRDMA_TEST_IP"}) {
            if (ip == null || ip.isEmpty()) {
                ip = System.getenv(env);
            }
        }
        if (ip == null || ip.isEmpty()) {
            throw new IllegalStateException("no RDMA address: set -Drpcrdma.ip, RDMA_VM_IP or RPCRDMA_TEST_IP"
                    + " (scripts/bench runs this in the Soft-RoCE guest)");
        }
        return InetAddress.getByName(ip);
    }

    /** Two connected RC QPs on one device, unsignalled Sends, one receive each posted at a time. */
    static final class Pair implements AutoCloseable {
        final Arena arena = Arena.ofShared();
        final EventChannel sch = new EventChannel();
        final EventChannel cch = new EventChannel();
        final SendBatch send = new SendBatch(1, 2);
        final RecvBatch recv = new RecvBatch(1);
        final WorkCompletions wc = new WorkCompletions(4);
        final int size;
        CmId listener;
        CmId server;
        CmId client;
        ProtectionDomain spd;
        ProtectionDomain cpd;
        CompletionQueue serverCq;
        CompletionQueue clientCq;
        QueuePair serverQp;
        QueuePair clientQp;
        MemoryRegion serverMr;
        MemoryRegion clientRecvMr;
        MemoryRegion clientSendMr;
        MemoryRegion clientHdrMr;
        MemoryRegion clientMsgMr;
        MemorySegment userMessage;
        int sends;

        Pair(InetAddress ip, int size) {
            this.size = size;
            boolean ok = false;
            try {
                listener = sch.createId();
                listener.bind(new InetSocketAddress(ip, 0));
                listener.listen(1);
                client = cch.createId();
                client.resolveAddress(null, new InetSocketAddress(ip, listener.localPort()), 5000);
                expect(cch, CmEvent.Type.ADDR_RESOLVED);
                client.resolveRoute(5000);
                expect(cch, CmEvent.Type.ROUTE_RESOLVED);
                Device cd = client.device();
                cpd = cd.allocateProtectionDomain();
                clientCq = cd.createCompletionQueue(64, null);
                QueuePairCapabilities caps = new QueuePairCapabilities(32, 4, 2, 1, 0);
                clientQp = client.createQueuePair(cpd, clientCq, clientCq, null, caps);
                clientRecvMr = cpd.register(arena.allocate(size, 4096), Access.LOCAL_WRITE);
                clientSendMr = cpd.register(arena.allocate(size, 4096), Access.LOCAL_WRITE);
                clientHdrMr = cpd.register(arena.allocate(HEADER, 64), Access.LOCAL_WRITE);
                clientMsgMr = cpd.register(arena.allocate(Math.max(1, size - HEADER), 4096), Access.LOCAL_WRITE);
                userMessage = clientMsgMr.segment(); // copy mode copies from here; gather sends it in place
                for (long i = 0; i < userMessage.byteSize(); i++) {
                    userMessage.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) i);
                }
                client.connect(ConnectionParameters.defaults());
                CmEvent req = expect(sch, CmEvent.Type.CONNECT_REQUEST);
                server = req.id();
                Device sd = server.device();
                spd = sd.allocateProtectionDomain();
                serverCq = sd.createCompletionQueue(64, null);
                serverQp = server.createQueuePair(spd, serverCq, serverCq, null, caps);
                serverMr = spd.register(arena.allocate(size, 4096), Access.LOCAL_WRITE);
                server.accept(ConnectionParameters.defaults());
                expect(cch, CmEvent.Type.ESTABLISHED);
                expect(sch, CmEvent.Type.ESTABLISHED);
                ok = true;
            } finally {
                if (!ok) {
                    close();
                }
            }
        }

        private static CmEvent expect(EventChannel ch, CmEvent.Type t) {
            CmEvent ev = ch.poll(10_000);
            if (ev == null || ev.type() != t) {
                throw new IllegalStateException("expected " + t + ", got " + ev);
            }
            return ev;
        }

        /** Selective signalling: one Send in 16 is signalled, so send queue entries are reclaimed. */
        int flags() {
            return (++sends & 15) == 0 ? SendBatch.SIGNALED : 0;
        }

        void postServerRecv() {
            recv.clear();
            recv.add(10, serverMr.lkey(), serverMr.address(), size);
            serverQp.postRecv(recv);
        }

        void postClientRecv() {
            recv.clear();
            recv.add(11, clientRecvMr.lkey(), clientRecvMr.address(), size);
            clientQp.postRecv(recv);
        }

        /** Busy-polls {@code cq} until a receive completes; returns its byte count. */
        int awaitRecv(CompletionQueue cq) {
            while (true) {
                int n = cq.poll(wc);
                for (int i = 0; i < n; i++) {
                    if (wc.status(i) != WorkCompletions.SUCCESS) {
                        throw new IllegalStateException("completion " + WorkCompletions.statusString(wc.status(i)));
                    }
                    if (wc.opcode(i) == WorkCompletions.OPCODE_RECV) {
                        return wc.byteLen(i);
                    }
                }
                Thread.onSpinWait();
            }
        }

        @Override
        public void close() {
            for (AutoCloseable c : new AutoCloseable[] {clientQp, serverQp, clientCq, serverCq, clientRecvMr, clientSendMr,
                    clientHdrMr, clientMsgMr, serverMr, cpd, spd, client, server, listener, cch, sch, wc, send, recv}) {
                if (c != null) {
                    try {
                        c.close();
                    } catch (Exception e) {
                        // closing in order; keep going so the rest is released
                    }
                }
            }
            arena.close();
        }
    }
}
