package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.xdr.Xdr;

/**
 * The JFR event of one use of a {@link CallRequest}: nothing allocated or read per call
 * unless a recording has the call event enabled.
 */
final class CallEvent {
    private Events.Call e;

    /**
     * A new call: program, version and procedure are read now, from the call header (RFC
     * 5531 §9: xid, msg_type, rpcvers, prog, vers, proc), while the caller's bytes are
     * certainly readable on this thread.
     */
    void begin(int xid, MemorySegment message) {
        if (!Events.CALL_PROBE.isEnabled()) {
            if (e != null) {
                e = null;
            }
            return;
        }
        Events.Call c = new Events.Call();
        c.begin();
        c.xid = xid;
        c.callBytes = message.byteSize();
        if (message.byteSize() >= 24) {
            c.program = Xdr.getInt(message, 12);
            c.version = Xdr.getInt(message, 16);
            c.procedure = Xdr.getInt(message, 20);
        }
        e = c;
    }

    /**
     * The size of {@code reply} (0 when no event is recorded): its message and what the
     * responder placed in our write chunks. Read before the reply is handed to the caller,
     * who may release it at once.
     */
    long replyBytes(ReceivedMessage reply) {
        return e == null ? 0 : reply.bytes().byteSize() + Math.max(0, reply.placedBytes());
    }

    /** The size of an inline reply in a receive buffer (0 when no event is recorded). */
    long replyBytes(MemorySegment view) {
        return e == null ? 0 : view.byteSize();
    }

    /** This use's event, or null: read before the call ends, ended after ({@link #end(Events.Call, CallRequest, String, long)}). */
    Events.Call current() {
        return e;
    }

    /** The call ended with {@code outcome}: recorded if it took long enough. */
    void end(CallRequest r, String outcome, long replyBytes) {
        end(e, r, outcome, replyBytes);
    }

    /** Use {@code c} of {@code r} ended with {@code outcome}. */
    static void end(Events.Call c, CallRequest r, String outcome, long replyBytes) {
        if (c == null) {
            return;
        }
        c.end();
        if (c.shouldCommit()) {
            Requester owner = r.place.owner();
            c.connection = owner == null ? "" : owner.connectionName();
            c.direction = owner == null ? "" : owner.direction().name();
            c.outcome = outcome;
            c.replyBytes = replyBytes;
            c.commit();
        }
    }
}
