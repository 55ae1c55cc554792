package org.rpcrdma.nfs4.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.rpcrdma.nfs4.Nfs4;

/** The server's slot table and reply cache (RFC 8881 §2.10.6.1). */
class ReplyCacheTest {
    private static final CompoundCodec.Result REPLY = new CompoundCodec.Result(0, new byte[0], List.of());

    @Test
    void theNextIdRunsTheSameIdIsAReplayAnsweredFromTheCacheOthersAreMisordered() {
        ReplyCache c = new ReplyCache(2);
        assertSame(ReplyCache.Admission.RUN, c.admit(0, 1));
        assertEquals(Nfs4.NFS4ERR_DELAY, c.admit(0, 1).status(), "a replay while the first still runs");
        c.done(0, REPLY, true);
        ReplyCache.Admission replay = c.admit(0, 1);
        assertEquals(Nfs4.NFS4_OK, replay.status());
        assertSame(REPLY, replay.reply(), "the reply the slot kept");
        assertEquals(Nfs4.NFS4ERR_SEQ_MISORDERED, c.admit(0, 3).status());
        assertEquals(Nfs4.NFS4ERR_SEQ_MISORDERED, c.admit(1, 0).status(), "a slot starts at 1");
        assertEquals(Nfs4.NFS4ERR_BADSLOT, c.admit(2, 1).status());

        assertSame(ReplyCache.Admission.RUN, c.admit(0, 2));
        c.done(0, REPLY, false);
        assertEquals(Nfs4.NFS4ERR_RETRY_UNCACHED_REP, c.admit(0, 2).status(), "sa_cachethis was false");
        assertSame(ReplyCache.Admission.RUN, c.admit(0, 3));
    }
}
