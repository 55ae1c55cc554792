package org.rpcrdma.transport;

/**
 * The DDP-eligible argument of a call (RFC 8166 §3.4.5; an NFS WRITE's data): bytes
 * {@code [offset, offset + length)} of the call message, the data of an XDR opaque whose
 * length word sits just before {@code offset}. When the call does not fit inline it
 * travels in a read chunk at that XDR position and the server pulls it by RDMA Read; the
 * rest goes inline, resuming after the data's XDR pad (which is not sent).
 *
 * @param offset 4-byte aligned, at least 8 (never position zero)
 * @param length bytes of data, without pad
 */
public record DdpArgument(long offset, long length) {
    public DdpArgument {
        if (offset < 8 || offset % 4 != 0 || length < 0) {
            throw new IllegalArgumentException("DDP argument at " + offset + " of " + length
                    + " bytes: the offset must be 4-byte aligned and at least 8, the length not negative");
        }
    }

    /** Where the data's XDR pad ends: the inline content resumes there. */
    long paddedEnd() {
        return offset + ((length + 3) & ~3L);
    }
}
