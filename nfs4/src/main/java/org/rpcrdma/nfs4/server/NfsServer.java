package org.rpcrdma.nfs4.server;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.nfs4.Nfs4Client;
import org.rpcrdma.oncrpc.RpcDispatcher;
import org.rpcrdma.oncrpc.RpcServerCall;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.RpcRdmaServer;

/**
 * An NFSv4.1 server (RFC 8881) of one local directory, read-write, AUTH_SYS, over
 * RPC-over-RDMA: what the Linux kernel's client mounts with
 * {@code mount -t nfs -o vers=4.1,proto=rdma,port=20049 host:/ /mnt}. COMPOUNDs are
 * decoded on the connection's thread and run on the server's threads (file I/O blocks),
 * which reply. {@link #dispatcher()} serves any transport ({@code RpcRdmaServer},
 * {@code InMemoryPair}).
 *
 * <p>{@code java -cp ... org.rpcrdma.nfs4.server.NfsServer DIR [--address IP] [--port N] [--lease SECONDS]}
 * (or {@code scripts/nfs-server}).
 */
public final class NfsServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(NfsServer.class.getName());

    private final RpcDispatcher dispatcher = new RpcDispatcher();
    private final ExecutorService workers;
    private final ScheduledExecutorService leases;
    private final ClientTable clients;
    private final Delegations delegations;
    private final OpenStates opens;
    private final CompoundExecutor executor;
    private final LocalChanges local;

    /**
     * A server of {@code root}: {@code leaseSeconds} the lease (RFC 8881 §8.3),
     * {@code inlineThreshold} the transport's (the back channel's requests must fit it),
     * {@code threads} that run COMPOUNDs.
     */
    public NfsServer(Path root, int leaseSeconds, int inlineThreshold, int threads) throws IOException {
        if (!Files.isDirectory(root)) {
            throw new IOException(root + " is not a directory");
        }
        Path real = root.toRealPath();
        FileHandles handles = new FileHandles(real, (int) System.currentTimeMillis());
        Attrs.Export export = new Attrs.Export(handles, Files.getFileStore(root), leaseSeconds, OpArgs.MAX_IO);
        delegations = new Delegations(TimeUnit.SECONDS.toNanos(leaseSeconds));
        opens = new OpenStates(delegations);
        Recalls recalls = new Recalls(delegations, new CallbackSender(5_000));
        clients = new ClientTable(TimeUnit.SECONDS.toNanos(leaseSeconds), id -> {
            opens.dropClient(id);
            delegations.dropClient(id);
        });
        byte[] verifier = ByteBuffer.allocate(Nfs4.NFS4_VERIFIER_SIZE).putLong(System.currentTimeMillis()).array();
        NamespaceHandlers names = new NamespaceHandlers(export, opens, recalls);
        executor = new CompoundExecutor(new SessionHandlers(clients, inlineThreshold, new BackChannelProbe(5_000)),
                names, new OpenHandlers(handles, opens, clients, names, delegations, recalls),
                new DataHandlers(handles, opens, recalls, verifier));
        local = new LocalChanges(real, handles, recalls);
        AtomicInteger n = new AtomicInteger();
        workers = Executors.newFixedThreadPool(threads, r -> daemon(r, "nfs-server-" + n.incrementAndGet()));
        leases = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "nfs-server-leases"));
        leases.scheduleWithFixedDelay(this::expire, leaseSeconds, Math.max(1, leaseSeconds / 4), TimeUnit.SECONDS);
        dispatcher.program(Nfs4.PROGRAM, Nfs4.VERSION).procedure(CompoundCodec.COMPOUND, this::compound);
    }

    /** The ONC RPC dispatcher serving NFS program 100003 version 4 (NULL and COMPOUND). */
    public RpcDispatcher dispatcher() {
        return dispatcher;
    }

    /** Client IDs held now (each with a lease). */
    public int clients() {
        return clients.clients();
    }

    /** Open stateids held now. */
    public int openStates() {
        return opens.size();
    }

    /** Delegations held now. */
    public int delegations() {
        return delegations.size();
    }

    /**
     * Writes {@code data} at {@code offset} of the export's file {@code path} (relative to
     * the export's root; created if missing), synced to disk. Clients' read delegations of
     * the file are recalled first (RFC 8881 §10.4.4): this blocks until they are returned,
     * or revoked a lease after the recall.
     */
    public void write(String path, long offset, ByteBuffer data) throws IOException, InterruptedException {
        local.write(path, offset, data);
    }

    /** Removes the export's file {@code path}, after recalling its delegations as {@link #write} does. */
    public void remove(String path) throws IOException, InterruptedException {
        local.remove(path);
    }

    private void compound(CompoundCodec.Args args, RpcServerCall<CompoundCodec.Result> call) {
        try {
            workers.execute(() -> call.reply(executor.run(args, call.connection())));
        } catch (RejectedExecutionException e) { // closing
            call.replySystemErr();
        }
    }

    private void expire() {
        int n = clients.expire(System.nanoTime());
        if (n > 0) {
            LOG.log(Level.INFO, "{0} client(s) did not renew their lease: their state is gone", n);
        }
    }

    @Override
    public void close() {
        leases.shutdownNow();
        workers.shutdown();
    }

    private static final int WARM_UP_TIMEOUT_MILLIS = 300_000;

    /** {@link WarmUp} through a connection of ours to {@code address}; a failure is logged, not fatal. */
    private static void warmUp(String address, int port) {
        if (new InetSocketAddress(address, port).getAddress().isAnyLocalAddress()) {
            LOG.log(Level.INFO, "no warm-up: listening on the wildcard address (give --address)");
            return;
        }
        // a cold accept takes most of a minute under emulation: the connect and calls wait
        RpcRdmaOptions o = RpcRdmaOptions.builder().backwardCredits(2)
                .connectTimeoutMillis(WARM_UP_TIMEOUT_MILLIS).callTimeoutMillis(WARM_UP_TIMEOUT_MILLIS).build();
        long t0 = System.nanoTime();
        try (Nfs4Client c = Nfs4Client.connect(new InetSocketAddress(address, port), o, CallbackSender.CREDENTIAL)) {
            int n = WarmUp.run(c, 3);
            int listed = WarmUp.local(1_000, 2);
            LOG.log(Level.INFO, "warmed up in {0} ms (a session, GETATTR, READDIR of {1} entries; {2} listed"
                    + " in memory)", (System.nanoTime() - t0) / 1_000_000, n, listed);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | IOException e) {
            LOG.log(Level.WARNING, "warm-up failed (serving anyway): {0}", e.toString());
        }
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: NfsServer DIR [--address IP] [--port N] [--lease SECONDS]");
            System.exit(2);
        }
        Path dir = Path.of(args[0]);
        String address = "0.0.0.0";
        int port = RpcRdmaOptions.DEFAULT_PORT;
        int lease = 90;
        for (int i = 1; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--address" -> address = args[i + 1];
                case "--port" -> port = Integer.parseInt(args[i + 1]);
                case "--lease" -> lease = Integer.parseInt(args[i + 1]);
                default -> {
                    System.err.println("unknown option " + args[i]);
                    System.exit(2);
                }
            }
        }
        // 32 credits of 1 MiB WRITEs and READs in flight: chunk memory for all of them
        RpcRdmaOptions o = RpcRdmaOptions.builder().chunkMemoryBytes(64L << 20).build();
        NfsServer nfs = new NfsServer(dir, lease, o.inlineThreshold(), 4);
        RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(address, port), o, nfs.dispatcher(), null);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            nfs.close();
            System.out.println("nfs-server: stopped; clients " + nfs.clients() + ", open states " + nfs.openStates()
                    + ", delegations " + nfs.delegations() + ", connections " + server.connections().size());
            System.out.println("nfs-server: stats " + server.stats().asMap());
            server.close();
        }));
        warmUp(address, server.port());
        System.out.println("nfs-server: serving " + dir.toRealPath() + " on " + address + ":" + server.port()
                + " (NFSv4.1 over RDMA, lease " + lease + " s)");
        Thread.currentThread().join();
    }
}
