package org.rpcrdma.transport.rpc;

/**
 * The requester's credit window for one direction of one connection.
 *
 * <p>Rules (RFC 8166 §3.3.1–3.3.3, RFC 8167 §4.1; behaviour of Linux
 * {@code rpcrdma_reply_handler}): a new connection starts with a window of 1 until the
 * responder's first grant arrives; a grant of 0 is treated as 1 (otherwise the requester
 * could never send again); grants above the locally configured maximum are clamped to it,
 * because the receive buffers and send contexts were sized for that maximum. A call takes
 * one credit before its Send is posted and gives it back when its reply is matched (an
 * abandoned call keeps its credit until then: the responder used a receive for it). The
 * caller keeps waiting calls in order and applies grants only from replies it matched.
 *
 * <p>Not thread-safe: the owning requester's lock guards it.
 */
public final class CreditAccount {
    private final Direction direction;
    private final int max;
    private int window = 1;
    private int outstanding;
    private int highWater;

    /**
     * @param max the most credits this side will ever use in this direction (≥ 1)
     */
    public CreditAccount(Direction direction, int max) {
        if (max < 1) {
            throw new IllegalArgumentException("max credits must be >= 1, got " + max);
        }
        this.direction = direction;
        this.max = max;
    }

    public Direction direction() {
        return direction;
    }

    /** Turns a received rdma_credit value into a window: 0 → 1, above max → max. */
    public static int clampGrant(int raw, int max) {
        // rdma_credit is an unsigned 32-bit value on the wire (RFC 8166 §4.2.1).
        long v = Integer.toUnsignedLong(raw);
        if (v == 0) {
            return 1;
        }
        return (int) Math.min(v, max);
    }

    /** Applies a grant carried in a matched Reply of this direction. */
    public void grant(int raw) {
        window = clampGrant(raw, max);
    }

    /** Back to the initial window of 1 and no outstanding calls (a new connection). */
    public void reset() {
        window = 1;
        outstanding = 0;
    }

    /** Whether one more call may be sent now. */
    public boolean available() {
        return outstanding < window;
    }

    /** Takes a credit if the window allows it. */
    public boolean tryAcquire() {
        if (outstanding < window) {
            outstanding++;
            highWater = Math.max(highWater, outstanding);
            return true;
        }
        return false;
    }

    /** Returns one credit (the call's reply was matched, or the connection is gone). */
    public void release() {
        if (outstanding <= 0) {
            throw new IllegalStateException(direction + " credit released more often than acquired");
        }
        outstanding--;
    }

    public int window() {
        return window;
    }

    public int outstanding() {
        return outstanding;
    }

    /** Most calls ever outstanding at once in this direction. */
    public int highWater() {
        return highWater;
    }

    public int max() {
        return max;
    }
}
