package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.MemorySegment;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.rpcrdma.xdr.Xdr;

/**
 * Replays the conformance tables ({@link ServerConformance}, {@link ClientConformance})
 * through a transport, one dynamic test per case, and applies the divergence rule: a case
 * whose outcome differs from the RFC's fails unless it is listed, and a listed case that
 * conforms fails too (the list must be kept true).
 */
final class Conformance {
    private Conformance() {}

    /** Sends one raw Call (from its XID) and returns the Reply's bytes. */
    @FunctionalInterface
    interface RoundTrip {
        byte[] call(MemorySegment rpcCall) throws Exception;
    }

    /** Heap the server may allocate for a call whose length field claims gigabytes. */
    static final long ALLOCATION_LIMIT = 1 << 20;

    private static final AtomicInteger XIDS = new AtomicInteger(0x0C0F0000);

    /**
     * The server table against {@code rt}. With {@code sameThread} the server runs on the
     * calling thread (an InMemoryPair), so what it allocated for a {@code bigClaim} case is
     * measured and must stay under {@link #ALLOCATION_LIMIT}.
     */
    static Stream<DynamicTest> server(RoundTrip rt, boolean sameThread) {
        return ServerConformance.CASES.stream().map(c -> DynamicTest.dynamicTest(c.name(), () -> {
            int xid = XIDS.incrementAndGet();
            MemorySegment msg = MemorySegment.ofArray(new byte[4 + 4 * c.call().length]);
            Xdr.putInt(msg, 0, xid);
            for (int i = 0; i < c.call().length; i++) {
                Xdr.putInt(msg, 4 + 4L * i, c.call()[i]);
            }
            long before = sameThread ? allocatedBytes() : 0;
            byte[] reply = rt.call(msg);
            long allocated = sameThread ? allocatedBytes() - before : 0;
            int[] expected = ServerConformance.cat(new int[] {xid}, c.reply());
            int[] got = words(reply);
            judge(c.name(), c.rfc(), Arrays.equals(expected, got), ServerConformance.DIVERGENCES,
                    () -> "expected " + hex(expected) + "\n     got " + hex(got));
            if (c.bigClaim() && sameThread) {
                assertTrue(allocated < ALLOCATION_LIMIT, c.name() + ": the server allocated " + allocated
                        + " bytes for a call whose length field claims gigabytes");
            }
        }));
    }

    /** The client table: {@code transport} must reach {@link ClientConformance#cannedServer()}. */
    static Stream<DynamicTest> client(org.rpcrdma.transport.RpcCaller transport) {
        OncRpcClient rpc = new OncRpcClient(transport, ClientConformance.PROG, 1);
        return java.util.stream.IntStream.range(0, ClientConformance.CASES.size()).mapToObj(i -> {
            ClientConformance.Case c = ClientConformance.CASES.get(i);
            return DynamicTest.dynamicTest(c.name(), () -> {
                AtomicInteger decodes = new AtomicInteger();
                RpcProcedure<Void, Integer> proc = new RpcProcedure<>(i, Codecs.VOID,
                        ClientConformance.countingInt(decodes));
                Object result = null;
                Throwable failure = null;
                try {
                    result = rpc.call(proc, null);
                } catch (RuntimeException e) {
                    failure = e;
                }
                String wrong = c.expect().check(result, failure);
                if (wrong == null && decodes.get() != c.decodes()) {
                    wrong = "the result codec ran " + decodes.get() + " times, the RFC allows " + c.decodes();
                }
                String w = wrong;
                judge(c.name(), c.rfc(), w == null, ClientConformance.DIVERGENCES, () -> w);
            });
        });
    }

    /** Every listed divergence names a case of its table. */
    static void divergencesNameCases() {
        for (String n : ServerConformance.DIVERGENCES.keySet()) {
            assertTrue(ServerConformance.CASES.stream().anyMatch(c -> c.name().equals(n)), "no server case " + n);
        }
        for (String n : ClientConformance.DIVERGENCES.keySet()) {
            assertTrue(ClientConformance.CASES.stream().anyMatch(c -> c.name().equals(n)), "no client case " + n);
        }
        assertEquals(ServerConformance.CASES.size(), ServerConformance.CASES.stream().map(c -> c.name()).distinct().count(),
                "server case names are unique");
        assertEquals(ClientConformance.CASES.size(), ClientConformance.CASES.stream().map(c -> c.name()).distinct().count(),
                "client case names are unique");
    }

    private static void judge(String name, String rfc, boolean conforms, Map<String, String> divergences,
            java.util.function.Supplier<String> detail) {
        String listed = divergences.get(name);
        if (conforms && listed != null) {
            fail(name + " is listed as a divergence (" + listed + ") but now conforms: take it off the list");
        }
        if (!conforms && listed == null) {
            fail(name + " (" + rfc + ") does not conform and is not a listed divergence:\n     " + detail.get());
        }
    }

    private static int[] words(byte[] b) {
        MemorySegment s = MemorySegment.ofArray(b);
        int[] w = new int[b.length / 4 + (b.length % 4 == 0 ? 0 : 1)];
        for (int i = 0; i < b.length / 4; i++) {
            w[i] = Xdr.getInt(s, 4L * i);
        }
        if (b.length % 4 != 0) {
            w[w.length - 1] = 0xBAD0BAD0; // a reply that is not whole XDR words never matches
        }
        return w;
    }

    private static String hex(int[] w) {
        StringBuilder sb = new StringBuilder();
        for (int x : w) {
            sb.append(HexFormat.of().toHexDigits(x)).append(' ');
        }
        return sb.toString().trim();
    }

    /**
     * Heap this thread has allocated so far (HotSpot's com.sun.management.ThreadMXBean),
     * through reflection: the module does not read java.management, reflection needs no
     * read edge.
     */
    static long allocatedBytes() {
        try {
            Object bean = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean")
                    .invoke(null);
            Method m = Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes");
            return (long) m.invoke(bean);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("cannot measure this thread's allocation", e);
        }
    }
}
