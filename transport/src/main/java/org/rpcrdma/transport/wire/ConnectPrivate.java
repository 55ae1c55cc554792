package org.rpcrdma.transport.wire;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Optional;
import org.rpcrdma.xdr.Xdr;

/**
 * RPC-over-RDMA Version 1 CM private data (RFC 8797 §4): what one peer tells the other
 * when the connection is set up.
 * <pre>
 *  0                   1                   2                   3
 * +-------------------------------------------------------------------+
 * |                  Format Identifier (0xf6ab0e18)                   |
 * +----------------+--------------+--+-----------------+--------------+
 * |  Version (1)   | Reserved (7) |R |    Send Size    | Receive Size |
 * +----------------+--------------+--+-----------------+--------------+
 * </pre>
 * Sizes travel as {@code bytes / 1024 - 1} (RFC 8797 §4.2), so 1 KiB to 256 KiB in
 * 1 KiB steps. R says the sender can take remote invalidation (§4.1); it is the lowest
 * bit of the flags octet (Linux {@code RPCRDMA_CMP_F_SND_W_INV_OK}).
 *
 * @param remoteInvalidation the R bit
 * @param sendSize           largest Send this peer will post, bytes
 * @param receiveSize        largest Receive this peer has posted, bytes
 */
public record ConnectPrivate(boolean remoteInvalidation, int sendSize, int receiveSize) {
    /** The Format Identifier (RFC 8797 §4, §5.2). */
    public static final int FORMAT_IDENTIFIER = 0xf6ab0e18;
    /** The message format version this implements. */
    public static final int VERSION = 1;
    /** Octets in a Version 1 message. */
    public static final int LENGTH = 8;
    /** Smallest encodable size (RFC 8797 §4.2). */
    public static final int MIN_SIZE = 1024;
    /** Largest encodable size: (255 + 1) * 1024. */
    public static final int MAX_SIZE = 262144;
    /** R is the lowest bit of the flags octet. */
    private static final int FLAG_R = 0x01;

    /**
     * What a peer that sent no (valid) private data is assumed to have said: 1024-byte
     * inline thresholds both ways and no remote invalidation (RFC 8797 §5.1, RFC 8166 §3.3.3).
     */
    public static final ConnectPrivate DEFAULT = new ConnectPrivate(false, MIN_SIZE, MIN_SIZE);

    /**
     * Checks the sizes can be encoded.
     *
     * @throws IllegalArgumentException if a size is not a multiple of 1024 in
     *         1024..262144
     */
    public ConnectPrivate {
        encodeBufferSize(sendSize);
        encodeBufferSize(receiveSize);
    }

    /**
     * Encodes a size in bytes as its octet: {@code bytes / 1024 - 1} (RFC 8797 §4.2).
     *
     * @throws IllegalArgumentException if {@code bytes} is not a multiple of 1024 in
     *         1024..262144
     */
    public static int encodeBufferSize(int bytes) {
        if (bytes < MIN_SIZE || bytes > MAX_SIZE || bytes % 1024 != 0) {
            throw new IllegalArgumentException("inline size " + bytes
                    + " can't be sent in RFC 8797 private data: it must be a multiple of 1024 in "
                    + MIN_SIZE + ".." + MAX_SIZE);
        }
        return bytes / 1024 - 1;
    }

    /** Decodes a size octet (0..255, higher bits ignored): {@code (octet + 1) * 1024}. */
    public static int decodeBufferSize(int octet) {
        return ((octet & 0xff) + 1) * 1024;
    }

    /** Writes the 8 octets at {@code offset}. */
    public void encode(MemorySegment seg, long offset) {
        java.util.Objects.checkFromIndexSize(offset, LENGTH, seg.byteSize());
        Xdr.putInt(seg, offset, FORMAT_IDENTIFIER);
        seg.set(ValueLayout.JAVA_BYTE, offset + 4, (byte) VERSION);
        // Reserved bits are zero (RFC 8797 §4).
        seg.set(ValueLayout.JAVA_BYTE, offset + 5, (byte) (remoteInvalidation ? FLAG_R : 0));
        seg.set(ValueLayout.JAVA_BYTE, offset + 6, (byte) encodeBufferSize(sendSize));
        seg.set(ValueLayout.JAVA_BYTE, offset + 7, (byte) encodeBufferSize(receiveSize));
    }

    /** The 8 octets as a new array. */
    public byte[] toBytes() {
        byte[] b = new byte[LENGTH];
        encode(MemorySegment.ofArray(b), 0);
        return b;
    }

    /**
     * Searches {@code [offset, offset + length)} for a Version 1 message at any byte
     * offset: RDMA stacks may put their own bytes first (RFC 8797 §5.2). A match needs
     * the identifier, version 1 and all 8 octets inside the range; reserved bits are
     * ignored (§4). Returns the first match.
     */
    public static Optional<ConnectPrivate> find(MemorySegment seg, long offset, long length) {
        java.util.Objects.checkFromIndexSize(offset, length, seg.byteSize());
        for (long i = offset; i + LENGTH <= offset + length; i++) {
            if (Xdr.getInt(seg, i) == FORMAT_IDENTIFIER
                    && seg.get(ValueLayout.JAVA_BYTE, i + 4) == VERSION) {
                int flags = seg.get(ValueLayout.JAVA_BYTE, i + 5);
                return Optional.of(new ConnectPrivate((flags & FLAG_R) != 0,
                        decodeBufferSize(seg.get(ValueLayout.JAVA_BYTE, i + 6)),
                        decodeBufferSize(seg.get(ValueLayout.JAVA_BYTE, i + 7))));
            }
        }
        return Optional.empty();
    }

    /**
     * The peer's settings from its private data, or {@link #DEFAULT} if there is no valid
     * Version 1 message in it (RFC 8797 §5.1).
     */
    public static ConnectPrivate decode(MemorySegment seg, long offset, long length) {
        return find(seg, offset, length).orElse(DEFAULT);
    }

    /** As {@link #decode(MemorySegment, long, long)} for a byte array (null means none). */
    public static ConnectPrivate decode(byte[] privateData) {
        if (privateData == null) {
            return DEFAULT;
        }
        return decode(MemorySegment.ofArray(privateData), 0, privateData.length);
    }
}
