package org.rpcrdma.oncrpc4j;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.dcache.oncrpc4j.rpc.OncRpcProgram;
import org.dcache.oncrpc4j.rpc.RpcCall;
import org.dcache.oncrpc4j.rpc.RpcDispatchable;
import org.rpcrdma.transport.CallHandler;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.RpcRdmaServer;

/**
 * Serves oncrpc4j programs over RPC-over-RDMA: the registrations of oncrpc4j's
 * {@code OncRpcSvc} ({@link #register}, {@link #unregister}, {@link #setPrograms}),
 * {@link #start} and {@link #stop}; built by {@link OncRpcRdmaSvcBuilder}. Each call reaches
 * its {@link RpcDispatchable} as an oncrpc4j {@link RpcCall}; its transport answers that call
 * and carries the program's own calls back to the client as backward calls (RFC 8167).
 */
public final class OncRpcRdmaSvc {
    private final Map<OncRpcProgram, RpcDispatchable> programs = new ConcurrentHashMap<>();
    private final Map<Connection, RdmaRpcTransport> transports = new ConcurrentHashMap<>();
    private final InetSocketAddress bind;
    private final RpcRdmaOptions options;
    private final ExecutorService workers;
    private final boolean ownsWorkers;
    private final CallHandler handler;
    private final String name;
    private volatile RpcRdmaServer server;

    OncRpcRdmaSvc(InetSocketAddress bind, RpcRdmaOptions options, ExecutorService workers, boolean ownsWorkers,
            Consumer<RpcCall> interceptor, Map<OncRpcProgram, RpcDispatchable> initial, String name) {
        this.bind = bind;
        this.options = options;
        this.workers = workers;
        this.ownsWorkers = ownsWorkers;
        this.name = name;
        programs.putAll(initial);
        CallHandler dispatcher = new RpcCallDispatcher(programs, this::transport, interceptor);
        // programs may block (a backward call waits for its reply): not on the completion thread
        this.handler = workers == null ? dispatcher : CallHandler.onExecutor(workers, dispatcher);
    }

    /** Serves {@code prog} (program and version) with {@code handler} from now on. */
    public void register(OncRpcProgram prog, RpcDispatchable handler) {
        programs.put(Objects.requireNonNull(prog, "prog"), Objects.requireNonNull(handler, "handler"));
    }

    public void unregister(OncRpcProgram prog) {
        programs.remove(prog);
    }

    /** Adds {@code services} to the registered programs. */
    public void setPrograms(Map<OncRpcProgram, RpcDispatchable> services) {
        programs.putAll(services);
    }

    /** Listens for RPC-over-RDMA connections on the builder's address and port. */
    public synchronized void start() {
        if (server != null) {
            throw new IllegalStateException(this + " is started already");
        }
        server = RpcRdmaServer.listen(bind, options, handler, c -> forgetClosed());
    }

    /**
     * The handler that serves these programs on connections the caller makes itself (an
     * {@link org.rpcrdma.transport.InMemoryPair}, or a client that serves backward calls).
     */
    public CallHandler callHandler() {
        return handler;
    }

    /** The oncrpc4j transport of {@code c}: calls made on it go to that peer. */
    public RdmaRpcTransport transport(Connection c) {
        return transports.computeIfAbsent(c, k -> new RdmaRpcTransport(k, getInetSocketAddress(), k.remoteAddress(), 0));
    }

    /** The address listened on (its port once started), as {@code OncRpcSvc.getInetSocketAddress}. */
    public InetSocketAddress getInetSocketAddress() {
        RpcRdmaServer s = server;
        return s == null ? bind : new InetSocketAddress(bind.getAddress(), s.port());
    }

    public void stop() {
        stop(0, TimeUnit.SECONDS);
    }

    /** Stops listening, closes the connections, and waits up to the grace period for running calls. */
    public synchronized void stop(long gracePeriod, TimeUnit unit) {
        RpcRdmaServer s = server;
        server = null;
        if (s != null) {
            s.close();
        }
        transports.values().forEach(RdmaRpcTransport::close);
        transports.clear();
        if (ownsWorkers) {
            workers.shutdown();
            try {
                workers.awaitTermination(gracePeriod, unit);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            workers.shutdownNow();
        }
    }

    public String getName() {
        return name;
    }

    private void forgetClosed() {
        transports.entrySet().removeIf(e -> {
            if (e.getKey().isOpen()) {
                return false;
            }
            e.getValue().close();
            return true;
        });
    }

    @Override
    public String toString() {
        return "OncRpcRdmaSvc " + name + " on " + getInetSocketAddress();
    }
}
