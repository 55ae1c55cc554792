package org.rpcrdma.transport.wire;

import static org.rpcrdma.transport.wire.RpcRdma.*;
import org.rpcrdma.xdr.Xdr;

/**
 * One RPC-over-RDMA Version 1 transport header (RFC 8166 §4.1.2), mutable and
 * preallocated so that {@link RpcRdmaDecoder} fills it without allocating.
 *
 * <pre>
 * struct rpcrdma1_header { xid; vers; credit; rpcrdma1_body body; }
 * body: RDMA_MSG, RDMA_NOMSG  -&gt; read list, write list, reply chunk
 *       RDMA_MSGP             -&gt; align, thresh, read list, write list, reply chunk
 *       RDMA_DONE             -&gt; void
 *       RDMA_ERROR            -&gt; err (ERR_VERS: vers_low, vers_high | ERR_CHUNK: void)
 * </pre>
 *
 * <p>After a successful decode it also says where the RPC message is: for RDMA_MSG (and
 * RDMA_MSGP) {@link #messageOffset()} / {@link #messageLength()} locate the inline RPC
 * message in the receive buffer, and {@link #rpcXid()} / {@link #rpcMsgType()} come from
 * its first two words. After a failed decode the contents are unspecified.
 *
 * <p>To encode, {@link #clear()}, set the fixed fields, fill the lists, then hand it to
 * {@link RpcRdmaEncoder}. Caller-owned; not thread-safe.
 */
public final class RpcRdmaHeader {
    /** {@link #rpcMsgType()} when no RPC message was inspected. */
    public static final int MSG_TYPE_UNKNOWN = -1;

    private int xid;
    private int vers = RPCRDMA_VERSION;
    private int credit;
    private int proc;
    private int align;
    private int thresh;
    private int errorCode;
    private int versLow;
    private int versHigh;

    private final ReadList readList;
    private final WriteList writeList;
    private final SegmentList replyChunk;
    private boolean replyChunkPresent;

    private int headerLength;
    private long messageOffset;
    private int messageLength;
    private int rpcXid;
    private int rpcMsgType = MSG_TYPE_UNKNOWN;

    /**
     * Creates a header with room for the given numbers of segments and chunks.
     *
     * @param maxReadSegments  read segments in the Read list
     * @param maxWriteChunks   Write chunks in the Write list
     * @param maxWriteSegments segments over all Write chunks
     * @param maxReplySegments segments in the Reply chunk
     */
    public RpcRdmaHeader(int maxReadSegments, int maxWriteChunks, int maxWriteSegments, int maxReplySegments) {
        readList = new ReadList(maxReadSegments);
        writeList = new WriteList(maxWriteChunks, maxWriteSegments);
        replyChunk = new SegmentList(maxReplySegments);
    }

    /**
     * Creates a header big enough for any header that fits in a message of
     * {@code inlineThreshold} bytes (RFC 8166 §3.3.2): a decode into it fails with
     * {@link ProtocolViolation#TOO_MANY_SEGMENTS} only when the lists could not fit in
     * such a message anyway. For the 1024-byte default that is 41 read segments, as in
     * Linux's {@code xdr_check_read_list} ("about 40 Read segments for a 1KB inline
     * threshold").
     */
    public static RpcRdmaHeader forInlineThreshold(int inlineThreshold) {
        if (inlineThreshold < INLINE_MSG_HEADER_BYTES) {
            throw new IllegalArgumentException("inline threshold " + inlineThreshold + " is below "
                    + INLINE_MSG_HEADER_BYTES);
        }
        int spare = inlineThreshold / Xdr.UNIT - HDRLEN_MIN;
        return new RpcRdmaHeader(
                spare / READCHUNK_MAXSZ,
                spare / WRITECHUNK_MINSZ,
                (spare - 2) / SEGMENT_MAXSZ,
                (spare - 1) / SEGMENT_MAXSZ);
    }

    /** Resets to an RDMA_MSG with version 1, zero xid and credit, and empty lists. */
    public RpcRdmaHeader clear() {
        xid = 0;
        vers = RPCRDMA_VERSION;
        credit = 0;
        proc = RDMA_MSG;
        align = 0;
        thresh = 0;
        errorCode = 0;
        versLow = 0;
        versHigh = 0;
        readList.clear();
        writeList.clear();
        replyChunk.clear();
        replyChunkPresent = false;
        headerLength = 0;
        messageOffset = 0;
        messageLength = 0;
        rpcXid = 0;
        rpcMsgType = MSG_TYPE_UNKNOWN;
        return this;
    }

    // ---- fixed fields (RFC 8166 §4.2) ----

    /** rdma_xid: the XID of the RPC message this header carries (§4.2.1). */
    public int xid() {
        return xid;
    }

    /** Sets rdma_xid. */
    public RpcRdmaHeader xid(int xid) {
        this.xid = xid;
        return this;
    }

    /** rdma_vers (§4.2.2); always 1 after a successful decode. */
    public int vers() {
        return vers;
    }

    /**
     * rdma_credit (§4.2.3): a request in a Call, a grant in a Reply. Unsigned; use it only
     * once the direction is known.
     */
    public int credit() {
        return credit;
    }

    /** Sets rdma_credit. */
    public RpcRdmaHeader credit(int credit) {
        this.credit = credit;
        return this;
    }

    /** rdma_proc (§4.2.4), one of the {@code RpcRdma.RDMA_*} values. */
    public int proc() {
        return proc;
    }

    /** Sets rdma_proc. */
    public RpcRdmaHeader proc(int proc) {
        this.proc = proc;
        return this;
    }

    // ---- RDMA_MSGP (§4.6.1) ----

    /** rdma_align of a received RDMA_MSGP (informational; the message is treated as RDMA_MSG). */
    public int align() {
        return align;
    }

    /** rdma_thresh of a received RDMA_MSGP. */
    public int thresh() {
        return thresh;
    }

    /** Sets rdma_align and rdma_thresh (only to build RDMA_MSGP test input: never sent). */
    public RpcRdmaHeader msgp(int align, int thresh) {
        this.proc = RDMA_MSGP;
        this.align = align;
        this.thresh = thresh;
        return this;
    }

    // ---- RDMA_ERROR (§4.5) ----

    /** rdma_err of an RDMA_ERROR: {@code ERR_VERS} or {@code ERR_CHUNK}. */
    public int errorCode() {
        return errorCode;
    }

    /** rdma_vers_low of an ERR_VERS. */
    public int versLow() {
        return versLow;
    }

    /** rdma_vers_high of an ERR_VERS. */
    public int versHigh() {
        return versHigh;
    }

    /** Makes this an RDMA_ERROR / ERR_VERS saying we support versions low..high. */
    public RpcRdmaHeader errVers(int low, int high) {
        this.proc = RDMA_ERROR;
        this.errorCode = ERR_VERS;
        this.versLow = low;
        this.versHigh = high;
        return this;
    }

    /** Makes this an RDMA_ERROR / ERR_CHUNK. */
    public RpcRdmaHeader errChunk() {
        this.proc = RDMA_ERROR;
        this.errorCode = ERR_CHUNK;
        return this;
    }

    // ---- chunk lists (§4.3) ----

    /** The Read list. */
    public ReadList readList() {
        return readList;
    }

    /** The Write list. */
    public WriteList writeList() {
        return writeList;
    }

    /** The Reply chunk's segments; meaningful when {@link #hasReplyChunk()}. */
    public SegmentList replyChunk() {
        return replyChunk;
    }

    /** Whether the optional Reply chunk is present. */
    public boolean hasReplyChunk() {
        return replyChunkPresent;
    }

    /** Marks the Reply chunk present or absent. */
    public RpcRdmaHeader hasReplyChunk(boolean present) {
        this.replyChunkPresent = present;
        return this;
    }

    /** Whether all three lists are empty (an inline message). */
    public boolean hasNoChunks() {
        return readList.isEmpty() && writeList.isEmpty() && !replyChunkPresent;
    }

    /** Whether the message carries an RPC message inline (RDMA_MSG or RDMA_MSGP). */
    public boolean isInline() {
        return proc == RDMA_MSG || proc == RDMA_MSGP;
    }

    // ---- decode results ----

    /** Bytes of transport header on the wire (set by decode and encode). */
    public int headerLength() {
        return headerLength;
    }

    /**
     * Absolute offset in the decoded segment where the inline RPC message begins (the
     * byte after the header). For RDMA_NOMSG, where the message is in chunks, it is where
     * the (ignored) trailing bytes begin.
     */
    public long messageOffset() {
        return messageOffset;
    }

    /** Length of the inline RPC message; 0 for RDMA_NOMSG, RDMA_DONE and RDMA_ERROR. */
    public int messageLength() {
        return messageLength;
    }

    /** XID of the inline RPC message (RDMA_MSG only; equals {@link #xid()} once validated). */
    public int rpcXid() {
        return rpcXid;
    }

    /**
     * msg_type of the inline RPC message: {@code RpcRdma.RPC_CALL}, {@code RPC_REPLY}, or
     * {@link #MSG_TYPE_UNKNOWN} when there is no inline message.
     */
    public int rpcMsgType() {
        return rpcMsgType;
    }

    void setDecoded(int headerLength, long messageOffset, int messageLength, int rpcXid, int rpcMsgType) {
        this.headerLength = headerLength;
        this.messageOffset = messageOffset;
        this.messageLength = messageLength;
        this.rpcXid = rpcXid;
        this.rpcMsgType = rpcMsgType;
    }

    void setHeaderLength(int headerLength) {
        this.headerLength = headerLength;
    }

    void setFixed(int xid, int vers, int credit, int proc) {
        this.xid = xid;
        this.vers = vers;
        this.credit = credit;
        this.proc = proc;
    }

    void setMsgp(int align, int thresh) {
        this.align = align;
        this.thresh = thresh;
    }

    void setError(int code, int low, int high) {
        this.errorCode = code;
        this.versLow = low;
        this.versHigh = high;
    }

    /**
     * Copies every wire field of {@code other} (not the decode results) into this header.
     */
    public RpcRdmaHeader copyFrom(RpcRdmaHeader other) {
        xid = other.xid;
        vers = other.vers;
        credit = other.credit;
        proc = other.proc;
        align = other.align;
        thresh = other.thresh;
        errorCode = other.errorCode;
        versLow = other.versLow;
        versHigh = other.versHigh;
        readList.copyFrom(other.readList);
        writeList.copyFrom(other.writeList);
        replyChunk.copyFrom(other.replyChunk);
        replyChunkPresent = other.replyChunkPresent;
        return this;
    }

    /**
     * Whether the wire content equals {@code other}'s: the fields and lists that the body of
     * this header's proc carries (so a decoded RDMA_DONE equals any RDMA_DONE with the same
     * fixed fields).
     */
    public boolean sameWireContent(RpcRdmaHeader o) {
        if (xid != o.xid || vers != o.vers || credit != o.credit || proc != o.proc) {
            return false;
        }
        return switch (proc) {
            case RDMA_MSG, RDMA_NOMSG -> sameLists(o);
            case RDMA_MSGP -> align == o.align && thresh == o.thresh && sameLists(o);
            case RDMA_ERROR -> errorCode == o.errorCode
                    && (errorCode != ERR_VERS || (versLow == o.versLow && versHigh == o.versHigh));
            default -> true;
        };
    }

    private boolean sameLists(RpcRdmaHeader o) {
        return readList.sameAs(o.readList) && writeList.sameAs(o.writeList)
                && replyChunkPresent == o.replyChunkPresent
                && (!replyChunkPresent || replyChunk.sameAs(o.replyChunk));
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        sb.append(procName(proc)).append(" xid=0x").append(Integer.toHexString(xid))
                .append(" vers=").append(Integer.toUnsignedString(vers))
                .append(" credit=").append(Integer.toUnsignedString(credit));
        switch (proc) {
            case RDMA_MSGP -> sb.append(" align=").append(align).append(" thresh=").append(thresh);
            case RDMA_ERROR -> {
                sb.append(" err=").append(errorCode);
                if (errorCode == ERR_VERS) {
                    sb.append(" low=").append(versLow).append(" high=").append(versHigh);
                }
            }
            default -> { }
        }
        if (proc == RDMA_MSG || proc == RDMA_NOMSG || proc == RDMA_MSGP) {
            sb.append(' ').append(readList).append(' ').append(writeList);
            if (replyChunkPresent) {
                sb.append(" Reply").append(replyChunk);
            }
        }
        return sb.toString();
    }
}
