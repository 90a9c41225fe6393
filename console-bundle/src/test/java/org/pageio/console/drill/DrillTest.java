package org.pageio.console.drill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.posix.Mman;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;

/**
 * The drill engine on real files (io_method=sync, a small table in 128-block segments, a tiny
 * pool): every cold run is proven cold, medians and files come out, a loaded table is reused, and
 * a segment kept resident (mapped and touched, so posix_fadvise cannot drop it) makes the drill
 * refuse to count that round as cold.
 */
class DrillTest {

    static final long ROWS = 20_000; // 607 blocks of t: 5 segments of 128 blocks

    static volatile long sink;

    @TempDir
    Path tmp;

    private DrillOptions options(int rounds, List<Integer> eic) {
        return new DrillOptions(ROWS, rounds, List.of("sync"), eic, 1024, tmp.resolve("drill"), tmp.resolve("results"), 128, 1);
    }

    private static DrillResult run(DrillOptions o, List<String> progress) throws Exception {
        return new Drill(o, Map.of("sync", new SyncIoMethod()), progress::add).run();
    }

    @Test
    void smallDrillRunsEndToEndAndReusesTheTable() throws Exception {
        List<String> progress = new ArrayList<>();
        DrillResult r = run(options(2, List.of(1, 16)), progress);
        assertFalse(r.reused());
        assertEquals(607, r.blocks());
        assertEquals(List.of("seq-cold-eic1", "seq-cold-eic16", "seq-warm"), r.cases().stream().map(c -> c.drillCase().id()).toList());
        for (DrillResult.CaseResult c : r.cases()) {
            for (DrillResult.Series s : c.series()) {
                assertEquals(2, s.samples().size(), c.drillCase().id() + " " + s.name());
                for (Sample x : s.samples()) {
                    assertTrue(x.counted(), c.drillCase().id() + " " + s.name() + ": " + x.note());
                    assertEquals(r.tableBytes(), x.readBytes(), c.drillCase().id() + " " + s.name());
                    if (c.drillCase().cold()) {
                        assertEquals(0, x.residentPages());
                    } else {
                        assertEquals(x.totalPages(), x.residentPages());
                    }
                }
                assertNotNull(s.stats());
            }
            // count(*) reads combine 16 blocks, except at the end of each 128-block segment
            assertTrue(c.series("sync").stats().bytesPerRead() > 100_000, "bytes per read " + c.series("sync").stats().bytesPerRead());
        }
        assertTrue(progress.stream().anyMatch(l -> l.startsWith("drill: loading t")), progress.toString());
        assertTrue(progress.stream().anyMatch(l -> l.startsWith("drill: round 2/2")), progress.toString());

        DrillReport report = new DrillReport(r);
        String text = report.text();
        assertTrue(text.contains("count(*), cold, effective_io_concurrency=16"), text);
        assertTrue(text.contains("FileChannel (baseline)"), text);
        assertTrue(text.contains("What it says:"), text);
        Path json = report.write(r.options().resultsDir());
        assertTrue(Files.readString(json).contains("\"id\": \"seq-cold-eic16\""));
        assertTrue(Files.exists(json.resolveSibling(json.getFileName().toString().replace(".json", ".md"))));

        List<String> again = new ArrayList<>();
        DrillResult r2 = run(options(1, List.of(16)), again);
        assertTrue(r2.reused(), again.toString());
        assertTrue(again.get(0).startsWith("drill: reusing table t"), again.toString());
    }

    @Test
    void aResidentSegmentIsNeverCountedAsCold() throws Exception {
        run(options(1, List.of(16)), new ArrayList<>()); // loads t
        Path dir = tmp.resolve("drill").resolve("base");
        Path segment;
        try (var files = Files.walk(dir)) {
            segment = files.filter(p -> p.getFileName().toString().endsWith(".1")).findFirst().orElseThrow();
        }
        long size = Files.size(segment);
        int fd = Posix.open(segment, OpenFlags.O_RDONLY, 0);
        MemorySegment map = Posix.mmap(size, Mman.PROT_READ, Mman.MAP_SHARED, fd, 0, segment);
        try {
            long sum = 0;
            for (long off = 0; off < size; off += Posix.pageSize()) {
                sum += map.get(ValueLayout.JAVA_BYTE, off); // fault every page in; mapped pages survive DONTNEED
            }
            sink = sum;
            DrillResult r = run(options(1, List.of(16)), new ArrayList<>());
            assertTrue(r.reused());
            for (String name : List.of("sync", Drill.FILE_CHANNEL, Drill.ASYNC_FILE_CHANNEL)) {
                List<Sample> cold = r.samples("seq-cold-eic16", name);
                assertEquals(1, cold.size());
                Sample s = cold.get(0);
                assertFalse(s.counted(), name + " was counted as cold with " + s.residentPages() + " pages resident");
                assertTrue(s.residentPages() > 0);
                assertTrue(s.note().startsWith("not cold:") && s.note().contains(segment.getFileName().toString()), s.note());
                assertNull(r.cases().get(0).series(name).stats(), "no cold median from a warm round");
                assertTrue(r.samples("seq-warm", name).get(0).counted());
            }
            String text = new DrillReport(r).text();
            assertTrue(text.contains("cold run(s) were not counted"), text);
        } finally {
            Posix.munmap(map);
            Posix.close(fd, segment);
        }
    }
}
