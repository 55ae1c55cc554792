package org.rpcrdma.oncrpc4j;

import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.dcache.oncrpc4j.rpc.OncRpcProgram;
import org.dcache.oncrpc4j.rpc.RpcCall;
import org.dcache.oncrpc4j.rpc.RpcDispatchable;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * Builds an {@link OncRpcRdmaSvc}, in the shape of oncrpc4j's {@code OncRpcSvcBuilder}
 * (the settings that mean something on RDMA; TCP/UDP, TLS, portmap and GSS ones do not).
 * Programs run on a worker pool by default, as with oncrpc4j's worker-thread strategy.
 */
public final class OncRpcRdmaSvcBuilder {
    private int port = RpcRdmaOptions.DEFAULT_PORT;
    private String bindAddress = "0.0.0.0";
    private RpcRdmaOptions options = RpcRdmaOptions.defaults();
    private boolean sameThread;
    private int workerThreads = Runtime.getRuntime().availableProcessors();
    private ExecutorService workers;
    private Consumer<RpcCall> interceptor;
    private String serviceName = "OncRpcRdmaSvc";
    private final Map<OncRpcProgram, RpcDispatchable> programs = new HashMap<>();

    /** The port to listen on (default 20049, RFC 8267 §6); 0 for any free one. */
    public OncRpcRdmaSvcBuilder withPort(int port) {
        this.port = port;
        return this;
    }

    public OncRpcRdmaSvcBuilder withBindAddress(String address) {
        this.bindAddress = Objects.requireNonNull(address, "address");
        return this;
    }

    /** Transport settings (inline threshold, credits, backward credits, timeouts). */
    public OncRpcRdmaSvcBuilder withRdmaOptions(RpcRdmaOptions options) {
        this.options = Objects.requireNonNull(options, "options");
        return this;
    }

    /** Programs run on the transport's completion thread: only for programs that never block. */
    public OncRpcRdmaSvcBuilder withSameThreadIoStrategy() {
        this.sameThread = true;
        return this;
    }

    public OncRpcRdmaSvcBuilder withWorkerThreadIoStrategy() {
        this.sameThread = false;
        return this;
    }

    public OncRpcRdmaSvcBuilder withWorkerThreadPoolSize(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("worker thread pool size " + threads + " < 1");
        }
        this.workerThreads = threads;
        return this;
    }

    /** Programs run on {@code executor} (not shut down by the service). */
    public OncRpcRdmaSvcBuilder withWorkerThreadExecutionService(ExecutorService executor) {
        this.workers = Objects.requireNonNull(executor, "executor");
        return this;
    }

    public OncRpcRdmaSvcBuilder withServiceName(String name) {
        this.serviceName = Objects.requireNonNull(name, "name");
        return this;
    }

    /** Sees each call before its program does. */
    public OncRpcRdmaSvcBuilder withCallInterceptor(Consumer<RpcCall> interceptor) {
        this.interceptor = interceptor;
        return this;
    }

    public OncRpcRdmaSvcBuilder withRpcService(OncRpcProgram program, RpcDispatchable service) {
        programs.put(Objects.requireNonNull(program, "program"), Objects.requireNonNull(service, "service"));
        return this;
    }

    public OncRpcRdmaSvc build() {
        ExecutorService pool = workers;
        boolean owns = false;
        if (!sameThread && pool == null) {
            AtomicInteger n = new AtomicInteger();
            String name = serviceName;
            pool = Executors.newFixedThreadPool(workerThreads,
                    r -> Thread.ofPlatform().daemon().name(name + "-worker-" + n.incrementAndGet()).unstarted(r));
            owns = true;
        }
        return new OncRpcRdmaSvc(new InetSocketAddress(bindAddress, port), options, sameThread ? null : pool, owns,
                interceptor, programs, serviceName);
    }
}
