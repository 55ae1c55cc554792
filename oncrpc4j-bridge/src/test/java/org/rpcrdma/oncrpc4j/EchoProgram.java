package org.rpcrdma.oncrpc4j;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.dcache.oncrpc4j.rpc.OncRpcProgram;
import org.dcache.oncrpc4j.rpc.RpcAuthError;
import org.dcache.oncrpc4j.rpc.RpcAuthException;
import org.dcache.oncrpc4j.rpc.RpcAuthStat;
import org.dcache.oncrpc4j.rpc.RpcAuthTypeNone;
import org.dcache.oncrpc4j.rpc.RpcAuthTypeUnix;
import org.dcache.oncrpc4j.rpc.RpcCall;
import org.dcache.oncrpc4j.rpc.RpcDispatchable;
import org.dcache.oncrpc4j.xdr.XdrInt;
import org.dcache.oncrpc4j.xdr.XdrVoid;

/**
 * An oncrpc4j program as its users write them (no knowledge of RDMA): echo, the caller's
 * AUTH_SYS identity, each failure oncrpc4j offers, a call back to the client on the call's
 * own transport (as nfs4j sends CB_RECALL), and a call that answers only when released.
 */
public final class EchoProgram implements RpcDispatchable {
    public static final int PROG = 0x20000099;
    public static final int VERS = 1;
    public static final OncRpcProgram PROGRAM = new OncRpcProgram(PROG, VERS);
    public static final int CB_PROG = 0x40000099;
    public static final OncRpcProgram CB_PROGRAM = new OncRpcProgram(CB_PROG, VERS);

    public static final int NULL = 0;
    public static final int ECHO = 1;
    public static final int WHOAMI = 2;
    public static final int ADD = 3; // two ints: GARBAGE_ARGS when they are not there
    public static final int SYSTEM = 4; // failRpcSystem
    public static final int THROWS = 5; // a RuntimeException: SYSTEM_ERR
    public static final int TOO_WEAK = 6; // RpcAuthException: AUTH_ERROR
    public static final int MISMATCH = 7; // failProgramMismatch
    public static final int CALLBACK = 8; // echoes the client's callback answer to the argument
    public static final int SLOW = 9; // answers when released

    public final CountDownLatch release = new CountDownLatch(1);

    @Override
    public void dispatchOncRpcCall(RpcCall call) throws IOException {
        switch (call.getProcedure()) {
            case NULL -> {
                call.retrieveCall(XdrVoid.XDR_VOID);
                call.reply(XdrVoid.XDR_VOID);
            }
            case ECHO -> {
                Blob b = new Blob();
                call.retrieveCall(b);
                call.reply(b);
            }
            case WHOAMI -> {
                call.retrieveCall(XdrVoid.XDR_VOID);
                Ids ids = new Ids();
                if (call.getCredential() instanceof RpcAuthTypeUnix unix) {
                    ids.uid = unix.uid();
                    ids.gid = unix.gid();
                    ids.gids = unix.gids();
                } else {
                    ids.uid = -1;
                    ids.gid = -1;
                }
                call.reply(ids);
            }
            case ADD -> {
                XdrInt a = new XdrInt();
                XdrInt b = new XdrInt();
                a.xdrDecode(call.getXdr());
                b.xdrDecode(call.getXdr());
                call.reply(new XdrInt(a.intValue() + b.intValue()));
            }
            case SYSTEM -> call.failRpcSystem();
            case THROWS -> throw new IllegalStateException("the program failed");
            case TOO_WEAK -> throw new RpcAuthException("too weak", new RpcAuthError(RpcAuthStat.AUTH_TOOWEAK));
            case MISMATCH -> call.failProgramMismatch(2, 3);
            case CALLBACK -> {
                Blob arg = new Blob();
                call.retrieveCall(arg);
                Blob answer = new Blob();
                try {
                    new RpcCall(CB_PROG, VERS, new RpcAuthTypeNone(), call.getTransport())
                            .call(ECHO, arg, answer, 30, TimeUnit.SECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    call.failRpcSystem();
                    return;
                }
                call.reply(answer);
            }
            case SLOW -> {
                call.retrieveCall(XdrVoid.XDR_VOID);
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                call.reply(XdrVoid.XDR_VOID);
            }
            default -> call.failProcedureUnavailable();
        }
    }

    /** The client's side of the callback program: answers ECHO with the bytes reversed. */
    public static RpcDispatchable callbackService() {
        return call -> {
            Blob b = new Blob();
            call.retrieveCall(b);
            byte[] r = new byte[b.bytes.length];
            for (int i = 0; i < r.length; i++) {
                r[i] = b.bytes[r.length - 1 - i];
            }
            call.reply(new Blob(r));
        };
    }
}
