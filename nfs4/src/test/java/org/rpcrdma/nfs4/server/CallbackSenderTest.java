package org.rpcrdma.nfs4.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.rpcrdma.nfs4.ChannelAttrs;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.oncrpc.Codecs;
import org.rpcrdma.oncrpc.RpcDispatcher;
import org.rpcrdma.oncrpc.RpcProcedure;
import org.rpcrdma.oncrpc.XdrCodec;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.xdr.OncRpc;

/**
 * The CB_COMPOUND of a recall as the client's callback service sees it: AUTH_SYS (the
 * Linux client refuses any callback but CB_NULL under AUTH_NONE), CB_SEQUENCE on slot 0
 * with sequence ID 1 then 2, CB_RECALL of the delegation's stateid and handle.
 */
class CallbackSenderTest {
    record Seen(int flavor, int firstOp, int sequenceId, int secondOp) {}

    @Test
    void aRecallIsAnAuthSysCbCompoundOfCbSequenceThenCbRecallOnSlotZero() throws Exception {
        XdrCodec<Seen> args = XdrCodec.of((w, s) -> { }, r -> {
            r.readOpaque(1024); // tag
            r.readInt(); // minorversion
            r.readInt(); // callback_ident
            r.readInt(); // ops
            int op = r.readInt();
            r.readFixedOpaque(Nfs4.NFS4_SESSIONID_SIZE);
            int seq = r.readInt();
            r.skip(16); // slot, highest, cachethis, referring lists
            return new Seen(0, op, seq, r.readInt());
        });
        CompletableFuture<Seen> seen = new CompletableFuture<>();
        RpcDispatcher callbacks = new RpcDispatcher();
        callbacks.program(Nfs4.CB_PROGRAM, Nfs4.CB_VERSION).procedure(new RpcProcedure<>(1, args, Codecs.INT),
                (a, call) -> {
                    seen.complete(new Seen(call.authFlavor(), a.firstOp(), a.sequenceId(), a.secondOp()));
                    call.reply(Nfs4.NFS4_OK);
                });
        try (InMemoryPair pair = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), in -> { })) {
            pair.client().serveBackwardCalls(callbacks);
            ChannelAttrs attrs = new ChannelAttrs(0, 4096, 4096, 0, 8, 1, -1);
            ClientTable t = new ClientTable(1_000_000_000L, id -> { });
            ClientTable.Exchanged x = t.exchangeId(new byte[] {1}, new byte[8], 0);
            Session s = t.createSession(x.clientId(), x.sequence(), attrs, attrs, Nfs4.CB_PROGRAM, 0);
            s.bindBackChannel(pair.server());
            pair.server().markBackchannelReady();
            Delegations.Delegation d = new Delegations(1).grant(x.clientId(), s, 42, new byte[FileHandles.SIZE]);

            assertEquals(Nfs4.NFS4_OK, new CallbackSender(5_000).recall(d).get(5, TimeUnit.SECONDS));
            assertEquals(new Seen(OncRpc.AUTH_SYS, Nfs4.OP_CB_SEQUENCE, 1, Nfs4.OP_CB_RECALL),
                    seen.get(5, TimeUnit.SECONDS));
            assertEquals(2, s.nextCallbackSequence(), "slot 0's next sequence ID");
        }
    }
}
