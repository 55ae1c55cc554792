package org.rpcrdma.transport.chunk;

import java.security.SecureRandom;

/**
 * The 8-bit tag (the "key" byte) each bind of a memory window puts in its rkey, drawn at
 * random rather than incremented (RFC 8166 §8.1: an rkey a peer can guess reaches memory it
 * was not offered; Linux's frwr_map increments the MR key instead). Never the window's
 * current tag, so the previous bind's rkey is dead once the window is bound again (RFC 8166
 * §4.4). The bytes come from a {@link SecureRandom}, 64 at a time. Not thread-safe: its
 * {@link WindowPool} calls it under its lock.
 */
final class RkeyTags {
    private final SecureRandom random = new SecureRandom();
    private final byte[] drawn = new byte[64];
    private int next = drawn.length;

    /** {@code rkey} with a fresh random tag in its low byte, never the one it has. */
    int renew(int rkey) {
        int old = rkey & 0xff;
        int tag;
        do {
            if (next == drawn.length) {
                random.nextBytes(drawn);
                next = 0;
            }
            tag = drawn[next++] & 0xff;
        } while (tag == old);
        return rkey & ~0xff | tag;
    }
}
