package org.rpcrdma.nfs4;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * What the README tells a Java user: every ```java block compiles as written, imports
 * included, against the modules of this build; the Maven coordinates are the poms'. (This
 * module's tests see every library module, so the samples are compiled here.)
 */
class ReadmeSnippetsTest {
    private static final Path ROOT = Path.of("..");
    /** The library modules a user depends on (bench is a program). */
    private static final List<String> MODULES = List.of("bindings", "transport", "oncrpc", "nfs4");

    /** Whether a sample imports oncrpc4j (compiled by the bridge module's test instead). */
    static boolean usesOncRpc4j(String block) {
        return block.contains("import org.dcache.oncrpc4j.");
    }

    /** The README's Java samples, in order. */
    static List<String> javaBlocks(String readme) {
        List<String> blocks = new ArrayList<>();
        Matcher m = Pattern.compile("(?m)^```java\n(.*?)^```$", Pattern.DOTALL).matcher(readme);
        while (m.find()) {
            blocks.add(m.group(1));
        }
        return blocks;
    }

    /**
     * A sample as a compilation unit: its imports on top, its statements the body of a
     * method that may throw (the samples are statements, as a user pastes them into main).
     */
    static String unit(String name, String block) {
        StringBuilder imports = new StringBuilder();
        StringBuilder body = new StringBuilder();
        for (String line : block.split("\n", -1)) {
            (line.startsWith("import ") ? imports : body).append(line).append('\n');
        }
        return imports + "class " + name + " {\n    static void sample() throws Exception {\n" + body + "    }\n}\n";
    }

    @Test
    void everyJavaSampleCompilesAsWritten() throws IOException {
        List<String> all = javaBlocks(Files.readString(ROOT.resolve("README.md")));
        // the oncrpc4j sample needs oncrpc4j, which only the bridge module sees: compiled there
        List<String> blocks = all.stream().filter(b -> !usesOncRpc4j(b)).toList();
        assertEquals(3, blocks.size(), "the README's Java samples (update this count when adding one)");
        assertEquals(1, all.size() - blocks.size(), "the README's oncrpc4j samples (ReadmeOncRpc4jSampleTest)");
        Path dir = Files.createTempDirectory("readme-samples");
        List<String> args = new ArrayList<>(List.of("-d", dir.resolve("classes").toString(), "-Xlint:all",
                "-Werror", "--release", "22", "-proc:none"));
        String modulePath = System.getProperty("jdk.module.path");
        if (modulePath != null) {
            args.addAll(List.of("--module-path", modulePath, "--add-modules", "org.rpcrdma.nfs4"));
        }
        args.addAll(List.of("-cp", System.getProperty("java.class.path")));
        for (int i = 0; i < blocks.size(); i++) {
            Path f = dir.resolve("ReadmeSample" + i + ".java");
            Files.writeString(f, unit("ReadmeSample" + i, blocks.get(i)));
            args.add(f.toString());
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream ps = new PrintStream(out, true, StandardCharsets.UTF_8);
        int rc = ToolProvider.findFirst("javac").orElseThrow().run(ps, ps, args.toArray(String[]::new));
        assertEquals(0, rc, "javac on the README's samples:\n" + out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void theMavenCoordinatesAreThePoms() throws IOException {
        String parent = Files.readString(ROOT.resolve("pom.xml"));
        String groupId = first(parent, "groupId");
        String version = first(parent, "version");
        String readme = Files.readString(ROOT.resolve("README.md"));
        assertTrue(readme.contains("<dependency>\n  <groupId>" + groupId + "</groupId>\n  <artifactId>rpcrdma-oncrpc"
                + "</artifactId>\n  <version>" + version + "</version>\n</dependency>"),
                "the README's dependency snippet: " + groupId + ":rpcrdma-oncrpc:" + version);
        assertTrue(readme.contains("groupId `" + groupId + "`"), "the README names the groupId");
        for (String module : MODULES) {
            String pom = Files.readString(ROOT.resolve(module).resolve("pom.xml"));
            String artifactId = first(pom.substring(pom.indexOf("</parent>")), "artifactId");
            String name = first(Files.readString(ROOT.resolve(module).resolve("src/main/java/module-info.java"))
                    .replaceAll("(?s)/\\*.*?\\*/", ""), null);
            assertTrue(readme.contains("| `" + artifactId + "` | `" + name + "` |"),
                    "the README's table has " + artifactId + " (module " + name + ")");
        }
    }

    /** The first {@code <tag>}'s text, or (tag null) the name after {@code module}. */
    private static String first(String text, String tag) {
        Matcher m = Pattern.compile(tag == null ? "module\\s+([\\w.]+)" : "<" + tag + ">([^<]+)</" + tag + ">")
                .matcher(text);
        assertTrue(m.find(), "no " + (tag == null ? "module name" : tag));
        return m.group(1);
    }
}
