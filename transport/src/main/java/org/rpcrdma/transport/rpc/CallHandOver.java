package org.rpcrdma.transport.rpc;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.rpcrdma.transport.ConnectionLostException;

/**
 * What becomes of a connection's calls that it can no longer complete (≈ Linux
 * {@code xprt_rdma_close} and the RPC client's retransmission): calls never sent, and
 * calls sent with {@code retry}, go to the connection's owner (the reconnecting client,
 * a server's backchannel), which sends them again on its next connection with the same
 * XID (RFC 8167 §5.4); the others fail with {@link ConnectionLostException}. A connection
 * its user closed hands nothing over.
 */
public final class CallHandOver {
    private final String name;
    /** Takes calls this connection could not complete (the client reconnects, a Backchannel waits). */
    private volatile Consumer<List<CallRequest>> owner;
    private volatile boolean closedByUser;
    private volatile Throwable lossCause;

    public CallHandOver(String name) {
        this.name = name;
    }

    public void owner(Consumer<List<CallRequest>> sink) {
        this.owner = sink;
    }

    void closedByUser() {
        closedByUser = true;
    }

    void lostBecause(Throwable cause) {
        lossCause = cause;
    }

    /** Calls that cannot go out here ({@code closing}: the connection was closing): handed over, else failed. */
    void notSent(List<CallRequest> calls, boolean closing) {
        if (!handOver(calls)) {
            ConnectionLostException e = lostException(closing);
            for (CallRequest c : calls) {
                c.fail(e);
            }
        }
    }

    /** The connection was lost with these calls: each is failed or handed over, once. */
    void lost(Requester.Taken t) {
        List<CallRequest> again = new ArrayList<>();
        ConnectionLostException e = lostException(false);
        for (CallRequest c : t.sent()) {
            if (c.isDone()) {
                c.releaseExposure(); // abandoned: nobody waits; an exposure held for its reply goes now
                continue;
            }
            if (c.retry()) {
                again.add(c); // sent, maybe executed: only the caller may allow a resend
            } else {
                c.fail(e);
            }
        }
        for (CallRequest c : t.unsent()) {
            if (!c.isDone()) {
                again.add(c); // never sent: always safe to send on the next connection
            }
        }
        // The owner hears of every loss, even with nothing to carry over: a client with a
        // backchannel must reconnect anyway (RFC 8167 §5.4), one without releases the link.
        if (!handOver(again)) {
            for (CallRequest c : again) {
                c.fail(e);
            }
        }
    }

    /** Gives calls to the owner unless the user closed us; false if not taken. */
    private boolean handOver(List<CallRequest> calls) {
        Consumer<List<CallRequest>> sink = owner;
        if (sink == null || closedByUser) {
            return false;
        }
        for (CallRequest c : calls) {
            c.detach();
        }
        sink.accept(calls);
        return true;
    }

    private ConnectionLostException lostException(boolean closing) {
        Throwable cause = lossCause;
        String why = closedByUser ? "closed" : closing ? "closing" : "connection lost";
        return new ConnectionLostException(name + ": " + why + (cause == null || closedByUser ? "" : ": "
                + cause.getMessage()), cause);
    }
}
