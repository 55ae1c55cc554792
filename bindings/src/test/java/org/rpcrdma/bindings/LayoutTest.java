package org.rpcrdma.bindings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.PaddingLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checks every generated struct layout against the C compiler: a C program built at test
 * time against the installed rdma-core headers prints sizeof and offsetof/sizeof of every
 * field (nested structs and unions included, anonymous unions flattened as C sees them),
 * and each value must equal the jextract layout's. Getting sizes from gcc rather than
 * typing them is what Netty's epoll transport does too.
 */
class LayoutTest {

    private static final String IBVERBS = "org.rpcrdma.bindings.ffi.ibverbs.";
    private static final String RDMACM = "org.rpcrdma.bindings.ffi.rdmacm.";

    /** Java class (simple name) -> C type, for every struct/union class jextract generated. */
    private static final Map<String, String> IBVERBS_TYPES = types(
            "ibv_device", "_ibv_device_ops", "ibv_context", "ibv_context_ops", "ibv_device_attr",
            "ibv_port_attr", "union:ibv_gid", "ibv_pd", "ibv_mr", "ibv_mw", "ibv_mw_bind",
            "ibv_mw_bind_info", "ibv_comp_channel", "ibv_cq", "ibv_qp", "ibv_qp_cap",
            "ibv_qp_init_attr", "ibv_qp_attr", "ibv_ah_attr", "ibv_global_route", "ibv_srq",
            "ibv_srq_attr", "ibv_srq_init_attr", "ibv_sge", "ibv_send_wr", "ibv_recv_wr",
            "ibv_wc", "ibv_async_event", "__pthread_mutex_s", "__pthread_cond_s",
            "__pthread_internal_list");
    private static final Map<String, String> RDMACM_TYPES = types(
            "rdma_event_channel", "rdma_cm_id", "rdma_cm_event", "rdma_conn_param",
            "rdma_ud_param", "rdma_addr", "rdma_ib_addr", "rdma_route", "ibv_ah_attr",
            "ibv_global_route", "union:ibv_gid", "sockaddr", "sockaddr_in", "sockaddr_in6",
            "sockaddr_storage", "in_addr", "in6_addr");

    private static Map<String, String> types(String... names) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String n : names) {
            m.put(n.replace("union:", ""), n.startsWith("union:") ? "union " + n.substring(6) : "struct " + n);
        }
        return m;
    }

    record Field(String cType, String designator, long offset, long size) {
        String key() {
            return cType.replace(' ', ':') + (designator.isEmpty() ? "" : "." + designator);
        }
    }

    @Test
    void everyGeneratedStructMatchesGcc(@TempDir Path dir) throws Exception {
        List<Field> fields = new ArrayList<>();
        for (var e : IBVERBS_TYPES.entrySet()) {
            collect(e.getValue(), layoutOf(IBVERBS + e.getKey()), fields);
        }
        for (var e : RDMACM_TYPES.entrySet()) {
            collect(e.getValue(), layoutOf(RDMACM + e.getKey()), fields);
        }
        Map<String, long[]> fromC = compileAndRun(dir, fields);

        List<String> diffs = new ArrayList<>();
        for (Field f : fields) {
            long[] c = fromC.get(f.key());
            if (c == null) {
                diffs.add(f.key() + ": not printed by the C program");
            } else if (c[0] != f.offset() || c[1] != f.size()) {
                diffs.add(f.key() + ": C offset=" + c[0] + " size=" + c[1]
                        + ", Java offset=" + f.offset() + " size=" + f.size());
            }
        }
        if (!diffs.isEmpty()) {
            fail(diffs.size() + " layout mismatch(es) against gcc:\n  " + String.join("\n  ", diffs));
        }
        assertTrue(fields.size() > 300, "expected to check every field, checked " + fields.size());
    }

    @Test
    void everyGeneratedStructClassIsChecked() throws IOException {
        // A struct added to the argfiles must be added here too, so nothing goes unchecked.
        TreeSet<String> unchecked = new TreeSet<>();
        for (var pkg : Map.of("ibverbs", IBVERBS_TYPES, "rdmacm", RDMACM_TYPES).entrySet()) {
            Path src = Path.of("src/main/java/org/rpcrdma/bindings/ffi", pkg.getKey());
            try (Stream<Path> files = Files.list(src)) {
                files.map(p -> p.getFileName().toString().replace(".java", ""))
                        .filter(n -> !n.startsWith("IbVerbs") && !n.startsWith("RdmaCm"))
                        .filter(n -> !pkg.getValue().containsKey(n))
                        .filter(n -> !isTypedefOnly(pkg.getKey(), n))
                        .forEach(n -> unchecked.add(pkg.getKey() + "." + n));
            }
        }
        assertEquals(new TreeSet<>(), unchecked, "generated structs missing from LayoutTest");
    }

    /** jextract emits typedef classes (pthread_mutex_t) that only re-expose a checked layout. */
    private static boolean isTypedefOnly(String pkg, String name) {
        return name.endsWith("_t") || name.equals("__atomic_wide_counter");
    }

    private static GroupLayout layoutOf(String className) throws ReflectiveOperationException {
        return (GroupLayout) Class.forName(className).getMethod("layout").invoke(null);
    }

    /** Walks a layout the way C names members: anonymous unions/structs add no name. */
    private static void collect(String cType, GroupLayout root, List<Field> out) {
        out.add(new Field(cType, "", 0, root.byteSize()));
        walk(cType, "", 0, root, out);
    }

    private static void walk(String cType, String prefix, long base, GroupLayout group, List<Field> out) {
        long offset = 0;
        boolean union = group instanceof java.lang.foreign.UnionLayout;
        for (MemoryLayout m : group.memberLayouts()) {
            long at = base + (union ? 0 : offset);
            if (!union) {
                offset += m.byteSize();
            }
            if (m instanceof PaddingLayout) {
                continue;
            }
            String name = m.name().orElse("");
            boolean anonymous = name.isEmpty() || name.startsWith("$anon$");
            String designator = anonymous ? prefix : (prefix.isEmpty() ? name : prefix + "." + name);
            if (!anonymous) {
                out.add(new Field(cType, designator, at, m.byteSize()));
            }
            if (m instanceof GroupLayout g) {
                walk(cType, designator, at, g, out);
            }
        }
    }

    private static Map<String, long[]> compileAndRun(Path dir, List<Field> fields) throws Exception {
        StringBuilder c = new StringBuilder("""
                #include <stddef.h>
                #include <stdio.h>
                #include <pthread.h>
                #include <netinet/in.h>
                #include <infiniband/verbs.h>
                #include <rdma/rdma_cma.h>
                #define F(T, M, K) printf("%s %zu %zu\\n", K, offsetof(T, M), sizeof(((T *)0)->M));
                #define S(T, K) printf("%s 0 %zu\\n", K, sizeof(T));
                int main(void) {
                """);
        for (Field f : fields) {
            if (f.designator().isEmpty()) {
                c.append("  S(").append(f.cType()).append(", \"").append(f.key()).append("\")\n");
            } else {
                c.append("  F(").append(f.cType()).append(", ").append(f.designator())
                        .append(", \"").append(f.key()).append("\")\n");
            }
        }
        c.append("  return 0;\n}\n");
        Path src = dir.resolve("layouts.c");
        Path exe = dir.resolve("layouts");
        Files.writeString(src, c);
        run(List.of("gcc", "-std=gnu11", "-o", exe.toString(), src.toString()), "gcc (apt-get install gcc libibverbs-dev librdmacm-dev)");
        String output = run(List.of(exe.toString()), "the layout program");
        Map<String, long[]> result = new LinkedHashMap<>();
        for (String line : output.split("\n")) {
            String[] p = line.trim().split(" ");
            if (p.length == 3) {
                result.put(p[0], new long[] {Long.parseLong(p[1]), Long.parseLong(p[2])});
            }
        }
        return result;
    }

    private static String run(List<String> cmd, String what) throws Exception {
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new AssertionError("cannot run " + what + ": " + e.getMessage(), e);
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), what + " timed out");
        assertEquals(0, p.exitValue(), what + " failed:\n" + out);
        return out;
    }
}
