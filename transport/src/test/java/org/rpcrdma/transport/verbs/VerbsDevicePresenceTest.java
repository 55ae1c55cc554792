package org.rpcrdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The precondition of every other verbs test: this machine has an RDMA device with an
 * ACTIVE port (rxe0 in the Soft-RoCE guest of scripts/rdma-vm, or a real HCA with
 * {@code scripts/verbs-tests --host}). Reads sysfs only, so it needs no bindings. A
 * missing device fails the test; it is never skipped.
 */
@Tag("verbs")
final class VerbsDevicePresenceTest {

    private static final Path SYSFS_IB = Path.of("/sys/class/infiniband");

    @Test
    void anRdmaDeviceHasAnActivePort() {
        assertTrue(Files.isDirectory(SYSFS_IB),
                SYSFS_IB + " does not exist: no RDMA subsystem (run the verbs tests with scripts/verbs-tests)");
        List<String> ports = portStates();
        assertFalse(ports.isEmpty(), "no RDMA device under " + SYSFS_IB);
        // sysfs port state reads e.g. "4: ACTIVE" (IB spec port states; 4 = ACTIVE)
        assertTrue(ports.stream().anyMatch(p -> p.endsWith(": ACTIVE")),
                "no RDMA port is ACTIVE: " + ports);
    }

    @Test
    void theDeviceTheRunnerNamedIsActive() {
        // scripts/verbs-tests names the device the other tests should use; it must be up.
        String device = System.getenv("RPCRDMA_TEST_DEVICE");
        assertTrue(device != null && !device.isBlank(),
                "RPCRDMA_TEST_DEVICE is not set (run the verbs tests with scripts/verbs-tests)");
        List<String> ports = portStates();
        assertTrue(ports.stream().anyMatch(p -> p.startsWith(device + "/") && p.endsWith(": ACTIVE")),
                "device " + device + " has no ACTIVE port: " + ports);
    }

    /** Every port as "device/port: state", e.g. "rxe0/1: 4: ACTIVE". */
    private static List<String> portStates() {
        List<String> out = new ArrayList<>();
        try (Stream<Path> devices = Files.list(SYSFS_IB)) {
            for (Path dev : devices.sorted().toList()) {
                Path portsDir = dev.resolve("ports");
                if (!Files.isDirectory(portsDir)) {
                    continue;
                }
                try (Stream<Path> ports = Files.list(portsDir)) {
                    for (Path port : ports.sorted().toList()) {
                        String state = Files.readString(port.resolve("state")).strip();
                        out.add(dev.getFileName() + "/" + port.getFileName() + ": " + state);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + SYSFS_IB, e);
        }
        return out;
    }
}
