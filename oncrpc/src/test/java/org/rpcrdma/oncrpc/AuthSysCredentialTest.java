package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.xdr.Xdr;

/**
 * A peer's AUTH_SYS credential whose machinename is not UTF-8 is a credential that does
 * not decode: MSG_DENIED / AUTH_BADCRED (RFC 5531 §9), and nothing in the server's log at
 * WARNING with a stack trace (a remote peer must not be able to fill the log).
 */
class AuthSysCredentialTest {
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            records.add(r);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };
    private final Logger root = Logger.getLogger("");
    private InMemoryPair pair;
    private int xids = 0x0A570000;

    @BeforeEach
    void open() {
        root.addHandler(capture);
        pair = InMemoryPair.open(RpcRdmaOptions.defaults(), TestProgram.dispatcher());
    }

    @AfterEach
    void close() {
        pair.close();
        root.removeHandler(capture);
    }

    @Test
    void machineNameOfInvalidUtf8At255BytesIsBadCredNotAStackTrace() throws Exception {
        byte[] name = new byte[255];
        java.util.Arrays.fill(name, (byte) 0xFF); // never valid in UTF-8
        assertBadCred(name);
    }

    @Test
    void shortMachineNameOfInvalidUtf8IsBadCred() throws Exception {
        assertBadCred(new byte[] {'h', (byte) 0xC3, 0x28, 't'}); // 0xC3 needs a continuation byte
    }

    @Test
    void validUtf8MachineNameIsServed() throws Exception {
        byte[] name = "hôte".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        int[] reply = call(credential(name));
        assertArrayEquals(ServerConformance.success(1000), reply, "WHO_AM_I answers the credential's uid");
    }

    private void assertBadCred(byte[] name) throws Exception {
        int[] reply = call(credential(name));
        assertArrayEquals(ServerConformance.authError(1), reply, "MSG_DENIED / AUTH_ERROR / AUTH_BADCRED");
        List<LogRecord> loud = records.stream()
                .filter(r -> r.getLevel().intValue() >= Level.WARNING.intValue() || r.getThrown() != null).toList();
        assertTrue(loud.isEmpty(), () -> "logged for a peer's bad credential: " + loud.stream()
                .map(r -> r.getLevel() + " " + r.getMessage() + " " + r.getThrown()).toList());
        // the connection still serves calls
        assertArrayEquals(ServerConformance.success(-1), call(new int[] {ServerConformance.NONE, 0}));
    }

    /** An AUTH_SYS credential (flavor, length, body): stamp 7, {@code name}, uid 1000, gid 100, no gids. */
    private static int[] credential(byte[] name) {
        int padded = (name.length + 3) & ~3;
        int[] body = new int[1 + 1 + padded / 4 + 3];
        byte[] b = new byte[body.length * 4];
        MemorySegment s = MemorySegment.ofArray(b);
        Xdr.putInt(s, 0, 7);
        Xdr.putInt(s, 4, name.length);
        MemorySegment.copy(name, 0, s, java.lang.foreign.ValueLayout.JAVA_BYTE, 8, name.length);
        Xdr.putInt(s, 8 + padded, 1000);
        Xdr.putInt(s, 12 + padded, 100);
        Xdr.putInt(s, 16 + padded, 0);
        for (int i = 0; i < body.length; i++) {
            body[i] = Xdr.getInt(s, 4L * i);
        }
        return ServerConformance.cat(new int[] {ServerConformance.SYS, b.length}, body);
    }

    private int[] call(int[] cred) throws Exception {
        int[] words = ServerConformance.callCred(TestProgram.PROG, 2, TestProgram.WHO_AM_I.number(), cred);
        int xid = ++xids;
        MemorySegment msg = MemorySegment.ofArray(new byte[4 + 4 * words.length]);
        Xdr.putInt(msg, 0, xid);
        for (int i = 0; i < words.length; i++) {
            Xdr.putInt(msg, 4 + 4L * i, words[i]);
        }
        byte[] reply;
        try (ReceivedMessage r = pair.client().call(msg).get(10, TimeUnit.SECONDS)) {
            reply = r.toByteArray();
        }
        MemorySegment rs = MemorySegment.ofArray(reply);
        assertEquals(xid, Xdr.getInt(rs, 0));
        int[] out = new int[reply.length / 4 - 1];
        for (int i = 0; i < out.length; i++) {
            out[i] = Xdr.getInt(rs, 4 + 4L * i);
        }
        return out;
    }
}
