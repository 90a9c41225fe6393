package org.pageio.measure.drill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.measure.drill.ConcurrentCase.Run;
import org.pageio.measure.drill.ConcurrentCase.State;

/**
 * The hot and concurrent cases on real files with {@code sync}: a 304-block {@code t_small} (10,000
 * rows) in a pool too small to hold it four times, so the cases build a bigger one; which blocks
 * were hits and which were read, the fast path engaged or not, each session's slice, fio's jobs.
 * Every count is also checked by the cases themselves against the generator.
 */
class HotConcurrentTest {

    static final long ROWS = 20_000; // t_small: 10,000 rows, 304 blocks of 33 rows

    @TempDir
    Path tmp;

    private DrillOptions options(long segmentBlocks, List<Integer> sessions, String cases) {
        return new DrillOptions(ROWS, 1, List.of("sync"), List.of(16), 1024, tmp.resolve("drill"), null, segmentBlocks, 1,
                DrillOptions.parseCases(cases), true).withSessions(sessions);
    }

    private static DrillResult run(DrillOptions o) throws Exception {
        return new Drill(o, Map.of("sync", new SyncIoMethod()), DrillProgress.lines(s -> { })).run();
    }

    @Test
    void slicesCoverTheTableExactlyOnce() {
        for (long blocks : new long[] {5, 304, 7576}) {
            for (int n : new int[] {1, 2, 3, 5, 8, 32}) {
                if (n > blocks) {
                    continue;
                }
                List<ConcurrentCase.Slice> s = ConcurrentCase.slices(blocks, n);
                assertEquals(n, s.size());
                long next = 0;
                long min = Long.MAX_VALUE;
                long max = 0;
                for (ConcurrentCase.Slice x : s) {
                    assertEquals(next, x.first(), blocks + " blocks, " + n + " slices: disjoint and adjacent");
                    next += x.count();
                    min = Math.min(min, x.count());
                    max = Math.max(max, x.count());
                }
                assertEquals(blocks, next, "every block once");
                assertTrue(max - min <= 1, "equal within a block: " + s);
            }
        }
    }

    @Test
    void sessionsAreOneToSixtyFour() {
        DrillOptions o = options(4096, List.of(1), "hot");
        assertEquals(DrillOptions.DEFAULT_SESSIONS, o.withSessions(List.of()).sessions());
        assertThrows(IllegalArgumentException.class, () -> o.withSessions(List.of(0)));
        assertThrows(IllegalArgumentException.class, () -> o.withSessions(List.of(1, 65)));
        assertEquals(List.of(1, 2, 8, 32), DrillOptions.parseSessions("1, 2,8,32"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DrillOptions.parseSessions("1,x"));
        assertTrue(e.getMessage().startsWith("--sessions: "), e.getMessage());
        assertTrue(DrillOptions.ALL_CASES.containsAll(List.of("hot", "concurrent")), "both in the default drill");
    }

    @Test
    void hotAndConcurrentCasesCountEveryBlockWhereTheyShould() throws Exception {
        DrillResult r = run(options(4096, List.of(1, 3), "hot,concurrent"));
        assertTrue(r.cases().isEmpty(), "no other case ran");
        assertEquals(DrillOptions.TABLE, r.concurrent().warmTable(), "OS-warm sessions scan t");
        assertEquals(r.table(DrillOptions.TABLE).blocks(), r.concurrent().warmBlocks());
        DrillResult.TableFigures small = r.table(DrillOptions.SMALL_TABLE);
        assertEquals(10_000, small.rows());
        long blocks = small.blocks();
        assertEquals(304, blocks);

        HotCase.Result hot = r.hot();
        assertNotNull(hot);
        assertEquals("sync", hot.method());
        assertEquals(4 * 304, hot.sharedBuffers(), "a pool of four times the table, the drill's own being smaller");
        for (String runner : HotCase.RUNNERS) {
            List<HotCase.Run> runs = hot.of(runner);
            assertEquals(1, runs.size(), runner + ": one round, counted");
            HotCase.Run x = runs.get(0);
            assertTrue(x.passes() >= 1 && x.nanos() >= HotCase.MIN_RUN_NANOS, x.toString());
            if (runner.equals(HotCase.PLAIN_LOOP)) {
                assertEquals(0, x.hits());
                continue;
            }
            assertEquals(0, x.reads(), runner + ": nothing read");
            assertEquals(x.passes() * blocks, x.hits(), runner + ": every block a hit, every pass");
            // with the fast path, every block but each pass's first comes through it
            assertEquals(runner.equals(HotCase.FAST_PATH) ? x.passes() * (blocks - 1) : 0, x.fastPathReturns(), runner);
        }

        ConcurrentCase.Result c = r.concurrent();
        assertNotNull(c);
        assertNull(c.fioNote(), "one segment file: fio runs");
        assertEquals(List.of("sync", ConcurrentCase.PLAIN_LOOP), c.runners().get(State.HOT));
        assertEquals(List.of("sync", ConcurrentCase.FILE_CHANNEL, ConcurrentCase.FIO_BUFFERED), c.runners().get(State.WARM));
        assertEquals(List.of("sync", ConcurrentCase.FILE_CHANNEL, ConcurrentCase.FIO_BUFFERED, ConcurrentCase.FIO_DIRECT),
                c.runners().get(State.COLD));
        long bytes = blocks * StorageManager.BLCKSZ;
        for (State s : State.values()) {
            for (int n : List.of(1, 3)) {
                for (String runner : c.runners().get(s)) {
                    List<Run> runs = c.of(s, n, runner);
                    assertEquals(1, runs.size(), s + " " + n + " " + runner + ": counted");
                    Run x = runs.get(0);
                    boolean fio = runner.startsWith("fio ");
                    assertEquals(fio ? 0 : n, x.sessionNanos().length, "a time per session");
                    if (fio) {
                        long tb = s == State.WARM ? c.warmBlocks() : blocks;
                        long region = ConcurrentCase.fioRegion(tb, n);
                        assertEquals(region % ConcurrentCase.fioReadSize(tb, n), 0, "whole reads");
                        assertTrue(region <= tb / n * StorageManager.BLCKSZ && region > tb / n * StorageManager.BLCKSZ - 128 * 1024,
                                "a slice's bytes in whole reads: " + region);
                        assertEquals(n * region, x.bytes(), "N jobs, each its region once");
                        continue;
                    }
                    long tableBytes = s == State.WARM ? c.warmBlocks() * StorageManager.BLCKSZ : bytes; // OS-warm: t
                    assertEquals((s == State.HOT ? c.hotPasses() : 1) * tableBytes, x.bytes(), x.toString());
                    if (runner.equals("sync")) {
                        if (s == State.HOT) {
                            assertEquals(0, x.reads(), "hot: nothing read");
                            assertEquals(c.hotPasses() * blocks, x.hits(), "hot: every block of every slice a hit");
                            assertTrue(x.fastPathReturns() > 0, "the sessions' streams took the fast path");
                        } else {
                            assertEquals(0, x.hits(), s + ": shared buffers were empty");
                            assertTrue(x.reads() > 0 && x.streamIos() == x.reads(), s + ": every block read by the streams: " + x);
                            assertEquals(0, x.fastPathReturns(), s + ": no block was there to take the fast path");
                        }
                    }
                }
            }
        }

        String text = new DrillReport(r).text();
        assertTrue(text.contains("A table wholly in shared buffers") && text.contains("Sessions scanning at once"), text);
        assertTrue(text.contains("| pageio, no fast path |") && text.contains("| cold | 3 | fio direct |"), text);
        String md = new DrillReport(r).markdown();
        assertTrue(md.contains("## A table in shared buffers against a plain loop") && md.contains("## Sessions scanning at once"), md);
        String json = new DrillReport(r).json();
        assertTrue(json.contains("\"hot\" : {") || json.contains("\"hot\": {"), json);
        assertTrue(json.contains("\"fast_path_speedup\"") && json.contains("\"slowest_over_fastest\"") && json.contains("\"sessions\""),
                json);
        assertFalse(json.contains("NaN"), "no figure is NaN in the JSON");
    }

    @Test
    void aTableOverSeveralSegmentsHasSlicesAcrossThemAndNoFio() throws Exception {
        DrillResult r = run(options(128, List.of(2, 5), "concurrent"));
        ConcurrentCase.Result c = r.concurrent();
        assertTrue(c.fioNote().contains("3 segment files"), c.fioNote());
        List<String> notCounted = new ArrayList<>();
        for (Run x : c.runs()) {
            if (!x.counted()) {
                notCounted.add(x.toString());
            }
        }
        assertTrue(notCounted.isEmpty(), notCounted.toString());
        assertEquals(3 * 2 * 2, c.runs().size(), "hot: sync and the plain loop; OS-warm and cold: sync and FileChannel");
        assertNull(r.hot());
    }
}
