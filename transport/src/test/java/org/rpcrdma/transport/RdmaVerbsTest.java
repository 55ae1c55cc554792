package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link Rdma} where there is a device with an active port (Soft-RoCE in the guest): available. */
@Tag("verbs")
class RdmaVerbsTest {

    @Test
    void availableWithADeviceWithAnActivePort() {
        assertNull(Rdma.unavailabilityCause(), () -> "unavailable: " + Rdma.unavailabilityCause());
        assertTrue(Rdma.isAvailable());
        Rdma.ensureAvailability(); // throws when unavailable
    }
}
