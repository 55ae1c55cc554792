package org.rpcrdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;

/**
 * Base of the tests that need a real RDMA device: finds it (RDMA_VM_DEV, else the first
 * device) and the IPv4 address of its netdev (RDMA_VM_IP, else from sysfs), and FAILS when
 * there is none: a verbs test that silently skips proves nothing. Every test must leave
 * no verbs object open.
 */
@Tag("verbs")
abstract class VerbsTestBase {
    static final long TIMEOUT_MS = 10_000;

    static String deviceName() {
        String env = System.getenv("RDMA_VM_DEV");
        if (env != null && !env.isEmpty()) {
            return env;
        }
        List<String> names = Device.list();
        if (names.isEmpty()) {
            fail("no RDMA device: run the verbs tests in the Soft-RoCE guest (scripts/rdma-vm)");
        }
        return names.get(0);
    }

    static InetAddress deviceAddress() {
        try {
            String env = System.getenv("RDMA_VM_IP");
            if (env != null && !env.isEmpty()) {
                return InetAddress.getByName(env);
            }
            Path ndev = Path.of("/sys/class/infiniband", deviceName(), "ports/1/gid_attrs/ndevs/0");
            String netdev = Files.readString(ndev).trim();
            NetworkInterface nif = NetworkInterface.getByName(netdev);
            if (nif != null) {
                for (InetAddress a : java.util.Collections.list(nif.getInetAddresses())) {
                    if (a instanceof Inet4Address) {
                        return a;
                    }
                }
            }
            return fail("netdev " + netdev + " of " + deviceName() + " has no IPv4 address");
        } catch (IOException e) {
            return fail("cannot find the IPv4 address of " + deviceName() + ": " + e);
        }
    }

    @AfterEach
    void nothingLeaked() {
        assertEquals(0, LiveResources.total(), () -> "verbs objects left open: " + LiveResources.snapshot());
    }

    /** Polls {@code cq} until a completion arrives (busy-ish: the guest is slow, 10 s limit). */
    static int pollOne(CompletionQueue cq, WorkCompletions wc) {
        long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
        while (System.nanoTime() < deadline) {
            int n = cq.poll(wc);
            if (n > 0) {
                return n;
            }
            Thread.onSpinWait();
        }
        return fail("no completion within " + TIMEOUT_MS + " ms");
    }

    /** Polls one completion and asserts it succeeded with {@code opcode}. */
    static void expectSuccess(CompletionQueue cq, WorkCompletions wc, int opcode) {
        assertEquals(1, pollOne(cq, wc));
        assertEquals(WorkCompletions.SUCCESS, wc.status(0), () -> "status " + WorkCompletions.statusString(wc.status(0)));
        assertEquals(opcode, wc.opcode(0));
    }

    static CmEvent expectEvent(EventChannel ch, CmEvent.Type type) {
        CmEvent ev = ch.poll(TIMEOUT_MS);
        if (ev == null) {
            fail("no rdma_cm event within " + TIMEOUT_MS + " ms, expected " + type);
        }
        assertEquals(type, ev.type(), () -> "unexpected " + ev);
        return ev;
    }

    static void assertStartsWith(byte[] expected, byte[] actual) {
        assertTrue(actual.length >= expected.length, () -> "only " + actual.length + " bytes arrived");
        assertEquals(java.util.HexFormat.of().formatHex(expected),
                java.util.HexFormat.of().formatHex(actual, 0, expected.length));
    }

}
