package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.transport.rpc.CallTimer;

/**
 * How one call is made, for every {@link RpcCaller} and every call shape: an immutable value,
 * built from {@link #DEFAULT} with the {@code with*} methods (each returns a new value).
 *
 * <ul>
 * <li>timeout: the endpoint's {@link RpcRdmaOptions#callTimeoutMillis} unless set; {@code 0}
 *     means none, a negative one is refused here. A call that times out fails with
 *     {@link CallTimeoutException} whatever its shape.</li>
 * <li>retry: a call whose connection is lost before its reply is sent again, with the same
 *     XID, on the next connection (a reconnecting client, a backchannel whose client comes
 *     back); its bytes are copied at the call. Backward calls always retry (RFC 8167 §5.4).</li>
 * <li>maxReplyBytes: a reply of up to that many bytes is allowed; when it does not fit the
 *     receive inline threshold the call offers a Reply chunk that large (RFC 8166 §3.5.4).
 *     At most the caller's {@link RpcCaller#maxReplyBytes()}.</li>
 * <li>ddpArgument: the call's DDP-eligible argument (RFC 8166 §3.4.5), sent in a read chunk
 *     when the call does not fit inline.</li>
 * <li>receptacle: where a DDP result goes, offered as a write chunk (RFC 8166 §3.4.6); the
 *     reply's {@link ReceivedMessage#placedBytes()} says how much landed there. It is filled
 *     on the thread that takes the reply, so it must not be confined to the caller's thread.</li>
 * </ul>
 * What depends on the connection (maxReplyBytes against its limit, the DDP argument against
 * the message, the receptacle's size) is checked at the call, which throws
 * {@link IllegalArgumentException} naming the argument.
 */
public final class CallOptions {
    /** The endpoint's timeout, no retry, replies inline, no chunks. */
    public static final CallOptions DEFAULT = new CallOptions(-1, false, 0, null, null);

    private final long timeoutNanos;
    private final boolean retry;
    private final int maxReplyBytes;
    private final DdpArgument ddpArgument;
    private final MemorySegment receptacle;

    private CallOptions(long timeoutNanos, boolean retry, int maxReplyBytes, DdpArgument ddpArgument,
            MemorySegment receptacle) {
        this.timeoutNanos = timeoutNanos;
        this.retry = retry;
        this.maxReplyBytes = maxReplyBytes;
        this.ddpArgument = ddpArgument;
        this.receptacle = receptacle;
    }

    /** {@link #DEFAULT} with this timeout. */
    public static CallOptions timeout(long timeout, TimeUnit unit) {
        return DEFAULT.withTimeout(timeout, unit);
    }

    /**
     * This call's own timeout: {@code 0} means none.
     *
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public CallOptions withTimeout(long timeout, TimeUnit unit) {
        return new CallOptions(CallTimer.timeoutNanos(timeout, unit), retry, maxReplyBytes, ddpArgument, receptacle);
    }

    public CallOptions withRetry(boolean r) {
        return new CallOptions(timeoutNanos, r, maxReplyBytes, ddpArgument, receptacle);
    }

    /** @throws IllegalArgumentException if {@code n} is negative */
    public CallOptions withMaxReplyBytes(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("maxReplyBytes " + n + " is negative");
        }
        return new CallOptions(timeoutNanos, retry, n, ddpArgument, receptacle);
    }

    /** The call's DDP-eligible argument, or null for none. */
    public CallOptions withDdpArgument(DdpArgument a) {
        return new CallOptions(timeoutNanos, retry, maxReplyBytes, a, receptacle);
    }

    /** Where a DDP result goes, or null for none. */
    public CallOptions withReceptacle(MemorySegment r) {
        return new CallOptions(timeoutNanos, retry, maxReplyBytes, ddpArgument, r);
    }

    /** Whether a timeout was set (else the endpoint's applies). */
    public boolean hasTimeout() {
        return timeoutNanos >= 0;
    }

    /** The timeout set, in nanoseconds ({@code 0}: none), or -1 when the endpoint's applies. */
    public long timeoutNanos() {
        return timeoutNanos;
    }

    public boolean retry() {
        return retry;
    }

    public int maxReplyBytes() {
        return maxReplyBytes;
    }

    public DdpArgument ddpArgument() {
        return ddpArgument;
    }

    public MemorySegment receptacle() {
        return receptacle;
    }

    /** Whether the call needs chunk support beyond a long call (a DDP argument or a receptacle). */
    boolean placesData() {
        return ddpArgument != null || receptacle != null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CallOptions c && c.timeoutNanos == timeoutNanos && c.retry == retry
                && c.maxReplyBytes == maxReplyBytes && Objects.equals(c.ddpArgument, ddpArgument)
                && c.receptacle == receptacle;
    }

    @Override
    public int hashCode() {
        return Objects.hash(timeoutNanos, retry, maxReplyBytes, ddpArgument, System.identityHashCode(receptacle));
    }

    @Override
    public String toString() {
        return "CallOptions[timeout=" + (timeoutNanos < 0 ? "default" : timeoutNanos + " ns") + ", retry=" + retry
                + ", maxReplyBytes=" + maxReplyBytes + ", ddpArgument=" + ddpArgument + ", receptacle="
                + (receptacle == null ? null : receptacle.byteSize() + " bytes") + "]";
    }
}
