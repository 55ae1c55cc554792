package org.rpcrdma.transport;

import java.util.ArrayList;
import java.util.List;
import org.rpcrdma.bindings.IbvCalls;
import org.rpcrdma.transport.verbs.Device;
import org.rpcrdma.transport.verbs.EventChannel;

/**
 * Whether this JVM can use RDMA here, and if not, why (Netty's {@code IoUring} shape):
 * native access is enabled for the transport's modules, libibverbs and librdmacm load, an
 * RDMA device has an active port, and the RDMA connection manager is there. Checked once,
 * when this class is first used; an endpoint on a host where it says unavailable fails
 * with the {@link NativeFailureException} of the first call that cannot work.
 *
 * <pre>{@code
 * if (!Rdma.isAvailable()) {
 *     System.err.println("no RDMA: " + Rdma.unavailabilityCause().getMessage());
 * }
 * }</pre>
 */
public final class Rdma {
    private static final Throwable UNAVAILABILITY_CAUSE = probe();

    private Rdma() {
    }

    /** True when RDMA can be used from this JVM on this host. */
    public static boolean isAvailable() {
        return UNAVAILABILITY_CAUSE == null;
    }

    /** Why RDMA cannot be used here (its message says what to do), or null when it can. */
    public static Throwable unavailabilityCause() {
        return UNAVAILABILITY_CAUSE;
    }

    /**
     * @throws RpcRdmaException with {@link #unavailabilityCause()} as its cause, when RDMA
     *         cannot be used here
     */
    public static void ensureAvailability() {
        if (UNAVAILABILITY_CAUSE != null) {
            throw new RpcRdmaException("RDMA is not available: " + UNAVAILABILITY_CAUSE.getMessage(),
                    UNAVAILABILITY_CAUSE);
        }
    }

    private static Throwable probe() {
        // First, before any restricted method runs: without native access the JDK warns
        // (or, with --illegal-native-access=deny, refuses) at the first one.
        Throwable denied = nativeAccess(IbvCalls.class.getModule(), Rdma.class.getModule());
        if (denied != null) {
            return denied;
        }
        try {
            List<String> devices = Device.list();
            if (devices.isEmpty()) {
                return new RpcRdmaException("no RDMA device: libibverbs lists none (the kernel has no RDMA"
                        + " support, or no device is configured, e.g. Soft-RoCE with 'rdma link add')");
            }
            List<String> ports = new ArrayList<>();
            String active = null;
            for (String name : devices) {
                try (Device d = Device.open(name)) {
                    for (int port = 1; port <= d.portCount() && active == null; port++) {
                        Device.PortAttributes a = d.queryPort(port);
                        ports.add(name + " port " + port + " state " + a.state());
                        if (a.active()) {
                            active = name;
                        }
                    }
                }
            }
            if (active == null) {
                return new RpcRdmaException("no RDMA device has an active port (IBV_PORT_ACTIVE is state 4): "
                        + String.join(", ", ports));
            }
            // librdmacm: loads, and /dev/infiniband/rdma_cm opens
            new EventChannel().close();
            return null;
        } catch (NativeFailureException e) {
            return e;
        } catch (LinkageError | RuntimeException e) {
            // a library that does not load fails the generated bindings' class initialisation
            return new RpcRdmaException("libibverbs or librdmacm cannot be used: " + e, e);
        }
    }

    private static Throwable nativeAccess(Module... modules) {
        List<String> denied = new ArrayList<>();
        for (Module m : modules) {
            if (!m.isNativeAccessEnabled()) {
                String name = m.isNamed() ? m.getName() : "ALL-UNNAMED";
                if (!denied.contains(name)) {
                    denied.add(name);
                }
            }
        }
        return denied.isEmpty() ? null : new RpcRdmaException("native access is not enabled for "
                + String.join(" and ", denied) + ": run java with --enable-native-access=" + String.join(",", denied));
    }
}
