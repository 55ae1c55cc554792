package org.rpcrdma.oncrpc;

import java.util.concurrent.atomic.AtomicBoolean;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.IncomingCall;
import org.rpcrdma.xdr.AuthSys;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.OpaqueAuth;
import org.rpcrdma.xdr.RpcReplyHeader;

/**
 * A call being served: who sent it and how to answer it. Answer exactly once, now or
 * later, from any thread: {@link #reply} with results, or one of the error replies a
 * procedure may give (RFC 5531 §9). A second answer throws {@link IllegalStateException}.
 *
 * @param <R> the procedure's result type
 */
public final class RpcServerCall<R> {
    private final IncomingCall in;
    private final int program;
    private final int version;
    private final int procedure;
    private final int authFlavor;
    private final AuthSys authSys;
    private final XdrCodec<R> results;
    private final AtomicBoolean answered = new AtomicBoolean();

    RpcServerCall(IncomingCall in, int program, int version, int procedure, int authFlavor, AuthSys authSys,
            XdrCodec<R> results) {
        this.in = in;
        this.program = program;
        this.version = version;
        this.procedure = procedure;
        this.authFlavor = authFlavor;
        this.authSys = authSys;
        this.results = results;
    }

    public int xid() {
        return in.xid();
    }

    public int program() {
        return program;
    }

    public int version() {
        return version;
    }

    public int procedure() {
        return procedure;
    }

    /** The credential's flavor: {@link OncRpc#AUTH_NONE} or {@link OncRpc#AUTH_SYS}. */
    public int authFlavor() {
        return authFlavor;
    }

    /** The caller's AUTH_SYS credential (uid, gid, gids, machine name), or null for AUTH_NONE. */
    public AuthSys authSys() {
        return authSys;
    }

    /**
     * The connection the call came on: on a server, the one to make backward calls on to
     * this client (once it enabled its backchannel); on a client, the backchannel's.
     */
    public Connection connection() {
        return in.connection();
    }

    /** The caller's address ({@link Connection#remoteAddress()}): for export rules by address. */
    public java.net.InetSocketAddress remoteAddress() {
        return in.connection().remoteAddress();
    }

    /**
     * On a server, the calling client's instance id ({@link Connection#clientId()}), the id
     * its backchannel is found by ({@code RpcRdmaServer.backchannel(id)}); 0 until the client
     * enabled its backchannel.
     */
    public long clientId() {
        return in.connection().clientId();
    }

    /** Whether the call has been answered. */
    public boolean isAnswered() {
        return answered.get();
    }

    /**
     * Answers MSG_ACCEPTED / SUCCESS with {@code result}. Its DDP-eligible items
     * ({@link Codecs#payload}, say an NFS READ's data) go into the write chunks the caller
     * offered, the k-th item into the k-th chunk (RFC 8166 §3.4.6); the rest inline, or
     * through the caller's Reply chunk when it does not fit inline ({@link DdpReply}).
     *
     * @throws org.rpcrdma.transport.ReplyRefusedException if the reply cannot be sent as
     *         the call allows (too large to go inline with no Reply chunk, or an item larger
     *         than its write chunk): the caller got RDMA_ERROR / ERR_CHUNK instead
     */
    public void reply(R result) {
        claim();
        MessageEncoder.Encoded m;
        try {
            m = MessageEncoder.encodeLeavingOut(w -> {
                RpcReplyHeader.encodeAccepted(w, in.xid(), OpaqueAuth.NONE, OncRpc.SUCCESS);
                results.encode(w, result);
            }, DdpReply.placeable(in));
        } catch (RuntimeException e) {
            in.reply(Replies.accepted(in.xid(), OncRpc.SYSTEM_ERR)); // the caller still gets its answer
            throw e;
        }
        DdpReply.send(in, m);
    }

    /** Answers SYSTEM_ERR (the server failed). */
    public void replySystemErr() {
        claim();
        in.reply(Replies.accepted(in.xid(), OncRpc.SYSTEM_ERR));
    }

    /** Answers GARBAGE_ARGS (arguments that decode but the procedure can't take). */
    public void replyGarbageArgs() {
        claim();
        in.reply(Replies.accepted(in.xid(), OncRpc.GARBAGE_ARGS));
    }

    /** Answers MSG_DENIED / AUTH_ERROR, e.g. {@link OncRpc#AUTH_TOOWEAK} for a credential this procedure refuses. */
    public void replyAuthError(int authStat) {
        claim();
        in.reply(Replies.authError(in.xid(), authStat));
    }

    /** The dispatcher's SYSTEM_ERR for a handler that threw, unless it answered first. */
    void answerIfUnanswered() {
        if (answered.compareAndSet(false, true)) {
            in.reply(Replies.accepted(in.xid(), OncRpc.SYSTEM_ERR));
        }
    }

    private void claim() {
        if (!answered.compareAndSet(false, true)) {
            throw new IllegalStateException("call 0x" + Integer.toHexString(in.xid()) + " already answered");
        }
    }
}
