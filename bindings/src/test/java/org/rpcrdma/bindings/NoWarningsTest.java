package org.rpcrdma.bindings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A bindings call in a fresh JVM on the module path, with native access enabled for
 * exactly this module, prints no warning (no "restricted method" notice, nothing else).
 */
class NoWarningsTest {

    @Test
    void bindingsCallOnTheModulePathPrintsNoWarning() throws Exception {
        Path classes = Path.of("target/classes").toAbsolutePath();
        Path testClasses = Path.of("target/test-classes").toAbsolutePath();
        assertTrue(Files.isDirectory(classes), "run from the bindings module: " + classes);
        String java = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(List.of(java,
                "--enable-native-access=org.rpcrdma.bindings",
                "-p", classes.toString(),
                "--patch-module", "org.rpcrdma.bindings=" + testClasses,
                "-m", "org.rpcrdma.bindings/org.rpcrdma.bindings.ListDevices"))
                .redirectErrorStream(false).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child JVM timed out");
        assertEquals(0, p.exitValue(), "ListDevices failed: " + out + err);
        assertTrue(out.contains("RDMA devices"), out);
        assertFalse(err.contains("WARNING"), "warnings printed:\n" + err);
        assertEquals("", err.strip(), "stderr not empty:\n" + err);
    }
}
