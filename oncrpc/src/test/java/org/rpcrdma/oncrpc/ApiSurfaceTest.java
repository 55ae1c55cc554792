package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.module.ModuleDescriptor;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** What the typed layer's users can reach: its API package, not its examples or tools. */
class ApiSurfaceTest {
    @Test
    void theModuleExportsItsApiPackageOnly() {
        ModuleDescriptor d = RpcDispatcher.class.getModule().getDescriptor();
        assertTrue(d != null, "tests run on the module path");
        Set<String> exported = d.exports().stream().map(ModuleDescriptor.Exports::source).collect(Collectors.toSet());
        assertEquals(Set.of("org.rpcrdma.oncrpc"), exported, "examples and tools are not API");
    }
}
