package org.rpcrdma.bench.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The pre-warm's calls take every path the curve's points take: inline, a long call, and an
 * echo whose reply comes through a Reply chunk. A path first run during a point runs in
 * the interpreter there (a C2-only JVM compiles a method after ~1,000 calls), which made
 * the first Reply-chunk points of a quick run ~1 ms slower at their minimum.
 */
class JitPrewarmTest {
    /** The argument sizes of the pre-warm's calls, NULL and echo, in order. */
    private static List<String> calls(int[] sizes, int threshold) {
        JitPrewarm.Calls c = new JitPrewarm.Calls(sizes, threshold);
        List<String> got = new ArrayList<>();
        for (int i = 0; i < c.messages.length; i++) {
            got.add((i % 2 == 0 ? "null " : "echo ") + (c.messages[i].byteSize() - 40));
        }
        return got;
    }

    @Test
    void coversInlineLongCallAndReplyChunk() {
        // 1 KiB threshold: 956 B is the last inline call, 957 B a long call whose echo still
        // comes back inline (28 + 24 + 957 <= 1024), 1024 B the first whose echo needs a Reply chunk
        assertEquals(List.of("null 0", "echo 0", "null 64", "echo 64", "null 956", "echo 956", "null 957", "echo 957",
                "null 1024", "echo 1024"), calls(new int[] {0, 64, 956, 957, 1024, 4096, 65536}, 1024));
    }

    @Test
    void aFirstChunkedSizeThatNeedsAReplyChunkIsTakenOnce() {
        // 4 KiB threshold: 4029 B is both the first long call and the first Reply-chunk echo
        assertEquals(List.of("null 64", "echo 64", "null 4096", "echo 4096"),
                calls(new int[] {64, 4096, 65536}, 4096));
    }

    @Test
    void replyFitsInlineUpToTheThresholdLessBothHeaders() {
        assertEquals(1024 - 28 - 24, JitPrewarm.lastInlineReply(1024));
    }
}
