package org.rpcrdma.nfs4.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rpcrdma.nfs4.Nfs4Client;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * The server's warm-up mount of itself lists the export with the attributes of
 * {@code ls -l} (through a Reply chunk: more entries than inline holds) and leaves
 * nothing behind: no client, open, delegation, and the directory as it was.
 */
class WarmUpTest {
    @TempDir
    Path dir;
    private NfsServer server;
    private InMemoryPair pair;

    @BeforeEach
    void open() throws Exception {
        server = new NfsServer(dir, 90, RpcRdmaOptions.DEFAULT_INLINE, 2);
        pair = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), server.dispatcher());
    }

    @AfterEach
    void close() {
        pair.close();
        server.close();
    }

    @Test
    void listsTheExportAndLeavesNoStateNorChange() throws Exception {
        for (int i = 0; i < 40; i++) {
            Files.writeString(dir.resolve("file-" + i), "x".repeat(i));
        }
        List<String> before = snapshot();
        int listed;
        try (Nfs4Client c = Nfs4Client.open(pair.client(), 2, CallbackSender.CREDENTIAL)) {
            listed = WarmUp.run(c, 3);
        }
        assertEquals(40, listed, "READDIR listed every entry");
        assertEquals(0, server.clients(), "client ID destroyed");
        assertEquals(0, server.openStates());
        assertEquals(0, server.delegations());
        assertEquals(before, snapshot(), "names, sizes and times of the export unchanged");
    }

    @Test
    void theLocalWarmUpListsEveryFileThroughSeveralReaddirsAndRemovesItsDirectory() throws Exception {
        long before = warmUpDirs();
        assertEquals(1_000, WarmUp.local(1_000, 2), "every entry, READDIR after READDIR from the last cookie");
        assertEquals(before, warmUpDirs(), "its temporary directory removed");
    }

    private static long warmUpDirs() throws Exception {
        try (Stream<Path> s = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return s.filter(p -> p.getFileName().toString().startsWith("nfs-server-warm-up")).count();
        }
    }

    private List<String> snapshot() throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().map(p -> {
                try {
                    FileTime m = Files.getLastModifiedTime(p);
                    return p.getFileName() + " " + Files.size(p) + " " + m.toMillis();
                } catch (java.io.IOException e) {
                    throw new IllegalStateException(e);
                }
            }).toList();
        }
    }
}
