package org.rpcrdma.bindings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rpcrdma.bindings.ffi.ibverbs.IbVerbs;
import org.rpcrdma.bindings.ffi.rdmacm.RdmaCm;

/** Both libraries load by soname and their calls work on a host with or without RDMA. */
class NativeLibrariesTest {

    @Test
    void getDeviceListCallWorks() {
        // On a kernel without RDMA rdma-core answers NULL/ENOSYS, which means no devices;
        // any other failure would throw NativeCallException and fail this test.
        List<String> names = VerbsProbe.deviceNames();
        assertNotNull(names);
        names.forEach(n -> assertFalse(n.isBlank(), "device with an empty name"));
    }

    @Test
    void librdmacmLoadsAndReportsErrnoThroughTheCapturingHandle() throws Throwable {
        MethodHandle create = NativeErrors.capturingDowncall(
                RdmaCm.rdma_create_event_channel$address(), RdmaCm.rdma_create_event_channel$descriptor());
        MemorySegment state = NativeErrors.captureState();
        MemorySegment channel = (MemorySegment) create.invokeExact(state);
        if (channel.equals(MemorySegment.NULL)) {
            // No /dev/infiniband/rdma_cm on this host: the error must name call, errno and text.
            NativeCallException e = NativeErrors.lastError("rdma_create_event_channel", state);
            assertTrue(e.errno() > 0, e.getMessage());
            assertTrue(e.getMessage().startsWith("rdma_create_event_channel failed: errno " + e.errno() + " ("),
                    e.getMessage());
        } else {
            RdmaCm.rdma_destroy_event_channel(channel);
        }
    }

    @Test
    void errnoAndStrerrorAreCapturedEndToEnd() throws Throwable {
        Linker linker = Linker.nativeLinker();
        MethodHandle close = NativeErrors.capturingDowncall(linker.defaultLookup().find("close").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        MemorySegment state = NativeErrors.captureState();
        int rc = (int) close.invokeExact(state, -1);
        assertEquals(-1, rc);
        NativeCallException e = NativeErrors.lastError("close", state);
        assertEquals(9, e.errno()); // EBADF
        assertEquals("close", e.function());
        assertEquals("close failed: errno 9 (Bad file descriptor)", e.getMessage());
    }

    @Test
    void dataPathErrorStyles() {
        NativeErrors.checkReturnedErrno("ibv_post_send", 0);
        NativeCallException e = assertThrows(NativeCallException.class,
                () -> NativeErrors.checkReturnedErrno("ibv_post_send", 12));
        assertEquals("ibv_post_send failed: errno 12 (Cannot allocate memory)", e.getMessage());
        assertEquals(12, assertThrows(NativeCallException.class,
                () -> NativeErrors.checkReturnedErrno("ibv_post_recv", -12)).errno());
        assertEquals(3, NativeErrors.checkPoll("ibv_poll_cq", 3));
        assertThrows(NativeCallException.class, () -> NativeErrors.checkPoll("ibv_poll_cq", -1));
    }

    @Test
    void incRkeyRotatesOnlyTheKeyTag() {
        assertEquals(0x12345601, VerbsInline.ibvIncRkey(0x12345600));
        assertEquals(0x12345600, VerbsInline.ibvIncRkey(0x123456ff));
        assertEquals(0xffffff00, VerbsInline.ibvIncRkey(0xffffffff));
    }

    @Test
    void constantsMatchVerbsH() {
        assertEquals(0x8, IbVerbs.IBV_WC_WITH_INV());
        assertEquals(13, IbVerbs.IBV_WC_RNR_RETRY_EXC_ERR());
        assertEquals(2, IbVerbs.IBV_MW_TYPE_2());
        assertEquals(0x106, RdmaCm.RDMA_PS_TCP());
    }
}
