package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a client's close costs the rest of its JVM. Each shared arena it closes is a
 * handshake with every thread of the JVM, run in turn by the one VM thread: a JVM closing
 * many connections at once (the scale bench's 1,000, an application's shutdown) waited
 * seconds per close for them. So a connection closes as few arenas as owners of memory
 * it has, not one per small native structure. Counted with JFR: the HandshakeAllThreads
 * operations the closing thread asked for.
 */
@Tag("verbs")
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ClientCloseCostVerbsTest extends OneClientFixture {
    /**
     * The owners of native memory a client connection with its own threads frees at close:
     * the link's hardware (its buffers and chunk pool), its QP, its work requests, its
     * memory windows' batch, the poller's completions array and channel, the rdma_cm event
     * channel.
     */
    private static final int ARENAS_OF_A_CLIENT = 7;

    @Test
    void aClientsCloseHandshakesTheJvmOncePerOwnerOfMemory() throws Exception {
        // 120 s to connect: a guest that shares its host's cores took over 30 s at times
        connect(EndpointVerbsTest.OPTS.toBuilder().connectTimeoutMillis(120_000).build());
        byte[] args = {1, 2, 3, 4};
        // a long call and a Reply chunk: the chunk memory and the windows are in use too
        assertArrayEquals(args, results(client.call(callMsg(7, 1, args),
                CallOptions.timeout(60, TimeUnit.SECONDS).withMaxReplyBytes(64 * 1024)).get(60, TimeUnit.SECONDS)));
        Path jfr = Files.createTempFile("client-close", ".jfr");
        long handshakes;
        long millis;
        try (Recording r = new Recording()) {
            r.enable("jdk.ExecuteVMOperation").withThreshold(Duration.ZERO);
            r.start();
            CompletableFuture<Long> took = new CompletableFuture<>();
            Thread.ofPlatform().name("client-closer").start(() -> {
                long t0 = System.nanoTime();
                try {
                    client.close();
                    took.complete(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                } catch (Throwable e) {
                    took.completeExceptionally(e);
                }
            });
            millis = took.get(120, TimeUnit.SECONDS);
            r.stop();
            r.dump(jfr);
        }
        try {
            List<RecordedEvent> ops = RecordingFile.readAllEvents(jfr);
            handshakes = ops.stream().filter(e -> e.getEventType().getName().equals("jdk.ExecuteVMOperation"))
                    .filter(e -> "HandshakeAllThreads".equals(e.getString("operation")))
                    .filter(e -> {
                        RecordedThread caller = e.getThread("caller");
                        return caller != null && "client-closer".equals(caller.getJavaName());
                    }).count();
        } finally {
            Files.deleteIfExists(jfr);
        }
        String summary = "the close took " + millis + " ms and handshook every thread of the JVM " + handshakes
                + " times (" + Thread.getAllStackTraces().size() + " threads now)";
        System.out.println("client close cost: " + summary);
        assertTrue(handshakes <= ARENAS_OF_A_CLIENT, summary);
    }
}
