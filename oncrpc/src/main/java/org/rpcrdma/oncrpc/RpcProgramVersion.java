package org.rpcrdma.oncrpc;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One version of a program registered with an {@link RpcDispatcher}: its procedures and
 * their handlers. Procedure 0 (NULL) is served by the dispatcher itself and always
 * succeeds (RFC 5531 §12.1); other numbers are registered here, and a call to one that
 * isn't is answered PROC_UNAVAIL. Procedures may be added while calls are served.
 */
public final class RpcProgramVersion {
    /** A procedure and its handler, typed together. */
    record Entry<A, R>(RpcProcedure<A, R> procedure, RpcHandler<A, R> handler) {}

    private final int program;
    private final int version;
    private final Map<Integer, Entry<?, ?>> procedures = new ConcurrentHashMap<>();

    RpcProgramVersion(int program, int version) {
        this.program = program;
        this.version = version;
    }

    public int program() {
        return program;
    }

    public int version() {
        return version;
    }

    /**
     * Serves {@code proc} with {@code handler}.
     *
     * @throws IllegalArgumentException for procedure 0 (the dispatcher's) or a number already registered
     */
    public <A, R> RpcProgramVersion procedure(RpcProcedure<A, R> proc, RpcHandler<A, R> handler) {
        java.util.Objects.requireNonNull(handler, "handler");
        if (proc.number() == 0) {
            throw new IllegalArgumentException("procedure 0 (NULL) is answered by the dispatcher");
        }
        if (procedures.putIfAbsent(proc.number(), new Entry<>(proc, handler)) != null) {
            throw new IllegalArgumentException("procedure " + Integer.toUnsignedString(proc.number())
                    + " of program " + Integer.toUnsignedString(program) + " version " + version + " is registered");
        }
        return this;
    }

    /** The entry for {@code proc}, or null. */
    Entry<?, ?> entry(int proc) {
        return procedures.get(proc);
    }
}
