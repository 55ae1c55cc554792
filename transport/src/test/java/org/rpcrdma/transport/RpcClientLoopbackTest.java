package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.rpc.RpcClient;
import org.rpcrdma.transport.rpc.RpcReplyException;
import org.rpcrdma.transport.wire.AuthSys;
import org.rpcrdma.transport.wire.OncRpc;
import org.rpcrdma.transport.wire.OpaqueAuth;
import org.rpcrdma.transport.wire.RpcCallHeader;
import org.rpcrdma.transport.wire.RpcReplyHeader;
import org.rpcrdma.transport.wire.XdrReader;
import org.rpcrdma.transport.wire.XdrWriter;

class RpcClientLoopbackTest {
    /** Serves program 100003 v4 (NULL and an echo at proc 1); anything else PROG_UNAVAIL. */
    static CallHandler nfsLike(AtomicReference<AuthSys> seenCred) {
        return call -> {
            try {
                MemorySegment b = call.message().bytes();
                RpcCallHeader h = new RpcCallHeader().decode(new XdrReader(b, 0, b.byteSize()));
                if (h.credFlavor() == OncRpc.AUTH_SYS) {
                    seenCred.set(h.authSys());
                }
                boolean served = h.prog() == 100003 && h.vers() == 4;
                byte[] args = b.asSlice(h.argsOffset()).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
                byte[] r = new byte[24 + (served && h.proc() == 1 ? args.length : 0)];
                MemorySegment rs = MemorySegment.ofArray(r);
                RpcReplyHeader.encodeAccepted(new XdrWriter(rs, 0, 24), h.xid(), OpaqueAuth.NONE,
                        served ? OncRpc.SUCCESS : OncRpc.PROG_UNAVAIL);
                if (served && h.proc() == 1) {
                    System.arraycopy(args, 0, r, 24, args.length);
                }
                call.reply(rs);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        };
    }

    @Test
    void nullCallEchoAndErrors() throws Exception {
        AtomicReference<AuthSys> cred = new AtomicReference<>();
        try (LoopbackPair p = new LoopbackPair(1024, 8, 0, 8)) {
            p.server.handler(nfsLike(cred));
            new RpcClient(p.client, 100003, 4).nullCall();
            byte[] args = {0, 0, 0, 4, 'a', 'b', 'c', 'd'};
            AuthSys me = new AuthSys(1, "host", 1000, 1000, new int[] {1000, 27});
            assertArrayEquals(args, new RpcClient(p.client, 100003, 4).withAuthSys(me).call(1, args, 5, TimeUnit.SECONDS));
            assertEquals(me, cred.get());
            RpcReplyException e = assertThrows(RpcReplyException.class,
                    () -> new RpcClient(p.client, 100005, 3).nullCall());
            assertEquals(OncRpc.PROG_UNAVAIL, e.stat());
            assertTrue(e.getMessage().contains("PROG_UNAVAIL"));
        }
    }
}
