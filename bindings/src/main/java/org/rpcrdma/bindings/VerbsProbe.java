package org.rpcrdma.bindings;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import org.rpcrdma.bindings.ffi.ibverbs.IbVerbs;

/**
 * Lists the RDMA devices libibverbs sees: {@code java -p <jars>
 * --enable-native-access=org.rpcrdma.bindings -m org.rpcrdma.bindings/org.rpcrdma.bindings.VerbsProbe}.
 * Exit status 0 when the call worked (even with no devices), 1 when it failed.
 */
public final class VerbsProbe {
    private static final int ENOSYS = 38;
    private static final MethodHandle GET_DEVICE_LIST = NativeErrors.capturingDowncall(
            IbVerbs.ibv_get_device_list$address(), IbVerbs.ibv_get_device_list$descriptor());

    private VerbsProbe() {
    }

    /**
     * The names of the devices {@code ibv_get_device_list} returns. A kernel without RDMA
     * support makes rdma-core return NULL with ENOSYS: that is reported as no devices.
     *
     * @throws NativeCallException for any other failure
     */
    public static List<String> deviceNames() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment num = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment state = NativeErrors.captureState();
            MemorySegment list = (MemorySegment) GET_DEVICE_LIST.invokeExact(state, num);
            if (list.equals(MemorySegment.NULL)) {
                int errno = NativeErrors.errno(state);
                if (errno == ENOSYS) {
                    return List.of();
                }
                throw NativeErrors.error("ibv_get_device_list", errno);
            }
            try {
                int n = num.get(ValueLayout.JAVA_INT, 0);
                MemorySegment devices = list.reinterpret(ValueLayout.ADDRESS.byteSize() * n);
                List<String> names = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    MemorySegment dev = devices.getAtIndex(ValueLayout.ADDRESS, i);
                    names.add(IbVerbs.ibv_get_device_name(dev).reinterpret(64).getString(0));
                }
                return names;
            } finally {
                IbVerbs.ibv_free_device_list(list);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    public static void main(String[] args) {
        try {
            List<String> names = deviceNames();
            System.out.println(names.isEmpty() ? "no RDMA devices" : "RDMA devices: " + String.join(" ", names));
        } catch (NativeCallException e) {
            System.out.println(e.getMessage());
            System.exit(1);
        }
    }
}
