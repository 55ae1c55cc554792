package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Configuration;
import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.rpcrdma.xdr.Xdr;

/**
 * The JFR call event (org.rpcrdma.Call): what one call records, and that the default
 * profile does not record fast calls.
 */
class CallEventTest {
    private static final String CALL = "org.rpcrdma.Call";

    /** An RPC call header with the given program, version and procedure, and {@code args} after it. */
    private static MemorySegment call(int xid, int prog, int vers, int proc, byte[] args) {
        MemorySegment m = callMsg(xid, prog, args);
        Xdr.putInt(m, 16, vers);
        Xdr.putInt(m, 20, proc);
        return m;
    }

    @Test
    void aRecordedCallCarriesItsProgramProcedureXidDirectionAndBytes() throws Exception {
        List<RecordedEvent> events;
        try (Recording r = new Recording()) {
            r.enable(CALL).withThreshold(Duration.ZERO);
            r.start();
            try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), echo())) {
                ReceivedMessage f = p.client().call(call(0x1234, 100003, 4, 1, new byte[12])).join();
                assertArrayEquals(new byte[12], results(f));
                f.release();
                long read = p.client().callAndRead(call(0x9abc, 100003, 4, 3, new byte[16]),
                        CallOptions.timeout(5, TimeUnit.SECONDS), MemorySegment::byteSize);
                assertEquals(24 + 16, read);
                p.client().enableBackchannel(echo()).join();
                ReceivedMessage b = p.server().call(call(0x5678, 0x40000000, 1, 2, new byte[8])).join();
                b.release();
            }
            r.stop();
            events = read(r);
        }
        RecordedEvent fwd = byXid(events, 0x1234);
        assertEquals(100003, fwd.getInt("program"));
        assertEquals(4, fwd.getInt("version"));
        assertEquals(1, fwd.getInt("procedure"));
        assertEquals("FORWARD", fwd.getString("direction"));
        assertEquals(40 + 12, fwd.getLong("callBytes"), "the RPC call message");
        assertEquals(24 + 12, fwd.getLong("replyBytes"), "the RPC reply message");
        assertEquals("reply", fwd.getString("outcome"));
        assertTrue(fwd.getString("connection").length() > 0, "the connection is named");
        assertTrue(!fwd.getDuration().isNegative(), "a duration: " + fwd.getDuration());
        assertNull(fwd.getStackTrace(), "no stack trace per call");

        RecordedEvent reused = byXid(events, 0x9abc); // a reused call object (callAndRead)
        assertEquals(3, reused.getInt("procedure"));
        assertEquals(40 + 16, reused.getLong("callBytes"));
        assertEquals(24 + 16, reused.getLong("replyBytes"));
        assertEquals("FORWARD", reused.getString("direction"));

        RecordedEvent bwd = byXid(events, 0x5678);
        assertEquals(0x40000000, bwd.getInt("program"));
        assertEquals(1, bwd.getInt("version"));
        assertEquals(2, bwd.getInt("procedure"));
        assertEquals("BACKWARD", bwd.getString("direction"));
        assertEquals(40 + 8, bwd.getLong("callBytes"));
        assertEquals(24 + 8, bwd.getLong("replyBytes"));
    }

    @Test
    void theDefaultProfileRecordsSlowCallsOnly() throws Exception {
        CompletableFuture<IncomingCall> held = new CompletableFuture<>();
        List<RecordedEvent> events;
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.builder().credits(4).build(),
                c -> {
                    if (c.xid() == 2) {
                        held.complete(c); // answered later, by the test: a slow call
                    } else {
                        echo().handle(c);
                    }
                })) {
            for (int i = 0; i < 1000; i++) {
                // warm: the fast call below must not pay for class loading or the interpreter
                p.client().call(call(1000 + i, 100003, 4, 0, new byte[4])).join().release();
            }
            try (Recording r = new Recording(Configuration.getConfiguration("default"))) {
                r.start();
                p.client().call(call(1, 100003, 4, 0, new byte[4])).join().release();
                CompletableFuture<ReceivedMessage> slow = p.client().call(call(2, 100003, 4, 0, new byte[4]));
                IncomingCall c = held.get(5, TimeUnit.SECONDS);
                long due = System.nanoTime() + Duration.ofMillis(40).toNanos();
                while (System.nanoTime() < due) {
                    Thread.sleep(5); // the call takes longer than the threshold
                }
                echo().handle(c);
                slow.get(5, TimeUnit.SECONDS).release();
                r.stop();
                events = read(r);
            }
        }
        assertEquals(List.of(2), events.stream().filter(e -> e.getEventType().getName().equals(CALL))
                .map(e -> e.getInt("xid")).toList(), "only the call slower than 20 ms is recorded");
        EventType type = FlightRecorder.getFlightRecorder().getEventTypes().stream()
                .filter(t -> t.getName().equals(CALL)).findFirst().orElseThrow();
        assertEquals("20 ms", type.getSettingDescriptors().stream()
                .filter(s -> s.getName().equals("threshold")).findFirst().orElseThrow().getDefaultValue());
    }

    private static List<RecordedEvent> read(Recording r) throws Exception {
        Path f = Files.createTempFile("call-event", ".jfr");
        try {
            r.dump(f);
            return RecordingFile.readAllEvents(f);
        } finally {
            Files.deleteIfExists(f);
        }
    }

    private static RecordedEvent byXid(List<RecordedEvent> events, int xid) {
        return events.stream().filter(e -> e.getEventType().getName().equals(CALL) && e.getInt("xid") == xid)
                .findFirst().orElseThrow(() -> new AssertionError("no " + CALL + " event for xid " + xid
                        + " among " + events.size()));
    }
}
