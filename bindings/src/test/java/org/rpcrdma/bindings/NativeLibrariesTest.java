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
        // any other failure fails this test.
        List<String> names = ListDevices.deviceNames();
        assertNotNull(names);
        names.forEach(n -> assertFalse(n.isBlank(), "device with an empty name"));
    }

    @Test
    void librdmacmLoadsAndReportsErrnoThroughTheCapturingInvoker() {
        MemorySegment channel = RdmaCmCalls.rdmaCreateEventChannel();
        if (channel.equals(MemorySegment.NULL)) {
            // No /dev/infiniband/rdma_cm on this host: ENODEV or ENOENT, with its text.
            int errno = NativeErrors.pointerErrno();
            assertTrue(errno == 19 || errno == 2, "errno " + errno);
            assertFalse(NativeErrors.strerror(errno).startsWith("errno "), NativeErrors.strerror(errno));
            return;
        }
        RdmaCm.rdma_destroy_event_channel(channel);
    }

    @Test
    void errnoAndStrerrorAreCapturedEndToEnd() throws Throwable {
        Linker linker = Linker.nativeLinker();
        MethodHandle close = NativeErrors.capturingDowncall(linker.defaultLookup().find("close").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        int rc = (int) close.invokeExact(NativeErrors.captureState(), -1);
        assertEquals(-1, rc);
        assertEquals(9, NativeErrors.errno()); // EBADF
        assertEquals(9, NativeErrors.statusErrno(rc));
        assertEquals("Bad file descriptor", NativeErrors.strerror(9));
    }

    @Test
    void statusStyleDecodesAllThreeConventions() throws Throwable {
        assertEquals(0, NativeErrors.statusErrno(0));
        // "returns the value of errno" (most ibv_*)
        assertEquals(22, NativeErrors.statusErrno(22));
        // a negated errno
        assertEquals(22, NativeErrors.statusErrno(-22));
        // -1 and errno (librdmacm): make a real call set errno in the capture state
        MethodHandle close = NativeErrors.capturingDowncall(
                Linker.nativeLinker().defaultLookup().find("close").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        int rc = (int) close.invokeExact(NativeErrors.captureState(), -1);
        assertEquals(9, NativeErrors.statusErrno(rc));
        assertEquals(9, NativeErrors.pointerErrno());
        // a call that says it failed but left errno 0 still reports a failure
        NativeErrors.setErrno(0);
        assertEquals(NativeErrors.EIO, NativeErrors.statusErrno(-1));
        assertEquals(NativeErrors.EIO, NativeErrors.pointerErrno());
    }

    @Test
    void rejectValidatesThePrivateDataLength() {
        assertThrows(IllegalArgumentException.class,
                () -> RdmaCmCalls.rdmaReject(MemorySegment.NULL, MemorySegment.NULL, 256));
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
