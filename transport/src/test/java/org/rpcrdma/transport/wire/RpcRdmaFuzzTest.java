package org.rpcrdma.transport.wire;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Mutation fuzzing of the decoder, seeded and reproducible, in the normal test run: at
 * least one million inputs made by mutating valid encodings (bit flips, interesting
 * words, truncation, extension, word deletion/duplication/swaps). Each input sits at the
 * very end of an exactly sized segment, so any read past the given length throws
 * IndexOutOfBoundsException. The decoder must only ever return a header or throw
 * {@link RpcRdmaProtocolException}; a decoded header must re-encode to exactly the bytes
 * it was decoded from.
 */
class RpcRdmaFuzzTest {
    static final long SEED = Long.getLong("rpcrdma.fuzz.seed", 0xF022_8166L);
    static final int INPUTS = Integer.getInteger("rpcrdma.fuzz.inputs", 1_000_000);
    static final int[] INTERESTING = {
        0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 28, 40, 41, 42, 64, 255, 256, 1024, 4096,
        0xffff, 0x10000, 0x7fffffff, 0x80000000, 0x80000001, 0xfffffffc, 0xfffffffd, 0xfffffffe, -1,
        0x40000000, 0x40000001, 0x10000001, 0x0ccccccd
    };

    @Test
    void decoderReturnsHeaderOrTypedErrorForAMillionMutations() {
        SplittableRandom rnd = new SplittableRandom(SEED);
        List<byte[]> corpus = new ArrayList<>();
        for (int i = 0; i < 4000; i++) {
            corpus.add(RandomHeaders.next(rnd).bytes());
        }
        for (byte[] b : RpcRdmaMalformedTest.EXAMPLES.values()) {
            if (b != null) {
                corpus.add(b);
            }
        }
        RpcRdmaHeader big = Wire.bigHeader();
        RpcRdmaHeader small = RpcRdmaHeader.forInlineThreshold(1024);
        RpcRdmaHeader tiny = new RpcRdmaHeader(2, 1, 2, 1);
        Map<ProtocolViolation, Integer> seen = new EnumMap<>(ProtocolViolation.class);
        int accepted = 0;

        for (int i = 0; i < INPUTS; i++) {
            byte[] input = mutate(rnd, corpus.get(rnd.nextInt(corpus.size())));
            int lead = rnd.nextInt(4);
            byte[] backing = new byte[lead + input.length];
            System.arraycopy(input, 0, backing, lead, input.length);
            MemorySegment seg = MemorySegment.ofArray(backing);
            RpcRdmaHeader into = switch (i % 3) {
                case 0 -> big;
                case 1 -> small;
                default -> tiny;
            };
            try {
                RpcRdmaDecoder.decode(seg, lead, input.length, into);
            } catch (RpcRdmaProtocolException e) {
                seen.merge(e.violation(), 1, Integer::sum);
                if (e.response() != ErrorResponse.DROP_CONNECTION || e.violation() != ProtocolViolation.HEADER_TRUNCATED) {
                    assertTrue(e.hasXid(), e::getMessage);
                }
                continue;
            } catch (Throwable t) {
                throw new AssertionError("input " + i + " (seed 0x" + Long.toHexString(SEED) + ") threw "
                        + t + ": " + Wire.hex(input), t);
            }
            accepted++;
            checkAccepted(i, into, input, lead);
        }
        System.out.printf("fuzz: %d inputs, %d accepted, violations %s%n", INPUTS, accepted, seen);
        assertTrue(accepted > INPUTS / 50, "too few mutants decode: " + accepted);
        if (INPUTS >= 1_000_000) {
            // With the default seed and count every check in the decoder is reached.
            assertEquals(ProtocolViolation.values().length, seen.size(), "violations reached: " + seen.keySet());
        }
    }

    private static void checkAccepted(int i, RpcRdmaHeader h, byte[] input, int lead) {
        int hl = h.headerLength();
        assertTrue(hl >= 16 && hl <= input.length, "input " + i);
        byte[] again = Wire.encode(h);
        if (!Arrays.equals(again, Arrays.copyOf(input, hl))) {
            fail("input " + i + " re-encodes differently:\n in  " + Wire.hex(Arrays.copyOf(input, hl))
                    + "\n out " + Wire.hex(again));
        }
        if (h.isInline()) {
            assertEquals(lead + hl, h.messageOffset());
            assertEquals(input.length - hl, h.messageLength());
            assertEquals(h.xid(), h.rpcXid());
            assertFalse(h.readList().hasPositionZeroChunk());
        }
    }

    static byte[] mutate(SplittableRandom rnd, byte[] in) {
        byte[] b = in.clone();
        int rounds = 1 + rnd.nextInt(3);
        for (int r = 0; r < rounds; r++) {
            b = mutateOnce(rnd, b);
        }
        return b;
    }

    private static byte[] mutateOnce(SplittableRandom rnd, byte[] b) {
        int words = b.length / 4;
        switch (rnd.nextInt(9)) {
            case 0 -> { // bit flip
                if (b.length > 0) {
                    b[rnd.nextInt(b.length)] ^= (byte) (1 << rnd.nextInt(8));
                }
            }
            case 1 -> { // random byte
                if (b.length > 0) {
                    b[rnd.nextInt(b.length)] = (byte) rnd.nextInt(256);
                }
            }
            case 2, 3 -> { // interesting word, biased to the header's first words
                if (words > 0) {
                    int w = rnd.nextBoolean() ? rnd.nextInt(Math.min(words, 24)) : rnd.nextInt(words);
                    putWord(b, w, INTERESTING[rnd.nextInt(INTERESTING.length)]);
                }
            }
            case 4 -> { // truncate
                return Arrays.copyOf(b, rnd.nextInt(b.length + 1));
            }
            case 5 -> { // extend with random or interesting words
                int n = 1 + rnd.nextInt(8);
                byte[] out = Arrays.copyOf(b, b.length + 4 * n);
                for (int i = 0; i < n; i++) {
                    putWord(out, words + i, rnd.nextBoolean() ? rnd.nextInt() : INTERESTING[rnd.nextInt(INTERESTING.length)]);
                }
                return out;
            }
            case 6 -> { // delete a word range
                if (words > 0) {
                    int from = rnd.nextInt(words);
                    int n = 1 + rnd.nextInt(Math.min(6, words - from));
                    byte[] out = new byte[b.length - 4 * n];
                    System.arraycopy(b, 0, out, 0, 4 * from);
                    System.arraycopy(b, 4 * (from + n), out, 4 * from, b.length - 4 * (from + n));
                    return out;
                }
            }
            case 7 -> { // duplicate a word range in place
                if (words > 0) {
                    int from = rnd.nextInt(words);
                    int n = 1 + rnd.nextInt(Math.min(6, words - from));
                    byte[] out = new byte[b.length + 4 * n];
                    System.arraycopy(b, 0, out, 0, 4 * (from + n));
                    System.arraycopy(b, 4 * from, out, 4 * (from + n), b.length - 4 * from);
                    return out;
                }
            }
            default -> { // swap two words
                if (words > 1) {
                    int x = rnd.nextInt(words);
                    int y = rnd.nextInt(words);
                    int t = getWord(b, x);
                    putWord(b, x, getWord(b, y));
                    putWord(b, y, t);
                }
            }
        }
        return b;
    }

    private static void putWord(byte[] b, int w, int v) {
        b[4 * w] = (byte) (v >>> 24);
        b[4 * w + 1] = (byte) (v >>> 16);
        b[4 * w + 2] = (byte) (v >>> 8);
        b[4 * w + 3] = (byte) v;
    }

    private static int getWord(byte[] b, int w) {
        return ((b[4 * w] & 0xff) << 24) | ((b[4 * w + 1] & 0xff) << 16) | ((b[4 * w + 2] & 0xff) << 8)
                | (b[4 * w + 3] & 0xff);
    }
}
