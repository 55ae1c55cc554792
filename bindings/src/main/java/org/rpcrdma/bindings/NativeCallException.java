package org.rpcrdma.bindings;

/**
 * A libibverbs or librdmacm call failed. Carries the C function's name, the errno it
 * reported (directly as a return value, or through {@code errno}) and strerror's text,
 * so a log line names the cause without a lookup table.
 */
public class NativeCallException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String function;
    private final int errno;

    public NativeCallException(String function, int errno, String strerror) {
        super(function + " failed: errno " + errno + " (" + strerror + ")");
        this.function = function;
        this.errno = errno;
    }

    /** The C function that failed, e.g. {@code "ibv_reg_mr"}. */
    public String function() {
        return function;
    }

    /** The positive errno value the call reported. */
    public int errno() {
        return errno;
    }
}
