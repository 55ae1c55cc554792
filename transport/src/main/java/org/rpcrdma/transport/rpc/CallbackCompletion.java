package org.rpcrdma.transport.rpc;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.ReplyCallback;

/**
 * A call answered through a {@link ReplyCallback}, exactly once: the reply's bytes are
 * valid only while {@code onReply} runs (its receive buffer then goes back), so nothing
 * is allocated per call on the inline path. The callback runs on the thread that took the
 * completion; what it throws is logged, never propagated into the transport.
 */
public final class CallbackCompletion implements Completion {
    public static final CallbackCompletion INSTANCE = new CallbackCompletion();
    private static final System.Logger LOG = System.getLogger(CallbackCompletion.class.getName());

    private CallbackCompletion() {}

    @Override
    public boolean inline(CallRequest r, ConnectionEngine conn, int slot, MemorySegment view) {
        ReplyCallback cb = r.callback;
        try {
            cb.onReply(view);
        } catch (Throwable e) {
            LOG.log(Level.WARNING, "reply callback threw for call 0x" + Integer.toHexString(r.xid), e);
        }
        conn.releaseReceive(slot); // read: the buffer goes back now; true means delivered, not late
        r.recycle();
        return true;
    }

    @Override
    public boolean message(CallRequest r, ReceivedMessage reply) {
        ReplyCallback cb = r.callback;
        try {
            cb.onReply(reply.bytes());
        } catch (Throwable e) {
            LOG.log(Level.WARNING, "reply callback threw for call 0x" + Integer.toHexString(r.xid), e);
        } finally {
            reply.release();
        }
        r.recycle();
        return true;
    }

    @Override
    public void failed(CallRequest r, Throwable t) {
        ReplyCallback cb = r.callback;
        notify(cb, r.xid, t);
        r.recycle();
    }

    @Override
    public void abandoned(CallRequest r, Throwable cause) {
        notify(r.callback, r.xid, cause);
    }

    private static void notify(ReplyCallback cb, int xid, Throwable t) {
        try {
            cb.onFailure(t);
        } catch (Throwable e) {
            LOG.log(Level.WARNING, "failure callback threw for call 0x" + Integer.toHexString(xid), e);
        }
    }
}
