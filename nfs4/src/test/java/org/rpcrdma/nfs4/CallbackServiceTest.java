package org.rpcrdma.nfs4;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rpcrdma.oncrpc.RpcDispatcher;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * The callback service behind an {@link RpcDispatcher} on a client's backchannel, over an
 * {@link InMemoryPair}: the "server" sends CB_NULL and CB_COMPOUNDs written by hand from
 * RFC 5662 / RFC 5531 as backward calls, and each reply is compared with the bytes the RFCs
 * require, word for word.
 */
class CallbackServiceTest {
    static final byte[] SESSION = XdrBytes.seq(16, 0x50);
    static final byte[] OTHER = XdrBytes.seq(12, 0x10);
    static final byte[] FH = XdrBytes.seq(20, 0x60);
    static final int SLOTS = 2;

    private InMemoryPair pair;
    private CallbackService service;
    private final List<CbCompound.RecallArgs> recalled = new ArrayList<>();
    private final List<Integer> recallXids = new ArrayList<>();

    @BeforeEach
    void open() {
        service = new CallbackService((r, xid) -> {
            recalled.add(r);
            recallXids.add(xid);
            return r.stateid().sameState(new Stateid(0, OTHER)) ? Nfs4.NFS4_OK : Nfs4.NFS4ERR_BAD_STATEID;
        });
        RpcDispatcher d = new RpcDispatcher();
        service.register(d);
        pair = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(SLOTS).build(), call -> { });
        pair.client().serveBackwardCalls(d);
        pair.server().markBackchannelReady();
    }

    @AfterEach
    void close() {
        pair.close();
    }

    /** RPC call header (RFC 5531 §9) of a backward call to the callback program, AUTH_SYS as nfsd sends it. */
    static XdrBytes call(int xid, int proc) {
        return new XdrBytes().u32(xid, 0, 2, 0x40000000L, 1, proc)
                .u32(1).opaque(new XdrBytes().u32(0).str("nfsd").u32(0, 0, 0).bytes()) // AUTH_SYS
                .u32(0, 0); // verifier AUTH_NONE
    }

    /** Accepted SUCCESS reply header for {@code xid}. */
    static XdrBytes reply(int xid) {
        return new XdrBytes().u32(xid, 1, 0, 0, 0, 0);
    }

    static XdrBytes cbSequence(XdrBytes b, byte[] session, int seq, int slot) {
        return b.u32(11).fixed(session).u32(seq, slot, 0, 0).u32(0);
    }

    static XdrBytes cbRecall(XdrBytes b, byte[] other) {
        return b.u32(4).u32(1).fixed(other).u32(0).opaque(FH);
    }

    byte[] send(byte[] call) throws Exception {
        try (ReceivedMessage m = pair.server().call(MemorySegment.ofArray(call)).get(5, TimeUnit.SECONDS)) {
            return m.toByteArray();
        }
    }

    /** CB_COMPOUND4res: status, tag "t", then the results as given. */
    static XdrBytes res(int xid, int status, int count) {
        return reply(xid).u32(status).str("t").u32(count);
    }

    static XdrBytes seqOk(XdrBytes b, int seq, int slot) {
        return b.u32(11, 0).fixed(SESSION).u32(seq, slot, SLOTS - 1, SLOTS - 1);
    }

    @Test
    void cbNullIsAnsweredWithNoResults() throws Exception {
        assertArrayEquals(reply(0x77).bytes(), send(call(0x77, 0).bytes()));
    }

    @Test
    void aRecallInASequenceIsAnsweredOkAndReachesTheClient() throws Exception {
        service.session(SESSION, SLOTS);
        byte[] c = cbRecall(cbSequence(call(0x100, 1).str("t").u32(1, 0, 2), SESSION, 1, 0), OTHER).bytes();
        assertArrayEquals(seqOk(res(0x100, 0, 2), 1, 0).u32(4, 0).bytes(), send(c));
        assertEquals(1, recalled.size());
        assertEquals(new Stateid(1, OTHER), recalled.get(0).stateid());
        assertArrayEquals(FH, recalled.get(0).fh());
        assertEquals(List.of(0x100), recallXids, "the handler learns the backward call's XID");
        assertEquals(List.of(0x100), service.compoundXids());
        assertEquals(1, pair.client().stats().callsReceived(), "a backward call on the client's connection");

        // the next on slot 0 is sequence 2; slot 1 starts at 1; an unknown stateid is BAD_STATEID
        byte[] c2 = cbRecall(cbSequence(call(0x101, 1).str("t").u32(1, 0, 2), SESSION, 1, 1), XdrBytes.seq(12, 0))
                .bytes();
        assertArrayEquals(seqOk(res(0x101, Nfs4.NFS4ERR_BAD_STATEID, 2), 1, 1).u32(4, Nfs4.NFS4ERR_BAD_STATEID)
                .bytes(), send(c2));
    }

    @Test
    void aRetryOfTheSlotsLastRequestGetsTheCachedReplyWithoutRecallingAgain() throws Exception {
        service.session(SESSION, SLOTS);
        byte[] c = cbRecall(cbSequence(call(0x200, 1).str("t").u32(1, 0, 2), SESSION, 1, 0), OTHER).bytes();
        byte[] first = send(c);
        byte[] again = cbRecall(cbSequence(call(0x201, 1).str("t").u32(1, 0, 2), SESSION, 1, 0), OTHER).bytes();
        byte[] second = send(again);
        assertArrayEquals(java.util.Arrays.copyOfRange(first, 4, first.length),
                java.util.Arrays.copyOfRange(second, 4, second.length), "the same CB_COMPOUND4res");
        assertEquals(1, recalled.size(), "the recall ran once");
        // sequence 3 skips 2: misordered, nothing else runs
        byte[] skip = cbRecall(cbSequence(call(0x202, 1).str("t").u32(1, 0, 2), SESSION, 3, 0), OTHER).bytes();
        assertArrayEquals(res(0x202, Nfs4.NFS4ERR_SEQ_MISORDERED, 1).u32(11, Nfs4.NFS4ERR_SEQ_MISORDERED).bytes(),
                send(skip));
        assertEquals(1, recalled.size());
    }

    @Test
    void sequenceRulesRefuseBeforeAnythingRuns() throws Exception {
        // before CREATE_SESSION told us the session: BADSESSION
        byte[] early = cbSequence(call(1, 1).str("t").u32(1, 0, 1), SESSION, 1, 0).bytes();
        assertArrayEquals(res(1, Nfs4.NFS4ERR_BADSESSION, 1).u32(11, Nfs4.NFS4ERR_BADSESSION).bytes(), send(early));
        service.session(SESSION, SLOTS);
        byte[] other = cbSequence(call(2, 1).str("t").u32(1, 0, 1), XdrBytes.seq(16, 0), 1, 0).bytes();
        assertArrayEquals(res(2, Nfs4.NFS4ERR_BADSESSION, 1).u32(11, Nfs4.NFS4ERR_BADSESSION).bytes(), send(other));
        byte[] slot = cbSequence(call(3, 1).str("t").u32(1, 0, 1), SESSION, 1, SLOTS).bytes();
        assertArrayEquals(res(3, Nfs4.NFS4ERR_BADSLOT, 1).u32(11, Nfs4.NFS4ERR_BADSLOT).bytes(), send(slot));
        byte[] noSeq = cbRecall(call(4, 1).str("t").u32(1, 0, 1), OTHER).bytes();
        assertArrayEquals(res(4, Nfs4.NFS4ERR_OP_NOT_IN_SESSION, 1).u32(4, Nfs4.NFS4ERR_OP_NOT_IN_SESSION).bytes(),
                send(noSeq));
        byte[] twice = cbSequence(cbSequence(call(5, 1).str("t").u32(1, 0, 2), SESSION, 1, 0), SESSION, 2, 0).bytes();
        assertArrayEquals(seqOk(res(5, Nfs4.NFS4ERR_SEQUENCE_POS, 2), 1, 0).u32(11, Nfs4.NFS4ERR_SEQUENCE_POS)
                .bytes(), send(twice));
        byte[] minor = cbSequence(call(6, 1).str("t").u32(2, 0, 1), SESSION, 2, 0).bytes();
        assertArrayEquals(res(6, Nfs4.NFS4ERR_MINOR_VERS_MISMATCH, 0).bytes(), send(minor));
        assertEquals(0, recalled.size());
    }

    @Test
    void otherCallbackOperationsAreNotSupportedAndUnknownCodesIllegal() throws Exception {
        service.session(SESSION, SLOTS);
        // CB_GETATTR (3) after CB_SEQUENCE: NFS4ERR_NOTSUPP; its arguments are never read
        byte[] getattr = cbSequence(call(7, 1).str("t").u32(1, 0, 2), SESSION, 1, 0).u32(3).u32(0xdead).bytes();
        assertArrayEquals(seqOk(res(7, Nfs4.NFS4ERR_NOTSUPP, 2), 1, 0).u32(3, Nfs4.NFS4ERR_NOTSUPP).bytes(),
                send(getattr));
        // code 99: CB_ILLEGAL with NFS4ERR_OP_ILLEGAL (RFC 8881 §20.14)
        byte[] illegal = cbSequence(call(8, 1).str("t").u32(1, 0, 2), SESSION, 1, 1).u32(99).bytes();
        assertArrayEquals(seqOk(res(8, Nfs4.NFS4ERR_OP_ILLEGAL, 2), 1, 1).u32(10044, Nfs4.NFS4ERR_OP_ILLEGAL).bytes(),
                send(illegal));
        // a known op first, no CB_SEQUENCE: not in a session
        byte[] first = call(9, 1).str("t").u32(1, 0, 1).u32(6).bytes();
        assertArrayEquals(res(9, Nfs4.NFS4ERR_OP_NOT_IN_SESSION, 1).u32(6, Nfs4.NFS4ERR_OP_NOT_IN_SESSION).bytes(),
                send(first));
        assertEquals(0, recalled.size());
    }

    @Test
    void hostileArgumentsAreGarbageArgsNeverAnAllocation() throws Exception {
        service.session(SESSION, SLOTS);
        // an op count near 2^32, over MAX_CB_OPS, a tag length near 2^32, a filehandle over NFS4_FHSIZE,
        // a referring-call count past the message, a cachethis that is not a bool
        List<byte[]> calls = List.of(
                call(10, 1).str("t").u32(1, 0, 0xFFFF_FFFFL).bytes(),
                call(11, 1).str("t").u32(1, 0, Nfs4.MAX_CB_OPS + 1).bytes(),
                call(12, 1).u32(0xFFFF_FFF0L).bytes(),
                cbSequence(call(13, 1).str("t").u32(1, 0, 2), SESSION, 1, 0).u32(4).u32(1).fixed(OTHER).u32(0)
                        .opaque(new byte[129]).bytes(),
                call(14, 1).str("t").u32(1, 0, 1).u32(11).fixed(SESSION).u32(1, 0, 0, 0).u32(1).fixed(SESSION)
                        .u32(1_000_000).bytes(),
                call(15, 1).str("t").u32(1, 0, 1).u32(11).fixed(SESSION).u32(1, 0, 0, 2, 0).bytes());
        int xid = 10;
        for (byte[] c : calls) {
            assertArrayEquals(new XdrBytes().u32(xid, 1, 0, 0, 0, 4).bytes(), send(c), "GARBAGE_ARGS for " + xid);
            xid++;
        }
        assertEquals(0, service.compounds.sum(), "none reached the service");
    }
}
