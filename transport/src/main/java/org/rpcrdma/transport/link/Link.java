package org.rpcrdma.transport.link;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.chunk.ChunkBuffer;

/**
 * What a {@code ConnectionEngine} needs from the hardware below it (≈ the verbs half of Linux
 * {@code rpcrdma_ep}): post one Send from a send-context buffer, post receive buffers, and
 * tear the connection down. Completions flow back through the connection's
 * {@code Arrivals} ({@code sendCompleted}, {@code received}, {@code flushed}) and its
 * {@code onLinkLost}, called by the link's completion poller.
 *
 * <p>The verbs implementation maps {@link #postSend} to one IBV_WR_SEND with one SGE on the
 * RC QP (wr_id = {@link WrId#pack}(OP_SEND, slot, generation)) and {@link #postReceives}
 * to one chained ibv_post_recv; a host test implementation copies bytes in memory.
 *
 * <p>Chunks (RFC 8166 §3.4) add RDMA Read and Write, always by the responder: a link that
 * supports them ({@link #rdmaDepth()} &gt; 0) hands out {@link ChunkBuffer}s, posts
 * {@link #postRead}/{@link #postWrite} from them, and reports each signalled one through
 * the connection's {@code Arrivals.rdmaCompleted(token)}; a failed one ends the connection
 * ({@code onLinkLost}), as the QP is then in error anyway. The requester side exposes
 * chunk buffers to the peer under an rkey of their own ({@link #expose}) and withdraws it
 * ({@link #withdraw}) before the call's caller sees the reply (RFC 8166 §4.4).
 */
public interface Link {
    /** Posts a Send of {@code buffer[0, length)}; buffer belongs to send context {@code slot}. */
    void postSend(int slot, MemorySegment buffer, int length, boolean signalled);

    /** Posts receives for the given receive-pool slots. */
    void postReceives(int[] slots, int count);

    /**
     * RDMA Reads and Writes this link lets the connection have outstanding at once (the
     * negotiated initiator depth, bounded by the send queue room kept for them); 0 if the
     * link does no RDMA Read or Write (chunked messages are then refused with ERR_CHUNK).
     */
    default int rdmaDepth() {
        return 0;
    }

    /**
     * Chunk memory of at least {@code bytes} bytes that work requests of this link can use.
     *
     * @throws UnsupportedOperationException if {@link #rdmaDepth()} is 0
     */
    default ChunkBuffer allocateChunk(long bytes) {
        throw new UnsupportedOperationException("this link does no RDMA Read or Write");
    }

    /**
     * Posts an RDMA Read of the peer's {@code [remoteOffset, +length)} under {@code rkey}
     * into {@code local[localOffset, +length)}; signalled, completing as {@code token}.
     */
    default void postRead(int token, ChunkBuffer local, long localOffset, int length, int rkey, long remoteOffset) {
        throw new UnsupportedOperationException("this link does no RDMA Read or Write");
    }

    /**
     * Posts an RDMA Write of {@code local[localOffset, +length)} to the peer's
     * {@code [remoteOffset, +length)} under {@code rkey}; signalled, completing as {@code token}.
     */
    default void postWrite(int token, ChunkBuffer local, long localOffset, int length, int rkey, long remoteOffset) {
        throw new UnsupportedOperationException("this link does no RDMA Read or Write");
    }

    /**
     * Until {@link #closeSendChain} on this thread, its {@link #postWrite}s and the window
     * binds of its {@link #expose}s wait to go out with the next Send in one post (one system
     * call; RC keeps them in order, so the Writes' data is placed before the Send completes
     * at the peer, RFC 8166 §3.5.4, and a window is bound before its rkey is named). False: not
     * opened (another thread has it, or the link posts each request as it comes); then do
     * not close it.
     */
    default boolean openSendChain() {
        return false;
    }

    /** Ends this thread's chain: Writes and binds whose Send was not posted meanwhile go out now. */
    default void closeSendChain() {
    }

    /** Whether {@link #allocateChunk} and {@link #expose} work here (a requester can offer chunks). */
    default boolean exposesMemory() {
        return false;
    }

    /**
     * The caller's {@code memory} as a chunk buffer to expose in place (zero copy), if it lies
     * in memory registered for this endpoint (a registered-buffer allocator's); null for
     * any other memory (the caller then copies it through {@link #allocateChunk}). The
     * buffer's release ends this use of the memory; release it only once its rkey is withdrawn.
     *
     * @throws IllegalStateException if it lies in a registered buffer that was closed
     */
    default ChunkBuffer callerChunk(MemorySegment memory) {
        return null;
    }

    /**
     * Lets the peer read ({@code writable} false) or write {@code local[offset, +length)}
     * under a fresh rkey, returned; valid until {@link #withdraw}.
     */
    default int expose(ChunkBuffer local, long offset, long length, boolean writable) {
        throw new UnsupportedOperationException("this link exposes no memory");
    }

    /**
     * As {@link #expose}, the peer may both read and write {@code local[offset, +length)}:
     * one rkey for a call's Read chunk and its Reply chunk, side by side in one buffer.
     */
    default int exposeReadWrite(ChunkBuffer local, long offset, long length) {
        throw new UnsupportedOperationException("this link exposes no memory");
    }

    /**
     * Whether we set R in our private data (RFC 8797 §4.1), so that the peer may invalidate
     * an rkey of ours by Send with Invalidate even where R was not negotiated: Linux's nfsd
     * clears R in its own private data yet sends them when the client sets R. An rkey the
     * peer may so invalidate must stay valid until its reply (our LOCAL_INV first would
     * make the peer's invalidation fail the connection).
     */
    default boolean rkeysInvalidatableByPeer() {
        return false;
    }

    /**
     * Withdraws the rkeys {@code rkeys[0, count)} from {@link #expose} (unknown ones are
     * ignored: idempotent) and runs {@code then} once the peer can use none of them: at
     * once (a deregistration, a window the peer's Send with Invalidate already withdrew,
     * a link that is gone) or, on the completion thread, once our LOCAL_INV completed
     * (RFC 8166 §4.4). Chunk memory is read or reused only from {@code then}.
     */
    default void withdraw(int[] rkeys, int count, Runnable then) {
        throw new UnsupportedOperationException("this link exposes no memory");
    }

    /**
     * Posts a Send as {@link #postSend} that also invalidates the peer's {@code rkey}
     * (IBV_WR_SEND_WITH_INV, RFC 8797 §7: the peer set R, and the call exposed exactly
     * that one rkey). A link that cannot sends it plainly: the peer then invalidates it itself.
     */
    default void postSendWithInvalidate(int slot, MemorySegment buffer, int length, boolean signalled, int rkey) {
        postSend(slot, buffer, length, signalled);
    }

    /** Starts disconnecting; pending work completes with flush errors or is dropped. Idempotent. */
    void disconnect();

    /**
     * Drives completions on the calling thread until {@code done} or {@code deadlineNanos}
     * (System.nanoTime), so a blocking caller gets its reply without a thread hand-off.
     * Returns false at once if this link does not do that (the caller then waits for its
     * future, which the link's own poller completes).
     */
    default boolean pollOnCaller(java.util.function.BooleanSupplier done, long deadlineNanos) {
        return false;
    }

    /**
     * A thread is about to make a blocking call and then {@link #pollOnCaller wait for its
     * reply}: called before its Send is posted, paired with {@link #blockingCallEnds}.
     */
    default void blockingCallStarts() {
    }

    /** The thread of a {@link #blockingCallStarts} has its reply, or gave up. */
    default void blockingCallEnds() {
    }

    /**
     * Whether messages nobody waits for can arrive here: calls from the peer (a server; a
     * client serving backward calls). When not, every message is a reply, and the poller may
     * stand aside longer while blocking callers lead. True until said otherwise.
     */
    default void unsolicitedMessages(boolean expected) {
    }
}
