package org.rpcrdma.nfs4;

import java.util.Arrays;
import java.util.HexFormat;
import org.rpcrdma.xdr.XdrException;
import org.rpcrdma.xdr.XdrReader;
import org.rpcrdma.xdr.XdrWriter;

/**
 * stateid4 (RFC 5662): {@code uint32_t seqid; opaque other[12];}. Two stateids name the
 * same state when their {@code other} fields are equal (RFC 8881 §8.2.2); the seqid counts
 * its changes.
 */
public record Stateid(int seqid, byte[] other) {
    public static final int OTHER_SIZE = 12;

    public Stateid {
        if (other.length != OTHER_SIZE) {
            throw new IllegalArgumentException("stateid4.other is 12 bytes, given " + other.length);
        }
        other = other.clone();
    }

    @Override
    public byte[] other() {
        return other.clone();
    }

    /** Whether {@code o} names the same state (its {@code other} field), whatever its seqid. */
    public boolean sameState(Stateid o) {
        return Arrays.equals(other, o.other);
    }

    void encode(XdrWriter w) {
        w.writeInt(seqid).writeFixedOpaque(other);
    }

    static Stateid decode(XdrReader r) throws XdrException {
        return new Stateid(r.readInt(), r.readFixedOpaque(OTHER_SIZE));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Stateid s && s.seqid == seqid && Arrays.equals(s.other, other);
    }

    @Override
    public int hashCode() {
        return 31 * seqid + Arrays.hashCode(other);
    }

    @Override
    public String toString() {
        return "stateid(" + seqid + ", " + HexFormat.of().formatHex(other) + ")";
    }
}
