package org.rpcrdma.bindings;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.rpcrdma.bindings.ffi.ibverbs.IbVerbs;

/**
 * Lists the RDMA devices libibverbs sees, through the facade; also the main a child JVM
 * runs in {@link NoWarningsTest}. Exit status 0 when the call worked (even with no
 * devices), 1 when it failed.
 */
final class ListDevices {
    private static final int ENOSYS = 38;

    private ListDevices() {
    }

    /** Device names; a kernel without RDMA (NULL with ENOSYS) has none. */
    static List<String> deviceNames() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment num = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment list = IbvCalls.ibvGetDeviceList(num);
            if (list.equals(MemorySegment.NULL)) {
                int errno = NativeErrors.pointerErrno();
                if (errno == ENOSYS) {
                    return List.of();
                }
                throw new IllegalStateException("ibv_get_device_list: " + NativeErrors.strerror(errno));
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
        }
    }

    public static void main(String[] args) {
        try {
            List<String> names = deviceNames();
            System.out.println(names.isEmpty() ? "no RDMA devices" : "RDMA devices: " + String.join(" ", names));
        } catch (IllegalStateException e) {
            System.out.println(e.getMessage());
            System.exit(1);
        }
    }
}
