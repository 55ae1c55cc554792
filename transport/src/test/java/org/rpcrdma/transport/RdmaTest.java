package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link Rdma} on this host, whose kernel has no RDMA: unavailable, with a cause that says
 * so; and, in a JVM without {@code --enable-native-access}, unavailable for that reason,
 * before any restricted method runs (so the JDK prints no warning).
 */
class RdmaTest {

    @Test
    void unavailableOnAHostWithoutRdmaAndSaysWhy() {
        assertFalse(Rdma.isAvailable());
        Throwable cause = Rdma.unavailabilityCause();
        assertInstanceOf(RpcRdmaException.class, cause);
        assertTrue(cause.getMessage().startsWith("no RDMA device: libibverbs lists none"), cause.getMessage());
        RpcRdmaException e = assertThrows(RpcRdmaException.class,
                Rdma::ensureAvailability);
        assertSame(cause, e.getCause());
        assertEquals("RDMA is not available: " + cause.getMessage(), e.getMessage());
    }

    @Test
    void unavailableWithoutNativeAccessAndSaysWhichFlag() throws Exception {
        Path classes = Path.of("target/classes").toAbsolutePath();
        Path bindings = Path.of("../bindings/target/classes").toAbsolutePath().normalize();
        Path testClasses = Path.of("target/test-classes").toAbsolutePath();
        assertTrue(Files.isDirectory(classes) && Files.isDirectory(bindings), "run from the transport module");
        String javaCmd = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(List.of(javaCmd,
                "-p", classes + File.pathSeparator + bindings,
                "--patch-module", "org.rpcrdma.transport=" + testClasses,
                "-m", "org.rpcrdma.transport/org.rpcrdma.transport.RdmaTest$PrintCause")).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child JVM timed out");
        assertEquals(0, p.exitValue(), out + err);
        assertEquals("native access is not enabled for org.rpcrdma.bindings and org.rpcrdma.transport: run java"
                + " with --enable-native-access=org.rpcrdma.bindings,org.rpcrdma.transport", out.strip());
        assertFalse(err.contains("WARNING"), "the check ran a restricted method:\n" + err);
    }

    /** The child JVM's main: prints the cause. */
    static final class PrintCause {
        public static void main(String[] args) {
            System.out.println(Rdma.isAvailable() ? "available" : Rdma.unavailabilityCause().getMessage());
        }
    }
}
