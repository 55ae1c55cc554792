package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;

/**
 * The DDP-eligible argument of a call (RFC 8166 §3.4.5; an NFS WRITE's data): the data of
 * an XDR opaque, {@code length} bytes at XDR position {@code offset} of the call, whose
 * length word sits just before that position. It lies in one of two places:
 * <ul>
 * <li>inside the call message ({@code new DdpArgument(offset, length)}, {@code payload}
 *     null): bytes {@code [offset, offset + length)} of it, their XDR pad after them;</li>
 * <li>in memory of its own ({@link #of(long, MemorySegment)}): the message holds the XDR
 *     before the data (up to and with the length word) in {@code [0, offset)} and the XDR
 *     after the data's pad from {@code offset} on; the data is {@code payload}, its pad
 *     implied. The call is not put together on the heap: the payload is exposed in place
 *     as the read chunk at {@code offset} (from registered memory,
 *     {@link RpcRdmaStats#zeroCopyExposures()}; other memory is copied once into chunk
 *     memory), or copied into the Send when the whole call fits inline, or, when even the
 *     rest does not fit, the whole call is put together once in chunk memory for a
 *     Position-Zero Read chunk.</li>
 * </ul>
 * When the call does not fit inline the data travels in a read chunk at that position and
 * the server pulls it by RDMA Read (§3.5.3); the rest goes inline, resuming after the
 * data's pad (which is not sent). A payload of its own must stay valid, and unchanged,
 * until the call completes.
 *
 * @param offset  4-byte aligned, at least 8 (never position zero)
 * @param length  bytes of data, without pad
 * @param payload the data when it is not in the message, else null
 */
public record DdpArgument(long offset, long length, MemorySegment payload) {
    public DdpArgument {
        if (offset < 8 || offset % 4 != 0 || length < 0) {
            throw new IllegalArgumentException("DDP argument at " + offset + " of " + length
                    + " bytes: the offset must be 4-byte aligned and at least 8, the length not negative");
        }
        if (payload != null && payload.byteSize() != length) {
            throw new IllegalArgumentException("DDP argument of " + length + " bytes given a payload of "
                    + payload.byteSize());
        }
    }

    /** Data inside the call message: {@code [offset, offset + length)}. */
    public DdpArgument(long offset, long length) {
        this(offset, length, null);
    }

    /**
     * Data in {@code payload}, at XDR position {@code xdrPosition} of the call: the message
     * holds the call without the data and its pad, the opaque's length word ending at
     * {@code xdrPosition}.
     */
    public static DdpArgument of(long xdrPosition, MemorySegment payload) {
        return new DdpArgument(xdrPosition, payload.byteSize(), payload);
    }

    @Override
    public String toString() {
        return "DDP argument at " + offset + " of " + length + " bytes" + (payload != null ? " (a segment of its own)" : "");
    }
}
