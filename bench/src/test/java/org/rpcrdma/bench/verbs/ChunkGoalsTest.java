package org.rpcrdma.bench.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rpcrdma.bench.verbs.LatencyCurve.Point;

class ChunkGoalsTest {
    private static Point p(String series, String op, int size, double p50, double p99) {
        return new Point(series, op, 4096, size, "ok", 1000, p50 / 2, p50, p99, p99, p50);
    }

    @Test
    void eachShapeIsJudgedAgainstTheOperationsItIsMadeOfInTheSameRound() {
        List<Point> pts = new ArrayList<>(List.of(
                p("ib_send_lat", "r1", 64, 30, 300),
                p("ib_read_lat", "r1", 4096, 50, 500),
                p("ib_write_lat", "r1", 4096, 40, 400), // a ping-pong: one Write is half of it
                p("ib_send_lat", "r2", 64, 1000, 1000))); // another round's: never mixed in
        // long call and DDP WRITE: Send round trip + RDMA Read
        assertEquals(80, ChunkGoals.base(pts, "chunk-long", 4096, "r1", Point::p50), 1e-9);
        assertEquals(800, ChunkGoals.base(pts, "chunk-ddp-write", 4096, "r1", Point::p99), 1e-9);
        // echo: + one Write; DDP READ: Send round trip + one Write, no Read
        assertEquals(100, ChunkGoals.base(pts, "chunk-echo", 4096, "r1", Point::p50), 1e-9);
        assertEquals(50, ChunkGoals.base(pts, "chunk-ddp-read", 4096, "r1", Point::p50), 1e-9);
        // a missing part: no sum
        assertTrue(Double.isNaN(ChunkGoals.base(pts, "chunk-long", 65536, "r1", Point::p50)));
        assertTrue(Double.isNaN(ChunkGoals.base(pts, "chunk-long", 4096, "r3", Point::p50)));
    }

    @Test
    void theOperationsInTheRowsModesAreSummedFromTheirOwnPerftestRuns() {
        List<Point> pts = new ArrayList<>(List.of(
                p("ib_send_lat", "r1", 64, 30, 300),
                p(ChunkGoals.SEND_SERVER_EVENTS, "r1", 64, 80, 800),
                p("ib_read_lat", "r1", 4096, 50, 500),
                p(ChunkGoals.READ_READER_EVENTS, "r1", 4096, 150, 1500),
                p("ib_write_lat", "r1", 4096, 40, 400)));
        assertEquals(230, ChunkGoals.baseInModes(pts, "chunk-long", 4096, "r1", Point::p50), 1e-9);
        assertEquals(250, ChunkGoals.baseInModes(pts, "chunk-echo", 4096, "r1", Point::p50), 1e-9); // the Write busy
        assertEquals(100, ChunkGoals.baseInModes(pts, "chunk-ddp-read", 4096, "r1", Point::p50), 1e-9);
        assertEquals(80, ChunkGoals.base(pts, "chunk-long", 4096, "r1", Point::p50), 1e-9); // the judged sum as before
        assertTrue(Double.isNaN(ChunkGoals.baseInModes(pts, "chunk-long", 4096, "r2", Point::p50)));
        pts.add(p("chunk-long", "r1", 4096, 460, 1600));
        StringWriter w = new StringWriter();
        ChunkGoals.print(pts, new PrintWriter(w, true));
        String line = w.toString().lines().filter(l -> l.contains(" chunk-long ") && l.contains(" 4096 "))
                .findFirst().orElseThrow();
        assertTrue(line.contains("5.75x NOT") && line.endsWith("2.00x / 0.70x"), line);
    }

    @Test
    void theTablePrintsTheMedianRatioAndWhetherItIsMet() {
        List<Point> pts = new ArrayList<>();
        for (String op : new String[] {"r1", "r2", "r3"}) {
            pts.add(p("ib_send_lat", op, 64, 30, 300));
            pts.add(p("ib_read_lat", op, 4096, 50, 500));
        }
        pts.add(p("chunk-long", "r1", 4096, 150, 3000)); // 1.875x, 3.75x
        pts.add(p("chunk-long", "r2", 4096, 400, 8000)); // 5x, 10x
        pts.add(p("chunk-long", "r3", 4096, 120, 2000)); // 1.5x, 2.5x
        StringWriter w = new StringWriter();
        ChunkGoals.print(pts, new PrintWriter(w, true));
        String line = w.toString().lines().filter(l -> l.contains(" chunk-long ") && l.contains(" 4096 "))
                .findFirst().orElseThrow();
        assertTrue(line.contains("1.88x met"), line);
        assertTrue(line.contains("3.75x met"), line);
    }

    @Test
    void roundsLabelledWithTheirJitAreJudgedPerJit() {
        // scripts/bench runs the goal rounds under both JITs: ops "c2-r1".."c1-r3"
        List<Point> pts = new ArrayList<>();
        for (String jit : new String[] {"c2", "c1"}) {
            for (int r = 1; r <= 3; r++) {
                String op = jit + "-r" + r;
                pts.add(p("ib_send_lat", op, 64, 30, 300));
                pts.add(p("ib_read_lat", op, 4096, 50, 500));
                pts.add(p("chunk-long", op, 4096, jit.equals("c2") ? 120 : 400, 2000)); // 1.5x / 5x
            }
        }
        StringWriter w = new StringWriter();
        ChunkGoals.print(pts, new PrintWriter(w, true));
        List<String> lines = w.toString().lines().filter(l -> l.contains("chunk-long") && l.contains(" 4096 ")).toList();
        assertEquals(2, lines.size(), w.toString());
        assertTrue(lines.get(0).startsWith("  C2") && lines.get(0).contains("1.50x met"), lines.get(0));
        assertTrue(lines.get(1).startsWith("  C1") && lines.get(1).contains("5.00x NOT"), lines.get(1));
    }
}
