package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.transport.CallOptions;
import org.rpcrdma.transport.DdpArgument;
import org.rpcrdma.transport.RpcCaller;
import org.rpcrdma.transport.chunk.DdpLayout;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * The checks every {@link RpcCaller} makes at the call, before anything is sent or parked,
 * so that a bad argument is thrown the same way on every path and in every shape.
 */
public final class CallArguments {
    private CallArguments() {}

    /**
     * Checks {@code rpcCall} and {@code o} against an endpoint's {@code maxChunkBytes}.
     *
     * @return the call's XID
     * @throws IllegalArgumentException naming the argument that is wrong
     */
    public static int check(MemorySegment rpcCall, CallOptions o, int maxChunkBytes) {
        Objects.requireNonNull(rpcCall, "rpcCall");
        Objects.requireNonNull(o, "options");
        // xid and msg_type in one 64-bit read: under C1 each segment access is a chain of checks
        long head = rpcCall.byteSize() < 8 ? -1 : Xdr.getLong(rpcCall, 0);
        if ((int) head != OncRpc.CALL) {
            throw new IllegalArgumentException("rpcCall is not an ONC RPC CALL message");
        }
        if (o.maxReplyBytes() > maxChunkBytes) {
            throw new IllegalArgumentException("maxReplyBytes " + o.maxReplyBytes() + " is not in [0, "
                    + maxChunkBytes + "] (maxChunkBytes)");
        }
        DdpArgument payload = o.ddpArgument();
        if (payload != null) {
            try {
                DdpLayout.checkIn(payload, rpcCall);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("ddpArgument: " + e.getMessage(), e);
            }
        }
        MemorySegment receptacle = o.receptacle();
        if (receptacle != null && (receptacle.byteSize() == 0 || receptacle.byteSize() > maxChunkBytes)) {
            throw new IllegalArgumentException("receptacle of " + receptacle.byteSize() + " bytes is not in [1, "
                    + maxChunkBytes + "] (maxChunkBytes)");
        }
        if (receptacle != null && !receptacle.isAccessibleBy(CallRequest.NOT_THE_OWNER)) {
            // the placed data is copied in on the thread that takes the reply (the poller):
            // memory confined to the caller's thread can't be written there
            throw new IllegalArgumentException("receptacle is confined to its arena's thread; use shared, automatic,"
                    + " global or heap memory");
        }
        return (int) (head >>> 32);
    }

    /** The timeout of a call with {@code o} on an endpoint whose default is {@code defaultMillis}, in nanoseconds (0: none). */
    public static long timeoutNanos(CallOptions o, long defaultMillis) {
        long set = o.timeoutNanos();
        return set >= 0 ? set : TimeUnit.MILLISECONDS.toNanos(defaultMillis);
    }
}
