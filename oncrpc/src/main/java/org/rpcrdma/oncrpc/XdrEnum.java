package org.rpcrdma.oncrpc;

/**
 * A Java enum that stands for an XDR enum (RFC 4506 §4.3): each constant's value on the
 * wire. {@link Codecs#enumeration(Class)} reads only these values; any other is a decode
 * error (GARBAGE_ARGS for a server).
 */
public interface XdrEnum {
    /** The value on the wire. */
    int value();
}
