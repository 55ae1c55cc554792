package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaOptions;

/** The README's "ONC RPC layer" sample runs, and is the code below, line for line. */
class ReadmeExampleTest {
    @Test
    void sampleRuns() throws Exception {
        AtomicInteger result = new AtomicInteger();
        // README:begin
        record Sum(int a, int b) {}
        XdrCodec<Sum> sum = XdrCodec.of((w, s) -> w.writeInt(s.a()).writeInt(s.b()),
                r -> new Sum(r.readInt(), r.readInt()));
        RpcProcedure<Sum, Integer> add = new RpcProcedure<>(1, sum, Codecs.INT);

        RpcDispatcher server = new RpcDispatcher();
        server.program(0x20000001, 1).procedure(add, (s, call) -> call.reply(s.a() + s.b()));
        try (var pair = InMemoryPair.open(RpcRdmaOptions.defaults(), server)) {
            OncRpcClient calc = new OncRpcClient(pair.client(), 0x20000001, 1);
            int three = calc.call(add, new Sum(1, 2));
        // README:end
            result.set(three);
        }
        assertEquals(3, result.get());
    }

    @Test
    void readmeShowsThisCode() throws Exception {
        List<String> src = Files.readAllLines(Path.of("src/test/java/org/rpcrdma/oncrpc/ReadmeExampleTest.java"));
        List<String> sample = src.subList(src.indexOf("        // README:begin") + 1, src.indexOf("        // README:end"))
                .stream().map(l -> l.length() >= 8 ? l.substring(8) : l.strip()).toList();
        String readme = Files.readString(Path.of("../README.md"));
        String block = String.join("\n", sample) + "\n}\n```";
        // after the sample's imports (ReadmeSnippetsTest compiles the whole block, imports included)
        assertTrue(readme.contains("import org.rpcrdma.transport.RpcRdmaOptions;\n\n" + block),
                "README.md's ONC RPC sample differs from this test:\n" + block);
    }
}
