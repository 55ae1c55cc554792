package org.rpcrdma.transport;

/**
 * A libibverbs, librdmacm or libc call failed, or rdma_cm reported a failed step with an
 * error event: names the C function, the errno it reported and strerror's text, so a log
 * line says what failed without a lookup table (as Netty's {@code NativeIoException}).
 * Connecting and listening on a host without RDMA fail with this, e.g.
 * {@code rdma_create_event_channel} with ENODEV; {@link Rdma#isAvailable()} says so first.
 */
public final class NativeFailureException extends RpcRdmaException {
    private static final long serialVersionUID = 1L;

    private final String function;
    private final int errno;

    /**
     * @param function the C function that failed, e.g. {@code "ibv_reg_mr"}
     * @param errno    the positive errno it reported
     * @param strerror the errno's text
     * @param detail   what else is known (e.g. an rdma_cm event and status), or null
     */
    public NativeFailureException(String function, int errno, String strerror, String detail) {
        super(function + " failed: errno " + errno + " (" + strerror + ")" + (detail == null ? "" : ": " + detail));
        this.function = function;
        this.errno = errno;
    }

    /** The C function that failed, e.g. {@code "rdma_connect"}. */
    public String function() {
        return function;
    }

    /** The positive errno the call reported. */
    public int errno() {
        return errno;
    }
}
