package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.LockSupport;
import org.rpcrdma.transport.CallTimeoutException;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.ReplyReader;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.link.Link;

/**
 * A blocking call whose reply is read in place ({@link ConnectionEngine#callAndRead}): the
 * transport leaves the reply where it is (a receive buffer, or a reassembled message) and
 * wakes the caller, who reads it on its own thread and then releases it. Nothing is
 * allocated per call on the inline path.
 */
public final class ReadInPlace implements Completion {
    public static final ReadInPlace INSTANCE = new ReadInPlace();

    private ReadInPlace() {}

    @Override
    public boolean inline(CallRequest r, ConnectionEngine conn, int slot, MemorySegment view) {
        wake(r);
        return true; // the caller reads it, then releases the buffer
    }

    @Override
    public boolean message(CallRequest r, ReceivedMessage reply) {
        wake(r);
        return true;
    }

    @Override
    public void failed(CallRequest r, Throwable t) {
        wake(r);
    }

    @Override
    public void abandoned(CallRequest r, Throwable cause) {
        // only the caller abandons its own call (timeout, interrupt): nobody to wake
    }

    private static void wake(CallRequest r) {
        Thread w = r.waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    /**
     * The caller's half: takes its reply off the completion queue itself when it can (as
     * callAndWait does), else parks until the thread that took it wakes it; then reads it
     * on this thread and releases its buffer and the request.
     */
    static <T> T await(CallRequest r, Link link, ReplyReader<T> reader, long timeoutNanos, long timeoutMillis,
            String where, StatsCounters stats) throws InterruptedException {
        awaitReply(r, link, timeoutNanos, timeoutMillis, where, stats);
        return read(r, reader);
    }

    /**
     * {@link Connection#callAndWait}'s half: waits as {@link #await} does, then hands the
     * caller its reply as the one object it allocates, a {@link ReceivedMessage} it releases
     * (the reassembled one as it is), and the request goes back to its pool.
     */
    static ReceivedMessage awaitMessage(CallRequest r, Link link, long timeoutNanos, long timeoutMillis,
            String where, StatsCounters stats) throws InterruptedException {
        awaitReply(r, link, timeoutNanos, timeoutMillis, where, stats);
        ReceivedMessage m = r.replyMsg;
        if (m == null) {
            m = ApiBridge.access().message(r.replyView, r.replyConn, r.replySlot, -1);
        }
        r.recycle();
        return m;
    }

    /** Waits until {@code r} ended; returns if it was replied to, else throws what ended it. */
    private static void awaitReply(CallRequest r, Link link, long timeoutNanos, long timeoutMillis,
            String where, StatsCounters stats) throws InterruptedException {
        // The clock is read only for a call not answered yet (an in-memory pair answers
        // inside submit; under TCG a clock read costs ~1 µs), and the timeout counts from here.
        long deadline = r.isDone() ? 0 : System.nanoTime() + CallTimer.waitNanos(timeoutNanos);
        try {
            while (true) {
                if (!r.isDone()) {
                    link.pollOnCaller(r.done, deadline); // false: another thread takes the reply and wakes us
                }
                if (!r.isDone()) {
                    r.waiter = Thread.currentThread();
                    while (!r.isDone() && !Thread.currentThread().isInterrupted()) {
                        long left = deadline - System.nanoTime();
                        if (left <= 0) {
                            break;
                        }
                        LockSupport.parkNanos(r, left);
                    }
                    r.waiter = null;
                }
                if (Thread.interrupted()) {
                    if (r.abandon(new InterruptedException("interrupted"))) {
                        throw new InterruptedException(where + ": call 0x" + Integer.toHexString(r.xid)
                                + " interrupted (abandoned)");
                    }
                    Thread.currentThread().interrupt(); // it ended meanwhile: keep the flag, take the outcome
                } else if (!r.isDone()) {
                    CallTimeoutException timedOut = new CallTimeoutException(where, r.xid, timeoutMillis);
                    if (r.abandon(timedOut)) {
                        throw timedOut;
                    }
                }
                if (r.isDone()) {
                    break;
                }
            }
            if (r.endedAs(CallOutcome.FAILED)) {
                Throwable t = r.failure;
                r.recycle();
                if (t instanceof RuntimeException e) {
                    throw e;
                }
                throw new RpcRdmaException("call failed", t);
            }
            (r.deliveredBy == Thread.currentThread() ? stats.repliesTakenByCaller : stats.repliesHandedOff).increment();
        } finally {
            if (r.waiter != null) {
                r.waiter = null;
            }
        }
    }

    /** Reads the reply on the caller's thread, then releases its buffer and the request. */
    private static <T> T read(CallRequest r, ReplyReader<T> reader) {
        ReceivedMessage m = r.replyMsg;
        try {
            return reader.read(m != null ? m.bytes() : r.replyView);
        } finally {
            if (m != null) {
                m.release();
            } else {
                r.replyConn.releaseReceive(r.replySlot);
            }
            r.replyConn = null;
            r.replyView = null;
            r.replyMsg = null;
            r.recycle();
        }
    }
}
