package org.rpcrdma.oncrpc;

import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * The conformance tables against a real {@link RpcDispatcher} and {@link OncRpcClient}
 * over the whole transport joined in memory (headers, credits, XID tables); the same
 * tables run over real verbs in {@code ConformanceVerbsTest}.
 */
class ConformanceTest {
    private InMemoryPair pair;

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    @TestFactory
    Stream<DynamicTest> server() {
        pair = InMemoryPair.open(RpcRdmaOptions.defaults(), TestProgram.dispatcher());
        return Conformance.server(m -> {
            try (ReceivedMessage r = pair.client().call(m).get(10, TimeUnit.SECONDS)) {
                return r.toByteArray();
            }
        }, true);
    }

    @TestFactory
    Stream<DynamicTest> client() {
        pair = InMemoryPair.open(RpcRdmaOptions.defaults(), ClientConformance.cannedServer());
        return Conformance.client(pair.client());
    }

    @Test
    void divergencesNameCases() {
        Conformance.divergencesNameCases();
    }
}
