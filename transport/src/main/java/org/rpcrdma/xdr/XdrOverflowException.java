package org.rpcrdma.xdr;

/**
 * An {@link XdrWriter} ran out of room. Distinct from other {@link IllegalStateException}s
 * so that an encoder which sizes its buffer by trying (encode, and on overflow encode again
 * into a larger one) can tell its own overflow from a bug in the value being encoded.
 */
public final class XdrOverflowException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** Creates the error with its description. */
    public XdrOverflowException(String message) {
        super(message);
    }
}
