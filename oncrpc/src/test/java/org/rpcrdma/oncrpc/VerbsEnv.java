package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.verbs.Device;
import org.rpcrdma.transport.verbs.LiveResources;

/**
 * What this module's verbs tests need from the machine, found as scripts/verbs-tests
 * describes (RPCRDMA_TEST_IP or RDMA_VM_IP, else the IPv4 address of the first device's
 * netdev); a missing device FAILS, it is never a skip.
 */
public final class VerbsEnv {
    private VerbsEnv() {}

    /** Generous connect timeout: the first connect in a fresh guest JVM is slow under TCG. */
    public static final RpcRdmaOptions OPTS = RpcRdmaOptions.builder().connectTimeoutMillis(30_000).build();

    /** The IPv4 address to listen and connect on. */
    public static InetAddress address() throws Exception {
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
        for (InetAddress a : java.util.Collections.list(NetworkInterface.getByName(netdev).getInetAddresses())) {
            if (a instanceof Inet4Address) {
                return a;
            }
        }
        return fail("netdev " + netdev + " has no IPv4 address");
    }

    /** Closes {@code endpoints} (nulls skipped) in order and fails if a verbs object is left open. */
    public static void closeAndCheckNothingLeft(AutoCloseable... endpoints) throws Exception {
        for (AutoCloseable e : endpoints) {
            if (e != null) {
                e.close();
            }
        }
        waitFor(() -> LiveResources.total() == 0, 5_000);
        assertEquals(0, LiveResources.total(), () -> "verbs objects left open: " + LiveResources.snapshot());
    }

    /** Waits up to {@code millis} for {@code cond}. */
    public static boolean waitFor(BooleanSupplier cond, long millis) throws InterruptedException {
        long end = System.nanoTime() + millis * 1_000_000;
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }
}
