package org.rpcrdma.xdr;

import java.util.Arrays;

/**
 * An {@code opaque_auth}: flavor plus up to 400 bytes of body (RFC 5531 §8.2). Used to
 * build credentials and verifiers for encoding; decoders report the body's location in
 * the buffer instead, to avoid copying.
 *
 * @param flavor auth_flavor, e.g. {@link OncRpc#AUTH_NONE} or {@link OncRpc#AUTH_SYS}
 * @param body   the flavor's body (copied; at most {@link OncRpc#MAX_AUTH_BYTES})
 */
public record OpaqueAuth(int flavor, byte[] body) {
    /** AUTH_NONE with an empty body: the usual verifier. */
    public static final OpaqueAuth NONE = new OpaqueAuth(OncRpc.AUTH_NONE, new byte[0]);

    /** Validates the body length and takes a defensive copy. */
    public OpaqueAuth {
        if (body.length > OncRpc.MAX_AUTH_BYTES) {
            throw new IllegalArgumentException("opaque_auth body of " + body.length + " bytes exceeds "
                    + OncRpc.MAX_AUTH_BYTES);
        }
        body = body.clone();
    }

    /** The body (a copy). */
    @Override
    public byte[] body() {
        return body.clone();
    }

    /** Encoded size: flavor, length, body and pad. */
    public int encodedLength() {
        return 8 + Xdr.roundUp(body.length);
    }

    void encode(XdrWriter w) {
        w.writeInt(flavor).writeOpaque(body);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof OpaqueAuth a && a.flavor == flavor && Arrays.equals(a.body, body);
    }

    @Override
    public int hashCode() {
        return 31 * flavor + Arrays.hashCode(body);
    }

    @Override
    public String toString() {
        return "OpaqueAuth[flavor=" + flavor + ", " + body.length + " bytes]";
    }
}
