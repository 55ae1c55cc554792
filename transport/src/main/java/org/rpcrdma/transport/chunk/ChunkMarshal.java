package org.rpcrdma.transport.chunk;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.ChunksUnavailableException;
import org.rpcrdma.transport.DdpArgument;
import org.rpcrdma.transport.RegisteredBuffers;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.transport.rpc.CallRequest;
import org.rpcrdma.transport.rpc.ConnectionEngine;
import org.rpcrdma.transport.rpc.ConnectionParams;
import org.rpcrdma.transport.rpc.Marshal;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaEncoder;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.transport.wire.SegmentList;
import org.rpcrdma.transport.wire.WriteList;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * How a call of ours uses chunks (≈ Linux {@code rpcrdma_marshal_req} and the chunk half of
 * {@code rpcrdma_reply_handler}):
 * <ul>
 * <li>a call larger than the requester→responder inline threshold goes as RDMA_NOMSG, the
 *     whole call in a Position-Zero Read chunk the responder pulls (RFC 8166 §3.5.3);</li>
 * <li>a Reply chunk is offered when the largest reply the caller allows does not fit the
 *     responder→requester threshold (§3.5.4);</li>
 * <li>what comes back is checked against what we offered: a Reply chunk claiming more
 *     bytes or other segments than offered fails the call, and nothing is read beyond what
 *     was written (the bug libevpl shipped).</li>
 * </ul>
 * Each chunk is one segment under an rkey made for this call ({@link Link#expose}); a long
 * call put in chunk memory and its Reply chunk lie side by side under one, so that the
 * reply's Send with Invalidate withdraws both (RFC 8797 §4.1). Memory
 * from the endpoint's {@link RegisteredBuffers}, or ordinary memory of the caller's own arenas
 * that its {@link RegistrationCache} takes, is exposed in place (zero copy); what neither
 * takes (heap, global or small memory, the cache full or off) is copied through chunk memory.
 */
public final class ChunkMarshal {
    private ChunkMarshal() {}

    /**
     * Whether {@code c} goes through {@link #prepare}: it needs chunks under these thresholds
     * (a receptacle always does), or its DDP argument is a segment of its own, which, if the
     * call fits inline, is gathered into the Send there.
     */
    public static boolean needsChunks(CallRequest c, int sendInline, int receiveInline) {
        DdpArgument d = c.ddp();
        return d != null && DdpLayout.separate(d) || usesChunks(c, sendInline, receiveInline);
    }

    /** Whether {@code c} needs chunks under these thresholds (a receptacle always does). */
    private static boolean usesChunks(CallRequest c, int sendInline, int receiveInline) {
        return !Marshal.fitsInline(callLength(c), sendInline) || needsReplyChunk(c, receiveInline)
                || c.receptacle() != null;
    }

    /** The whole call's XDR length: the message, and a separate DDP argument with its pad. */
    private static long callLength(CallRequest c) {
        DdpArgument d = c.ddp();
        return d == null ? c.message().byteSize() : DdpLayout.callLength(d, c.message());
    }

    /**
     * Whether the largest reply the caller allows does not fit inline with the header it
     * comes with: the threshold covers the whole Send (RFC 8166 §4.1), and a reply echoes
     * our write list, one chunk of one segment per receptacle (§4.3.2), in its header.
     */
    private static boolean needsReplyChunk(CallRequest c, int receiveInline) {
        long echoedWriteList = c.receptacle() == null ? 0 : 4L * RpcRdma.WRITECHUNK_MINSZ;
        return c.maxReplyBytes() > 0 && !Marshal.fitsInline(echoedWriteList + c.maxReplyBytes(), receiveInline);
    }

    /** See {@link ConnectionEngine#maxReplyBytes()}: where chunks are refused, the largest reply that fits inline. */
    public static int replyLimit(ConnectionParams params, Link link, boolean backwardChunks) {
        boolean chunks = (params.client() || backwardChunks) && link.exposesMemory();
        return chunks ? params.maxChunkBytes() : Math.max(0, Marshal.inlineLimit(params.receiveInline()));
    }

    /**
     * Gives {@code c} what it needs chunks for on the connection {@code name}: null once
     * done; else why it cannot have them, the call left to the caller to fail or hand on
     * (a link released under a lost connection refuses too): a backward call to a client
     * that did not say it takes chunks ({@code backwardChunks} false: RFC 8167 §5.3 allows
     * chunks there, but Linux drops such calls), a link without chunk memory, or a message
     * over {@code maxChunkBytes}.
     */
    public static ChunksUnavailableException expose(String name, ConnectionParams params, Link link, CallRequest c, boolean backwardChunks) {
        long length = callLength(c);
        long size = Math.max(length, c.maxReplyBytes());
        String why = !usesChunks(c, params.sendInline(), params.receiveInline()) ? null // a gathered argument only
                : !params.client() && !backwardChunks
                ? "the client did not say it takes backward calls with chunks (RFC 8167 §5.3)"
                : !link.exposesMemory() ? "this connection has no chunk memory"
                : size > params.maxChunkBytes() ? "over the " + params.maxChunkBytes() + "-byte chunk limit (maxChunkBytes)"
                : null;
        RuntimeException cause = null;
        if (why == null) {
            try {
                c.exposure(prepare(link, c, params.sendInline(), params.receiveInline(), params.ownCallCredits(),
                        params.remoteInvalidation() || link.rkeysInvalidatableByPeer()));
                return null;
            } catch (RuntimeException e) {
                why = e.getMessage();
                cause = e;
            }
        }
        return new ChunksUnavailableException(name + ": call of " + length + " bytes (reply up to "
                + c.maxReplyBytes() + ") needs chunks beyond the " + Marshal.inlineLimit(params.sendInline()) + "/"
                + Marshal.inlineLimit(params.receiveInline()) + " bytes that fit the inline thresholds, and " + why,
                cause);
    }

    /**
     * Exposes what {@code c} needs on {@code link} and builds its header (rdma_credit =
     * {@code credit}), choosing as Linux's {@code rpcrdma_marshal_req} does: inline if the
     * call fits; else its DDP argument in a read chunk if the rest then fits; else the
     * whole call as RDMA_NOMSG in a Position-Zero Read chunk. A DDP argument of its own
     * ({@link DdpArgument#separate}) is exposed where it lies, the message being the rest
     * already; if the call fits inline it is copied into the Send behind the message's
     * first part (one copy, into the registered send buffer: {@link Marshal#withHeader});
     * for RDMA_NOMSG the call is put together once in chunk memory. A receptacle becomes a
     * write chunk, a large enough reply limit a Reply chunk. The caller releases the result
     * however the call ends.
     */
    static CallExposure prepare(Link link, CallRequest c, int sendInline, int receiveInline, int credit,
            boolean remoteInvalidation) {
        MemorySegment msg = c.message();
        DdpArgument ddp = c.ddp();
        boolean separate = ddp != null && DdpLayout.separate(ddp);
        long length = callLength(c);
        MemorySegment inline = msg;
        DdpArgument gathered = null; // a separate argument copied into the Send
        boolean pulled = false;
        if (!Marshal.fitsInline(length, sendInline)) {
            inline = ddp == null ? null : separate ? msg : reduced(msg, ddp);
            pulled = inline != null && Marshal.fitsInline(inline.byteSize(), sendInline);
            if (!pulled) {
                inline = null;
            }
        } else if (separate) {
            if (ddp.payload().isAccessibleBy(CallRequest.NOT_THE_OWNER)) {
                gathered = ddp;
            } else { // a call that waits is sent by another thread: put together now (under the inline threshold)
                inline = MemorySegment.ofArray(new byte[(int) length]);
                DdpLayout.assemble(ddp, msg, inline, 0);
            }
        }
        RpcRdmaHeader h = new RpcRdmaHeader(1, 1, 1, 1);
        h.clear().xid(c.xid).credit(credit).proc(RpcRdma.RDMA_MSG);
        CallExposure x = null;
        boolean ok = false;
        try {
            MemorySegment receptacle = c.receptacle();
            long replyCapacity = needsReplyChunk(c, receiveInline) ? c.maxReplyBytes() : 0;
            long chunksHeader = (receptacle == null ? 0 : 4L * (RpcRdma.WRITECHUNK_MINSZ))
                    + (replyCapacity == 0 ? 0 : 4L * (1 + RpcRdma.SEGMENT_MAXSZ))
                    + (pulled ? 4L * RpcRdma.READCHUNK_MAXSZ : 0);
            if (inline != null && Marshal.INLINE_HEADER + chunksHeader + sent(inline, gathered) > sendInline) {
                inline = null; // the chunk lists crowd it out: the whole call goes in a chunk
                pulled = false;
                gathered = null;
            }
            x = new CallExposure(link, h, inline, gathered, receptacle, remoteInvalidation);
            boolean replyBeside = false; // the Reply chunk lies behind the call, under its rkey
            if (inline == null) {
                h.proc(RpcRdma.RDMA_NOMSG);
                long callAddress;
                ChunkBuffer inPlace = separate ? null : callerChunk(link, msg, 0, length);
                if (replyCapacity > 0 && receptacle == null && inPlace == null) {
                    callAddress = exposeWithReply(link, x, msg, separate ? ddp : null, length, replyCapacity, h);
                    replyBeside = true;
                } else if (separate) {
                    exposeAssembled(link, x, msg, ddp, length);
                    callAddress = x.address(CallExposure.CALL);
                } else {
                    expose(link, x, CallExposure.CALL, inPlace, msg, 0, length, true, false);
                    callAddress = x.address(CallExposure.CALL);
                }
                h.readList().add(0, x.rkey(CallExposure.CALL), length, callAddress);
            } else if (pulled) {
                if (separate) { // in place when registered: the zero-copy case
                    expose(link, x, CallExposure.CALL, ddp.payload(), 0, ddp.length(), true, false);
                } else {
                    expose(link, x, CallExposure.CALL, msg, ddp.offset(), ddp.length(), true, false);
                }
                h.readList().add((int) ddp.offset(), x.rkey(CallExposure.CALL), ddp.length(),
                        x.address(CallExposure.CALL));
            }
            if (receptacle != null) {
                // Filled from the receptacle when it goes through chunk memory: a responder may
                // return lengths it never wrote (deployed ones echo the offered chunk for a result
                // they did not use: implementation-experience draft §3.8), and nothing here can
                // tell those from bytes written. Copied back, such bytes are then the receptacle's
                // own, as when it is exposed in place, never what another call left in chunk memory.
                expose(link, x, CallExposure.RECEPTACLE, receptacle, 0, receptacle.byteSize(), true, true);
                h.writeList().beginChunk();
                h.writeList().addSegment(x.rkey(CallExposure.RECEPTACLE), receptacle.byteSize(),
                        x.address(CallExposure.RECEPTACLE));
            }
            if (replyCapacity > 0 && !replyBeside) {
                expose(link, x, CallExposure.REPLY, null, 0, replyCapacity, false, true);
                h.hasReplyChunk(true).replyChunk().add(x.rkey(CallExposure.REPLY), replyCapacity,
                        x.address(CallExposure.REPLY));
            }
            if (RpcRdmaEncoder.encodedLength(h) + (inline == null ? 0 : sent(inline, gathered)) > sendInline) {
                throw new RpcRdmaException("its chunk lists do not fit the send inline threshold of " + sendInline);
            }
            ok = true;
            return x;
        } finally {
            if (!ok && x != null) {
                x.release();
            }
        }
    }

    /** Bytes of the RPC message the Send carries: {@code inline}, with {@code gathered}'s data and pad if not null. */
    private static long sent(MemorySegment inline, DdpArgument gathered) {
        return gathered == null ? inline.byteSize() : DdpLayout.callLength(gathered, inline);
    }

    /**
     * Exposes the whole call of a separate DDP argument for a Position-Zero Read chunk,
     * put together in chunk memory (the message's two parts around the payload and its pad).
     */
    private static void exposeAssembled(Link link, CallExposure x, MemorySegment msg, DdpArgument ddp, long length) {
        ChunkBuffer b = link.allocateChunk(length);
        x.buffer(CallExposure.CALL, b);
        DdpLayout.assemble(ddp, msg, b.segment(), 0);
        x.exposed(CallExposure.CALL, link.expose(b, 0, length, false));
    }

    /**
     * Puts the whole call ({@code msg}, or {@code ddp}'s parts around {@code msg}) and the
     * room for its reply side by side in one buffer of chunk memory and exposes both under
     * one rkey, which the reply's Send with Invalidate then withdraws (RFC 8797 §4.1: it is
     * this XID's alone; a responder invalidates only when one rkey covers every chunk of
     * the call, as Linux's {@code svc_rdma_get_inv_rkey}): one window bound and no
     * LOCAL_INV per call instead of two of each. Adds the Reply chunk to {@code h} and
     * returns the call's address. The peer may read the reply's room and write the call's
     * bytes too: chunk memory is this connection's own, so what lies there is what this
     * peer sent or was sent, and the call's bytes are not read again.
     */
    private static long exposeWithReply(Link link, CallExposure x, MemorySegment msg, DdpArgument ddp, long length,
            long replyCapacity, RpcRdmaHeader h) {
        long replyAt = (length + 7) & ~7L;
        ChunkBuffer b = link.allocateChunk(replyAt + replyCapacity);
        ChunkBuffer reply = new ChunkBuffer(b.segment().asSlice(replyAt, replyCapacity), b.lkey(), b.handle(),
                r -> b.release()); // the reply is handed on with the whole buffer, the call's part unused by then
        x.buffer(CallExposure.REPLY, reply);
        if (ddp != null) {
            DdpLayout.assemble(ddp, msg, b.segment(), 0);
        } else {
            MemorySegment.copy(msg, 0, b.segment(), 0, length);
        }
        int rkey = link.exposeReadWrite(b, 0, replyAt + replyCapacity);
        x.exposed(CallExposure.CALL, rkey);
        x.exposed(CallExposure.REPLY, rkey);
        h.hasReplyChunk(true).replyChunk().add(rkey, replyCapacity, reply.segment().address());
        return b.segment().address();
    }

    /** The call without its DDP argument's data and pad (the read chunk takes their place), or null if out of range. */
    private static MemorySegment reduced(MemorySegment msg, DdpArgument ddp) {
        long end = DdpLayout.paddedEnd(ddp);
        if (end > msg.byteSize()) {
            return null;
        }
        MemorySegment r = MemorySegment.ofArray(new byte[(int) (msg.byteSize() - (end - ddp.offset()))]);
        MemorySegment.copy(msg, 0, r, 0, ddp.offset());
        MemorySegment.copy(msg, end, r, ddp.offset(), msg.byteSize() - end);
        return r;
    }

    /**
     * Exposes {@code caller[from, +length)} for {@code role}: in place if it lies in a
     * registered buffer; else chunk memory (filled from it if {@code copyIn}; a receptacle
     * is copied out after the reply). {@code caller} null: chunk memory only (a Reply chunk).
     */
    private static void expose(Link link, CallExposure x, int role, MemorySegment caller, long from, long length,
            boolean copyIn, boolean writable) {
        expose(link, x, role, callerChunk(link, caller, from, length), caller, from, length, copyIn, writable);
    }

    /** {@code caller[from, +length)} in place, if it lies in registered memory (a use taken), else null. */
    private static ChunkBuffer callerChunk(Link link, MemorySegment caller, long from, long length) {
        // heap memory can't be registered: no slice made for the lookup
        return caller == null || length == 0 || !caller.isNative() ? null
                : link.callerChunk(caller.asSlice(from, length));
    }

    /** As above, {@code inPlace} being {@link #callerChunk}'s answer for it. */
    private static void expose(Link link, CallExposure x, int role, ChunkBuffer inPlace, MemorySegment caller,
            long from, long length, boolean copyIn, boolean writable) {
        ChunkBuffer b = inPlace;
        if (b == null) {
            b = link.allocateChunk(length);
            x.buffer(role, b);
            if (copyIn) {
                MemorySegment.copy(caller, from, b.segment(), 0, length);
            }
        } else {
            x.buffer(role, b);
        }
        x.exposed(role, link.expose(b, 0, length, writable));
    }

    /**
     * Checks the chunks a reply returns against what {@code x} offered (RFC 8166 §4.3.2:
     * a write chunk comes back with its segment count, each segment's length what was
     * written there) and returns the bytes placed in our write chunk (0 if none). As
     * deployed responders do for a result they did not use (implementation-experience
     * draft §3.8), a chunk may also come back with no segments, or the Write list empty:
     * nothing was placed there.
     *
     * @throws IllegalStateException naming what is wrong; nothing was read
     */
    public static long placedBytes(CallExposure x, RpcRdmaHeader h) {
        if (!h.readList().isEmpty()) {
            throw new IllegalStateException("the reply carries a Read list");
        }
        WriteList got = h.writeList();
        if (got.isEmpty()) {
            return 0; // a responder that wrote nothing may return no Write list
        }
        WriteList offered = x.header().writeList();
        if (got.chunkCount() != offered.chunkCount()) {
            throw new IllegalStateException("the reply returns " + got.chunkCount() + " write chunks; we offered "
                    + offered.chunkCount());
        }
        long total = 0;
        for (int c = 0; c < got.chunkCount(); c++) {
            int n = got.chunkSegmentCount(c);
            if (n == 0) {
                continue; // unused, returned empty
            }
            if (n != offered.chunkSegmentCount(c)) {
                throw new IllegalStateException("the reply returns write chunk " + c + " with " + n
                        + " segments; we offered " + offered.chunkSegmentCount(c));
            }
            total += sameSegments(offered.segments(), offered.chunkFirstSegment(c), got.segments(),
                    got.chunkFirstSegment(c), n, "write chunk " + c);
        }
        return total;
    }

    private static long sameSegments(SegmentList offered, SegmentList got, String what) {
        return sameSegments(offered, 0, got, 0, got.count(), what);
    }

    private static long sameSegments(SegmentList offered, int o, SegmentList got, int g, int n, String what) {
        long total = 0;
        for (int i = 0; i < n; i++) {
            if (got.handle(g + i) != offered.handle(o + i) || got.offset(g + i) != offered.offset(o + i)) {
                throw new IllegalStateException(what + " segment " + i + " is not the one we offered");
            }
            if (got.length(g + i) > offered.length(o + i)) {
                throw new IllegalStateException(what + " segment " + i + " claims " + got.length(g + i)
                        + " bytes; we offered " + offered.length(o + i));
            }
            total += got.length(g + i);
        }
        return total;
    }

    /**
     * Checks an RDMA_NOMSG reply's Reply chunk against what {@code x} offered and returns
     * the reply's length, or throws naming what is wrong.
     */
    public static long replyChunkLength(CallExposure x, RpcRdmaHeader h) {
        if (!x.offersReplyChunk()) {
            throw new IllegalStateException("the reply came through a Reply chunk this call never offered");
        }
        SegmentList offered = x.header().replyChunk();
        SegmentList got = h.replyChunk();
        if (got.count() != offered.count()) {
            throw new IllegalStateException("the reply returns a Reply chunk of " + got.count()
                    + " segments; we offered " + offered.count());
        }
        return sameSegments(offered, got, "Reply chunk");
    }

    /** Whether {@code m} is an RPC REPLY to {@code xid} (at least its first two words). */
    public static boolean isReplyTo(MemorySegment m, int xid) {
        return m.byteSize() >= 8 && Xdr.getInt(m, 0) == xid && Xdr.getInt(m, 4) == OncRpc.REPLY;
    }
}
