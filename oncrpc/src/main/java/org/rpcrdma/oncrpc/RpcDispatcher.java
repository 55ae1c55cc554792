package org.rpcrdma.oncrpc;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import org.rpcrdma.transport.CallHandler;
import org.rpcrdma.transport.IncomingCall;
import org.rpcrdma.xdr.AuthSys;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.RpcCallHeader;
import org.rpcrdma.xdr.RpcMessageException;
import org.rpcrdma.xdr.XdrException;
import org.rpcrdma.xdr.XdrReader;

/**
 * The server side of ONC RPC (RFC 5531): programs, versions and procedures registered
 * here, calls decoded, checked and handed to their {@link RpcHandler}. It is a transport
 * {@link CallHandler}, so the same dispatcher serves forward calls on a server
 * ({@code RpcRdmaServer.listen(addr, options, dispatcher, null)}, {@code InMemoryPair})
 * and backward calls on a client ({@code client.enableBackchannel(dispatcher)} or
 * {@code serveBackwardCalls}).
 *
 * <pre>{@code
 * RpcDispatcher d = new RpcDispatcher();
 * d.program(PROG, 1).procedure(ECHO, (args, call) -> call.reply(args));
 * }</pre>
 *
 * <p>What it answers itself, in the order RFC 5531 §9 implies (the call must be readable
 * and authenticated before its program is looked at):
 * <ul>
 * <li>rpcvers != 2: MSG_DENIED / RPC_MISMATCH (low 2, high 2);
 * <li>a credential or verifier that does not decode, an AUTH_SYS body that does not, or a
 *     flavor other than AUTH_NONE / AUTH_SYS: MSG_DENIED / AUTH_ERROR with AUTH_BADCRED
 *     (AUTH_BADVERF for the verifier), as Linux's svc_authenticate does; never a dropped
 *     call, which over RDMA would also keep the peer's credit;
 * <li>a program not registered: PROG_UNAVAIL; registered at other versions only:
 *     PROG_MISMATCH with the lowest and highest registered;
 * <li>procedure 0: SUCCESS with no results, always (§12.1), whatever its arguments;
 * <li>a procedure not registered: PROC_UNAVAIL;
 * <li>arguments that do not decode (a bool not 0 or 1, an enum value outside its set, a
 *     length over its bound or past the message): GARBAGE_ARGS;
 * <li>a header too short to name its procedure: GARBAGE_ARGS (the RFC says nothing; an
 *     answer returns the caller's credit);
 * <li>a handler that throws before answering: SYSTEM_ERR.
 * </ul>
 * The arguments are decoded into Java objects before the handler runs, so the receive
 * buffer is given back at once, even when the handler replies much later. One exception
 * saves a copy of bulk data: a {@link Codecs#payload} argument that came by RDMA Read (a
 * read chunk, RFC 8166 §3.4.5) is a read-only view of the memory it was read into, which
 * is not a receive buffer; that memory is kept until the call is answered. Thread-safe;
 * programs may be registered while calls are served.
 */
public final class RpcDispatcher implements CallHandler {
    private static final System.Logger LOG = System.getLogger(RpcDispatcher.class.getName());

    /** program -> version -> its procedures; versions sorted for PROG_MISMATCH's low and high. */
    private final Map<Integer, ConcurrentSkipListMap<Integer, RpcProgramVersion>> programs = new ConcurrentHashMap<>();

    /** Creates a dispatcher with no programs: every call is answered PROG_UNAVAIL until one is registered. */
    public RpcDispatcher() {}

    /**
     * The registration of {@code program} version {@code version}, made on first use; add
     * its procedures to it.
     */
    public RpcProgramVersion program(int program, int version) {
        // versions compare as unsigned, as PROG_MISMATCH's low/high are unsigned ints
        return programs.computeIfAbsent(program, p -> new ConcurrentSkipListMap<>(Integer::compareUnsigned))
                .computeIfAbsent(version, v -> new RpcProgramVersion(program, v));
    }

    @Override
    public void handle(IncomingCall in) {
        MemorySegment b = in.message().bytes();
        XdrReader r = new XdrReader(b, 0, b.byteSize());
        RpcCallHeader h = new RpcCallHeader();
        try {
            h.decode(r);
        } catch (RpcMessageException e) {
            in.reply(switch (e.reason()) {
                case RPC_VERSION_MISMATCH -> Replies.rpcMismatch(in.xid());
                case BAD_CREDENTIAL -> Replies.authError(in.xid(), OncRpc.AUTH_BADCRED);
                case BAD_VERIFIER -> Replies.authError(in.xid(), OncRpc.AUTH_BADVERF);
                default -> Replies.accepted(in.xid(), OncRpc.GARBAGE_ARGS);
            });
            return;
        }
        AuthSys authSys = null;
        if (h.credFlavor() == OncRpc.AUTH_SYS) {
            try {
                authSys = h.authSys();
            } catch (RpcMessageException e) {
                in.reply(Replies.authError(in.xid(), OncRpc.AUTH_BADCRED));
                return;
            }
        } else if (h.credFlavor() != OncRpc.AUTH_NONE) {
            in.reply(Replies.authError(in.xid(), OncRpc.AUTH_BADCRED));
            return;
        }
        ConcurrentSkipListMap<Integer, RpcProgramVersion> versions = programs.get(h.prog());
        if (versions == null || versions.isEmpty()) {
            in.reply(Replies.accepted(in.xid(), OncRpc.PROG_UNAVAIL));
            return;
        }
        RpcProgramVersion v = versions.get(h.vers());
        if (v == null) {
            in.reply(Replies.progMismatch(in.xid(), versions.firstKey(), versions.lastKey()));
            return;
        }
        if (h.proc() == 0) {
            in.reply(Replies.accepted(in.xid(), OncRpc.SUCCESS));
            return;
        }
        RpcProgramVersion.Entry<?, ?> e = v.entry(h.proc());
        if (e == null) {
            in.reply(Replies.accepted(in.xid(), OncRpc.PROC_UNAVAIL));
            return;
        }
        dispatch(in, h, authSys, r, e);
    }

    private <A, R> void dispatch(IncomingCall in, RpcCallHeader h, AuthSys authSys, XdrReader r,
            RpcProgramVersion.Entry<A, R> e) {
        A args;
        ArgumentViews views = ArgumentViews.begin(in.pulled());
        boolean viewed;
        try {
            try {
                args = e.procedure().args().decode(r);
            } finally {
                viewed = views.end();
            }
        } catch (XdrException | RuntimeException x) {
            // a codec that throws on bad input (say, a record's constructor refusing a
            // value) is the same as one that reports it: the arguments are garbage
            LOG.log(Level.DEBUG, "call 0x{0}: arguments do not decode: {1}", Integer.toHexString(in.xid()), x);
            in.reply(Replies.accepted(in.xid(), OncRpc.GARBAGE_ARGS));
            return;
        }
        if (!viewed) {
            in.message().release(); // decoded: the buffer goes back to the receive pool now
        } // else the handler reads a view of it: the answer releases it
        RpcServerCall<R> call = new RpcServerCall<>(in, h.prog(), h.vers(), h.proc(), h.credFlavor(), authSys,
                e.procedure().results());
        try {
            e.handler().handle(args, call);
        } catch (RuntimeException x) {
            LOG.log(Level.WARNING, "program " + Integer.toUnsignedString(h.prog()) + " version " + h.vers()
                    + " procedure " + h.proc() + ": handler threw; answering SYSTEM_ERR", x);
            call.answerIfUnanswered();
        }
    }
}
