package org.rpcrdma.transport.verbs;

import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/** A connected RC pair on one device through rdma_cm, with one MR of 64 KiB per side. */
final class Loopback implements AutoCloseable {
    static final int BUF = 64 * 1024;
    static final QueuePairCapabilities CAPS = new QueuePairCapabilities(16, 16, 2, 1, 64);

    final Arena arena = Arena.ofShared();
    final EventChannel serverChannel = new EventChannel();
    final EventChannel clientChannel = new EventChannel();
    CmId listener;
    CmId server;
    CmId client;
    ProtectionDomain serverPd;
    ProtectionDomain clientPd;
    CompletionChannel serverCompletions;
    CompletionQueue serverCq;
    CompletionQueue clientCq;
    QueuePair serverQp;
    QueuePair clientQp;
    MemoryRegion serverMr;
    MemoryRegion clientMr;
    final WorkCompletions wc = new WorkCompletions(8);
    final SendBatch send = new SendBatch(4, 2);
    final RecvBatch recv = new RecvBatch(4);
    byte[] privateDataAtServer;
    byte[] privateDataAtClient;

    Loopback(InetAddress ip, ConnectionParameters clientParams, ConnectionParameters serverParams, int serverMrAccess) {
        boolean ok = false;
        try {
            listener = serverChannel.createId();
            listener.bind(new InetSocketAddress(ip, 0));
            listener.listen(4);
            client = clientChannel.createId();
            client.resolveAddress(null, new InetSocketAddress(ip, listener.localPort()), 5000);
            VerbsTestBase.expectEvent(clientChannel, CmEvent.Type.ADDR_RESOLVED);
            client.resolveRoute(5000);
            VerbsTestBase.expectEvent(clientChannel, CmEvent.Type.ROUTE_RESOLVED);
            Device cdev = client.device();
            clientPd = cdev.allocateProtectionDomain();
            clientCq = cdev.createCompletionQueue(64, null);
            clientQp = client.createQueuePair(clientPd, clientCq, clientCq, null, CAPS);
            clientMr = clientPd.register(arena.allocate(BUF, 4096),
                    Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
            client.connect(clientParams);

            CmEvent req = VerbsTestBase.expectEvent(serverChannel, CmEvent.Type.CONNECT_REQUEST);
            server = req.id();
            privateDataAtServer = req.privateData();
            Device sdev = server.device();
            serverPd = sdev.allocateProtectionDomain();
            serverCompletions = sdev.createCompletionChannel();
            serverCq = sdev.createCompletionQueue(64, serverCompletions);
            serverQp = server.createQueuePair(serverPd, serverCq, serverCq, null, CAPS);
            serverMr = serverPd.register(arena.allocate(BUF, 4096), serverMrAccess);
            server.accept(serverParams);
            // The client's RTU is sent while librdmacm handles the REP inside rdma_get_cm_event
            // on the client's channel: the server sees ESTABLISHED only after that poll.
            privateDataAtClient = VerbsTestBase.expectEvent(clientChannel, CmEvent.Type.ESTABLISHED).privateData();
            VerbsTestBase.expectEvent(serverChannel, CmEvent.Type.ESTABLISHED);
            ok = true;
        } finally {
            if (!ok) {
                close();
            }
        }
    }

    Loopback(InetAddress ip) {
        this(ip, ConnectionParameters.defaults(), ConnectionParameters.defaults(),
                Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ | Access.MW_BIND);
    }

    /** Posts one receive of the server's whole buffer. */
    void serverRecv(long wrId) {
        recv.clear();
        recv.add(wrId, serverMr.lkey(), serverMr.address(), BUF);
        serverQp.postRecv(recv);
    }

    private static void closeAll(AutoCloseable... all) {
        for (AutoCloseable c : all) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }

    @Override
    public void close() {
        // QP -> CQ -> channel -> MR -> PD -> id -> event channel
        closeAll(clientQp, serverQp, clientCq, serverCq, serverCompletions, clientMr, serverMr,
                clientPd, serverPd, client, server, listener, clientChannel, serverChannel, wc, send, recv);
        arena.close();
    }
}
