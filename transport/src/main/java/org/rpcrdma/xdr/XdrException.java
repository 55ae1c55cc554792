package org.rpcrdma.xdr;

/**
 * Received XDR data can't be decoded: it ends early, or a field has a value its type
 * does not allow (RFC 4506). Stack-trace-free, so a peer that sends garbage can't make
 * errors expensive; the message says what and where.
 *
 * <p>{@link RpcMessageException} narrows this for ONC RPC headers.
 */
public sealed class XdrException extends Exception permits RpcMessageException {
    private static final long serialVersionUID = 1L;

    /** Creates an error with the given description. */
    public XdrException(String message) {
        super(message, null, false, false);
    }
}
