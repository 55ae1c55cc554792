package org.rpcrdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;
import org.rpcrdma.bindings.LibcCalls;
import org.rpcrdma.transport.NativeFailureException;

/** Every failure convention of the libraries becomes one exception with function, errno and text. */
class NativeChecksTest {
    private static final int F_GETFL = 3;

    @Test
    void statusCallsInEveryConvention() {
        NativeChecks.status("ibv_modify_qp", 0);
        // "returns the value of errno" (most ibv_*), or its negation
        NativeFailureException e = assertThrows(NativeFailureException.class,
                () -> NativeChecks.status("ibv_modify_qp", 22));
        assertEquals("ibv_modify_qp failed: errno 22 (Invalid argument)", e.getMessage());
        assertEquals(22, assertThrows(NativeFailureException.class,
                () -> NativeChecks.status("ibv_modify_qp", -22)).errno());
        // -1 and errno (librdmacm, libc): a real call sets it
        int rc = LibcCalls.fcntl(-1, F_GETFL, 0);
        e = assertThrows(NativeFailureException.class, () -> NativeChecks.status("rdma_listen", rc));
        assertEquals("rdma_listen", e.function());
        assertEquals(9, e.errno()); // EBADF
        assertEquals("rdma_listen failed: errno 9 (Bad file descriptor)", e.getMessage());
    }

    @Test
    void pointerCallsReportTheCapturedErrno() {
        LibcCalls.fcntl(-1, F_GETFL, 0);
        NativeFailureException e = assertThrows(NativeFailureException.class,
                () -> NativeChecks.pointer("ibv_reg_mr", MemorySegment.NULL, 8));
        assertEquals(9, e.errno());
        MemorySegment p = MemorySegment.ofAddress(4096);
        assertEquals(p.address(), NativeChecks.pointer("ibv_reg_mr", p, 8).address());
    }

    @Test
    void dataPathStyles() {
        NativeChecks.returned("ibv_post_send", 0);
        NativeFailureException e = assertThrows(NativeFailureException.class,
                () -> NativeChecks.returned("ibv_post_send", 12));
        assertEquals("ibv_post_send failed: errno 12 (Cannot allocate memory)", e.getMessage());
        assertEquals(12, assertThrows(NativeFailureException.class,
                () -> NativeChecks.returned("ibv_post_recv", -12)).errno());
        assertEquals(3, NativeChecks.polled(3));
        assertEquals("ibv_poll_cq", assertThrows(NativeFailureException.class, () -> NativeChecks.polled(-1)).function());
    }
}
