package org.rpcrdma.oncrpc4j.example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * The README's "Already using oncrpc4j?" sample compiles as written, imports included,
 * against this module and oncrpc4j (the other samples are compiled by nfs4's
 * ReadmeSnippetsTest, which cannot see oncrpc4j). HelloRdmaTest runs the same program.
 */
class ReadmeOncRpc4jSampleTest {
    @Test
    void theOncRpc4jSampleCompilesAsWritten() throws IOException {
        String readme = Files.readString(Path.of("..", "README.md"));
        Matcher m = Pattern.compile("(?m)^```java\n(.*?)^```$", Pattern.DOTALL).matcher(readme);
        List<String> samples = new ArrayList<>();
        while (m.find()) {
            if (m.group(1).contains("import org.dcache.oncrpc4j.")) {
                samples.add(m.group(1));
            }
        }
        assertEquals(1, samples.size(), "the README's oncrpc4j samples");
        StringBuilder imports = new StringBuilder();
        StringBuilder body = new StringBuilder();
        for (String line : samples.get(0).split("\n", -1)) {
            (line.startsWith("import ") ? imports : body).append(line).append('\n');
        }
        Path dir = Files.createTempDirectory("readme-oncrpc4j");
        Path f = dir.resolve("ReadmeOncRpc4jSample.java");
        Files.writeString(f, imports + "class ReadmeOncRpc4jSample {\n    static void sample() throws Exception {\n"
                + body + "    }\n}\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream ps = new PrintStream(out, true, StandardCharsets.UTF_8);
        int rc = ToolProvider.findFirst("javac").orElseThrow().run(ps, ps, "-d", dir.resolve("classes").toString(),
                "--release", "22", "-proc:none", "-Xlint:all,-classfile,-processing", "-Werror",
                "-cp", System.getProperty("java.class.path"), f.toString());
        assertEquals(0, rc, "javac on the README's oncrpc4j sample:\n" + out.toString(StandardCharsets.UTF_8));
    }
}
