package org.rpcrdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.chunk.ChunkBuffer;
import org.rpcrdma.transport.chunk.ChunkMemory;
import org.rpcrdma.transport.chunk.RegisteredMemory;
import org.rpcrdma.transport.chunk.WindowPool;
import org.rpcrdma.transport.link.WrId;

/**
 * The lifetime of memory a connection hands to the device (ChunkMemory): memory is freed
 * only after its registration is gone. rxe refuses ibv_dereg_mr while a memory window is
 * bound over the region (EINVAL, IBA 10.6.7.2.6), and a window stays bound when its
 * LOCAL_INV never ran because the connection failed first; until the window is
 * deallocated the region still pins the pages, so freeing them would hand the process's
 * allocator memory the device may still reach. Real rxe: a connected pair, a window bound
 * over the buffer, the server's side disconnected before the call's rkey is withdrawn.
 */
class ChunkMemoryLifetimeTest extends VerbsTestBase {

    /** Binds a window over {@code b} through {@code chunks} and proves it with a client RDMA Write. */
    private static int exposeAndWrite(Loopback lb, ChunkMemory chunks, ChunkBuffer b) {
        int rkey = chunks.exposeReadWrite(b, 0, 4096);
        lb.clientMr.segment().setString(0, "through the window");
        lb.send.clear();
        lb.send.rdmaWrite(30, lb.clientMr.lkey(), lb.clientMr.address(), 19, b.segment().address(), rkey,
                SendBatch.SIGNALED);
        lb.clientQp.postSend(lb.send);
        expectSuccess(lb.clientCq, lb.wc, WorkCompletions.OPCODE_RDMA_WRITE);
        assertEquals("through the window", b.segment().getString(0));
        return rkey;
    }

    /**
     * The connection fails, then the call's rkey is withdrawn: the LOCAL_INV is refused or
     * flushed, so the window stays bound; runs what the withdrawal runs next (the buffer's
     * release) as the link does.
     */
    private static void withdrawAfterFailure(Loopback lb, ChunkMemory chunks, int rkey, Runnable then) {
        lb.server.disconnect(); // the server's QP goes to the error state
        expectEvent(lb.clientChannel, CmEvent.Type.DISCONNECTED);
        if (chunks.withdraw(new int[] {rkey}, 1, then)) {
            then.run(); // the post itself was refused
            return;
        }
        assertEquals(1, pollOne(lb.serverCq, lb.wc));
        long wrId = lb.wc.wrId(0);
        assertEquals(WrId.OP_LOCAL_INV, WrId.op(wrId));
        assertNotEquals(WorkCompletions.SUCCESS, lb.wc.status(0), "the LOCAL_INV must not have run");
        Runnable next = chunks.invalidated(WrId.slot(wrId), false);
        assertTrue(next != null, "the withdrawal's continuation");
        next.run();
    }

    @Test
    void callerMemoryStaysAllocatedWhileAWindowIsBoundOverItsRegistration() {
        AtomicInteger freed = new AtomicInteger();
        try (Loopback lb = new Loopback(deviceAddress())) {
            ChunkMemory chunks = new ChunkMemory(lb.serverPd, null, new WindowPool(lb.serverPd, lb.serverQp, 1, 2),
                    null, Runnable::run);
            int regions = LiveResources.count("MemoryRegion");
            RegisteredMemory r = new RegisteredMemory(b -> freed.incrementAndGet(), 16 * 1024);
            MemorySegment memory = r.segment();
            r.use(); // a call exposes it
            ChunkBuffer chunk = chunks.callerChunk(r, memory);
            int rkey = exposeAndWrite(lb, chunks, chunk);
            r.close(); // the caller closes its buffer during the call: deferred to the call's end

            withdrawAfterFailure(lb, chunks, rkey, chunk::release);
            assertTrue(memory.scope().isAlive(),
                    "the caller's memory was freed while its registration still pins it (a window is bound over it)");
            assertEquals(0, freed.get(), "freed while registered");
            assertEquals(1, LiveResources.count("MemoryRegion") - regions, "the registration is still open");

            lb.serverQp.close(); // the link goes: QP first, then its chunk memory (windows, then registrations)
            assertEquals(0, chunks.closeAll().length);
            assertFalse(memory.scope().isAlive(), "freed once its registration is gone");
            assertEquals(1, freed.get(), "freed exactly once");
            assertEquals(regions, LiveResources.count("MemoryRegion"), "only the pair's own regions are left");
        }
    }

    @Test
    void chunkBufferOfItsOwnStaysAllocatedWhileAWindowIsBoundOverIt() {
        try (Loopback lb = new Loopback(deviceAddress())) {
            ChunkMemory chunks = new ChunkMemory(lb.serverPd, null, new WindowPool(lb.serverPd, lb.serverQp, 1, 2),
                    null, Runnable::run);
            int regions = LiveResources.count("MemoryRegion");
            ChunkBuffer chunk = chunks.allocate(8192); // no pool: a registration of its own
            MemorySegment memory = chunk.segment();
            int rkey = exposeAndWrite(lb, chunks, chunk);

            assertDoesNotThrow(() -> withdrawAfterFailure(lb, chunks, rkey, chunk::release),
                    "releasing a buffer whose deregistration must wait");
            assertTrue(memory.scope().isAlive(),
                    "the buffer was freed while its registration still pins it (a window is bound over it)");
            assertEquals(1, LiveResources.count("MemoryRegion") - regions, "the registration is still open");

            lb.serverQp.close();
            chunks.closeAll();
            assertFalse(memory.scope().isAlive(), "freed once its registration is gone");
            assertEquals(regions, LiveResources.count("MemoryRegion"), "only the pair's own regions are left");
        }
    }
}
