package org.rpcrdma.bench.verbs;

import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * A completion mode of both ends of a measured connection (the modes a user can pick; {@link RpcRdmaOptions#busyPoll()}, {@link RpcRdmaOptions#pollSpinMicros()}).
 *
 * @param name             the series suffix: {@code mode-<name>}
 * @param clientBusy       the client busy-polls (its caller spins for its own reply), else it
 *                         is on pure completion events
 * @param serverSpinMicros -1: the server in the client's mode; otherwise the server on completion
 *                         events, polling this many µs after each completion before it sleeps
 *                         (0: pure events)
 */
record Mode(String name, boolean clientBusy, int serverSpinMicros) {
    /** Both ends busy-poll. */
    static final Mode BUSY = new Mode("busy", true, -1);
    /** The client polls, the server on adaptive events (100 µs): the second goal ({@link Goals}). */
    static final Mode MIXED = new Mode("mixed", true, 100);
    /** Both ends on completion events, no spinning. */
    static final Mode EVENT = new Mode("event", false, 0);

    RpcRdmaOptions client(RpcRdmaOptions o) {
        return o.toBuilder().busyPoll(clientBusy).pollSpinMicros(0).build();
    }

    RpcRdmaOptions server(RpcRdmaOptions o) {
        return serverSpinMicros < 0 ? client(o) : o.toBuilder().busyPoll(false).pollSpinMicros(serverSpinMicros).build();
    }

    String series() {
        return "mode-" + name;
    }
}
