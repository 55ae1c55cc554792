package org.rpcrdma.transport.rpc;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The one place that decides how many receives a connection keeps posted: one for the
 * reply of each of our outstanding calls plus the credits granted to the peer (RFC 8167
 * §4.3; rnr_retry 0: a Send with no receive posted would kill the connection). A sender
 * makes sure of one more before a call goes ({@link #ensureForOneMore}); the completion
 * thread reposts after each receive ({@link #afterCompletion}).
 *
 * <p>The need is published with release stores under the requester's lock and read
 * without it: the lock is held across ibv_post_send, which on Soft-RoCE carries the whole
 * Send (the poller blocked on it for 12 % of event-mode calls in the guest profile). The
 * handshake: a sender publishes its need, fences, then counts the posted receives; the
 * completion thread takes a receive, fences, then reads the need. One sees the other:
 * without the fences both could read the old values and leave one receive short at a
 * full window (the peer's next Send: RNR, the connection lost).
 */
public final class ReceiveDemand {
    private static final VarHandle REQUIRED;

    static {
        try {
            REQUIRED = MethodHandles.lookup().findVarHandle(ReceiveDemand.class, "required", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ReceiveQueue receives;
    private final int grantToPeer;
    private volatile int required;

    public ReceiveDemand(ReceiveQueue receives, int grantToPeer) {
        this.receives = receives;
        this.grantToPeer = grantToPeer;
        this.required = grantToPeer;
    }

    /** Posts what the peer's grant needs (if the endpoint has not yet). Called once. */
    public void start() {
        receives.replenish(required);
    }

    /**
     * A sender, under the requester's lock, with {@code outstanding} calls out: whether a
     * receive is posted for one more reply (posting what it can).
     *
     * @throws RuntimeException if posting failed (the link is gone)
     */
    boolean ensureForOneMore(int outstanding) {
        int need = outstanding + 1 + grantToPeer;
        // ORDER: the handshake: need, fence, then count
        REQUIRED.setRelease(this, need);
        VarHandle.fullFence();
        return receives.ensureForOwnCall(outstanding, need);
    }

    /** Under the requester's lock: the need with {@code outstanding} calls out. */
    void publish(int outstanding) {
        REQUIRED.setRelease(this, outstanding + grantToPeer);
        receives.ownCallsOut(outstanding);
    }

    /** The completion thread took a receive: reposts to the need (before the message is handled). */
    void afterCompletion() {
        // ORDER: the handshake: our take is visible to a sender raising the need, or its need to us
        VarHandle.fullFence();
        receives.replenishAfterCompletion(required);
    }

    /** Receives that must stay posted now (no lock taken). */
    public int required() {
        return required;
    }
}
