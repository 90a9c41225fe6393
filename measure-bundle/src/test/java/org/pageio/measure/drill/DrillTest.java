package org.pageio.measure.drill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.posix.Mman;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;
import org.pageio.table.TableInfo;
import org.pageio.table.TableServices;
import org.pageio.heap.vm.VisibilityMap;

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
        return new DrillOptions(ROWS, rounds, List.of("sync"), eic, 1024, tmp.resolve("drill"), tmp.resolve("results"), 128, 1,
                DrillOptions.ALL_CASES, true);
    }

    private static DrillResult run(DrillOptions o, List<String> progress) throws Exception {
        return new Drill(o, Map.of("sync", new SyncIoMethod()), DrillProgress.lines(progress::add)).run();
    }

    /**
     * Only the eic=1 sequential case: the warm-up still runs at the default eic (it used to overrun the read buffers).
     * With --seq-hint: the method runs again with posix_fadvise(SEQUENTIAL), reads the whole table, and is never the
     * "fastest method" of the targets.
     */
    @Test
    void oneCaseAtEicOneRunsAndReportsJson() throws Exception {
        DrillOptions o = new DrillOptions(ROWS, 1, List.of("sync"), List.of(1), 1024, tmp.resolve("drill"), null, 128, 1,
                DrillOptions.parseCases("seq"), false).withSeqHint(true);
        DrillResult r = run(o, new ArrayList<>());
        assertEquals(List.of("seq-cold-eic1"), r.cases().stream().map(c -> c.drillCase().id()).toList());
        DrillResult.CaseResult c = r.cases().get(0);
        assertEquals(List.of("sync", "sync" + Drill.SEQ_HINT_SUFFIX, Drill.FILE_CHANNEL, Drill.ASYNC_FILE_CHANNEL),
                c.series().stream().map(DrillResult.Series::name).toList());
        DrillResult.Series hinted = c.series("sync" + Drill.SEQ_HINT_SUFFIX);
        assertTrue(hinted.variant() && !hinted.baseline());
        Sample x = hinted.samples().get(0);
        assertTrue(x.counted(), x.note());
        assertEquals(r.table("t").bytes(), x.readBytes());
        assertEquals("sync", c.fastestMethod().name(), "a lever PostgreSQL does not pull is never the fastest method");
        String text = new DrillReport(r).text();
        assertTrue(text.contains("posix_fadvise(SEQUENTIAL) on t's segments") && text.contains("eic=1 sync "), text);
        String json = new DrillReport(r).json();
        assertTrue(json.contains("\"id\": \"seq-cold-eic1\""), json);
        assertTrue(json.contains("\"name\": \"AsynchronousFileChannel\""), json);
        assertTrue(json.contains("\"cpu_median_ms\": "), json);
    }

    @Test
    void smallDrillRunsEndToEndAndReusesTheTable() throws Exception {
        assertTrue(org.pageio.measure.fio.Fio.find().isPresent(), "fio must be installed on this machine (apt-get install fio): the drill runs it");
        List<String> progress = new ArrayList<>();
        DrillResult r = run(options(2, List.of(1, 16)), progress);
        assertFalse(r.reused());
        assertEquals(607, r.table("t").blocks());
        DrillResult.TableFigures pf = r.table("prefetch_test");
        assertEquals(426, pf.blocks()); // 20,000 rows at 47 a page
        assertTrue(pf.indexBlocks() > 1, "index blocks " + pf.indexBlocks());
        assertEquals(List.of("seq-cold-eic1", "seq-cold-eic16", "seq-warm", "bitmap-cold-eic1", "bitmap-cold-eic16", "index-cold-eic1",
                "index-cold-eic16"),
                r.cases().stream().map(c -> c.drillCase().id()).toList());

        // the visibility case: 10,000 rows, every count checked by the case itself against the generator
        VisibilityCase.Result v = r.visibility();
        assertEquals(10_000, v.rows());
        assertEquals(java.util.stream.LongStream.rangeClosed(1, 10_000).filter(g -> g % 5 == 0 && !VisibilityCase.deleted(g)).count(),
                v.updated(), "UPDATE … WHERE id % 5 = 0, of the rows left");
        for (VisibilityCase.Behaviour b : VisibilityCase.Behaviour.values()) {
            List<VisibilityCase.Run> runs = v.of("sync", b);
            assertEquals(2, runs.size(), b + ": two rounds, both counted");
            for (VisibilityCase.Run x : runs) {
                assertTrue(x.fetchesBefore() >= v.expectedIos(), b + ": before, every entry's page needs a fetch: " + x);
                if (b == VisibilityCase.Behaviour.PG19) {
                    assertEquals(0, x.fetchesAfterSeq(), "the sequential scan set the map: " + x);
                } else {
                    assertEquals(x.fetchesBefore(), x.fetchesAfterSeq(), "PostgreSQL 18: a scan sets nothing: " + x);
                }
                assertEquals(0, x.fetchesAfterVacuum(), b + ": after VACUUM, no fetch: " + x);
            }
        }

        // the generator's answer for val BETWEEN 20000 AND 20172, independent of the pages
        long[] fetches = DrillTables.indexOrderBlocks(ROWS, 1);
        long[] distinct = DrillTables.distinctSorted(fetches);
        assertTrue(fetches.length > 30 && distinct.length > 30, fetches.length + " rows, " + distinct.length + " blocks");
        // the index scan repeats blocks; the scans read each distinct block once (checked on read bytes below)
        assertTrue(fetches.length > distinct.length, fetches.length + " fetches, " + distinct.length + " blocks");
        for (int i = 1; i < distinct.length; i++) {
            assertTrue(distinct[i] > distinct[i - 1]);
        }
        long tBytes = r.table("t").bytes();
        boolean device = RunProbe.forDirectory(tmp).hasDevice(); // a block device with sysfs counters (not overlayfs)
        for (DrillResult.CaseResult c : r.cases()) {
            DrillCase dc = c.drillCase();
            List<String> names = c.series().stream().map(DrillResult.Series::name).toList();
            if (dc.scan() == DrillCase.Scan.SEQ && dc.cold()) {
                // fio at every eic, at depth = eic
                assertEquals(List.of("sync", Drill.FILE_CHANNEL, Drill.ASYNC_FILE_CHANNEL, "fio seq buffered", "fio seq direct"), names);
                for (String f : List.of("fio seq buffered", "fio seq direct")) {
                    String d = c.series(f).description();
                    assertTrue(d.contains("at depth " + dc.eic() + ","), d);
                }
                assertEquals(tBytes, dc.bytes());
            } else if (dc.scan() != DrillCase.Scan.SEQ) {
                // fio replays the scan's own reads at the scan's depth, and reads as many bytes at depth 64
                assertEquals(List.of("sync", Drill.FILE_CHANNEL, Drill.ASYNC_FILE_CHANNEL, "fio same reads", "fio rand depth 64"), names);
                assertEquals(distinct.length * 8192L, dc.bytes());
                String d = c.series("fio same reads").description();
                assertTrue(d.contains("at depth " + dc.eic() + ","), d);
                for (Sample x : c.series("fio same reads").samples()) {
                    assertEquals(distinct.length, x.reads(), dc.id() + ": fio replays each distinct block once");
                }
                assertTrue(c.fioYardstick() == c.series("fio same reads") && c.fioCeiling() == c.series("fio rand depth 64"));
            } else {
                assertEquals(List.of("sync", Drill.FILE_CHANNEL, Drill.ASYNC_FILE_CHANNEL), names);
                assertEquals(tBytes, dc.bytes());
            }
            for (DrillResult.Series s : c.series()) {
                String what = dc.id() + " " + s.name();
                assertEquals(2, s.samples().size(), what);
                for (Sample x : s.samples()) {
                    assertTrue(x.counted(), what + ": " + x.note());
                    assertTrue(x.executionNanos() > 0, what);
                    if (dc.cold()) {
                        assertEquals(0, x.residentPages(), what);
                    } else {
                        assertEquals(x.totalPages(), x.residentPages(), what);
                    }
                    long expected = switch (dc.scan()) {
                        // t (607 blocks) fits in the 1024-buffer pool: the whole table read again in round 2 proves
                        // the method's pool was emptied between runs (BufferPool.evictAll), not left full of hits
                        case SEQ -> tBytes;
                        // the scans read their index pages too; FileChannel and AsynchronousFileChannel read every heap
                        // fetch (the index scan's repeats included); fio as many bytes as the distinct blocks
                        case BITMAP -> s.name().equals("sync") ? -1 : dc.bytes();
                        case INDEX -> s.name().equals("sync") ? -1 : s.fio() ? dc.bytes() : fetches.length * 8192L;
                    };
                    assertTrue(x.cpuNanos() >= 0, what + ": CPU time from /proc/self/stat or fio's usr_cpu + sys_cpu");
                    if (s.baseline()) {
                        assertTrue(x.streamInProgress() < 0, what + ": no read stream, no stream depth");
                    } else {
                        // every block is read (shared buffers emptied before each run): the stream started reads, at
                        // most max_ios = effective_io_concurrency of them unconsumed
                        assertTrue(x.streamInProgress() >= 1 && x.streamInProgress() <= Math.max(1, dc.eic()),
                                what + ": stream reads in progress " + x.streamInProgress());
                    }
                    if (device && dc.cold() && dc.scan() == DrillCase.Scan.SEQ) {
                        // 0% resident before the run: the device had to read at least the table (fio: all but the tails)
                        assertTrue(x.devReads() > 0 && x.devBytes() > tBytes - 5 * 131072 && x.devReadMs() >= 0,
                                what + ": device read " + x.devBytes() + " bytes in " + x.devReads() + " reads");
                    }
                    if (s.fio() && dc.scan() == DrillCase.Scan.SEQ) {
                        // fio reads whole 128 KiB blocks: it skips the last partial one of each file
                        assertTrue(x.readBytes() <= expected && x.readBytes() > expected - 5 * 131072, what + " " + x.readBytes());
                    } else if (expected >= 0) {
                        assertEquals(expected, x.readBytes(), what);
                    } else {
                        assertTrue(x.readBytes() > dc.bytes() && x.readBytes() < dc.bytes() + 64 * 8192, what + " " + x.readBytes());
                    }
                }
                assertNotNull(s.stats());
            }
            if (dc.scan() == DrillCase.Scan.SEQ) {
                // count(*) reads combine 16 blocks, except at the end of each 128-block segment
                assertTrue(c.series("sync").stats().bytesPerRead() > 100_000, "bytes per read " + c.series("sync").stats().bytesPerRead());
            }
        }
        assertTrue(progress.stream().anyMatch(l -> l.startsWith("drill: loading t (")), progress.toString());
        assertTrue(progress.stream().anyMatch(l -> l.startsWith("drill: loading prefetch_test (")), progress.toString());
        assertTrue(progress.stream().anyMatch(l -> l.startsWith("drill: built the index prefetch_test_val_idx")), progress.toString());
        assertTrue(progress.stream().anyMatch(l -> l.startsWith("drill: round 2/2")), progress.toString());

        DrillReport report = new DrillReport(r);
        String text = report.text();
        assertTrue(text.contains("count(*) of t, cold, effective_io_concurrency=16"), text);
        assertTrue(text.contains("bitmap heap scan of prefetch_test, cold"), text);
        assertTrue(text.contains("index scan of prefetch_test, cold"), text);
        assertTrue(text.contains("FileChannel (baseline)"), text);
        assertTrue(text.contains("fio seq direct (baseline)"), text);
        assertTrue(text.contains("What it says:"), text);
        assertTrue(text.contains("reaches") && text.contains("of fio's best sequential read on this disk"), text);
        assertFalse(text.toLowerCase(java.util.Locale.ROOT).contains("target"), "the reading grades against the device, not targets: " + text);
        // only sync runs here: it is the fastest method on all six cold cases, and the reading says to choose it
        assertTrue(text.contains("For this storage, choose io_method=sync: it was the fastest method on 6 of the 6 cold cases"), text);
        assertEquals(report.choice(), report.reading().stream().filter(l -> l.startsWith("For this storage")).findFirst().orElse(null));
        assertTrue(text.contains("Against fio at the same depth") && text.contains("eic=1: sync") && text.contains("eic=16: sync"), text);
        assertTrue(text.contains("emptied between runs"), text);
        assertTrue(text.contains("Where the time goes, cold count(*) at effective_io_concurrency=16") && text.contains("µs CPU"), text);
        assertTrue(text.contains("CPU ms") && text.contains("dev depth"), text);
        assertNoCpuFigureBelowItsResolution(r, text);
        assertTrue(text.contains("Bitmap heap scan, cold, effective_io_concurrency=16: sync"), text);
        assertTrue(text.contains("fio replaying the same reads at depth 16 took") && text.contains("(the device's ceiling)"), text);
        if (device) {
            assertTrue(text.matches("(?s).*device depth [0-9.]+ against fio's [0-9.]+, while sync kept [0-9.]+ of its 16 reads"
                    + " started and the device took [0-9]+ µs per read, fio's [0-9]+ µs.*"), text);
        }
        assertTrue(text.contains("CPU µs/block"), text);
        Path json = report.write(r.options().resultsDir());
        String js = Files.readString(json);
        assertTrue(js.contains("\"id\": \"seq-cold-eic16\""), js);
        assertTrue(js.contains("\"id\": \"bitmap-cold-eic16\"") && js.contains("\"speed_vs_fio_ceiling\": "), js);
        assertTrue(js.contains("\"cpu_us_per_block\": "), js);
        assertTrue(js.contains("\"device_read_us\": ") && js.contains("\"stream_reads_in_progress\": "), js);
        assertTrue(js.contains("\"speed_vs_sync\": 1.000"), js);
        String stem = json.getFileName().toString().replace(".json", "");
        assertTrue(Files.exists(json.resolveSibling(stem + ".md")));
        String svg = Files.readString(json.resolveSibling(stem + ".svg"));
        assertTrue(svg.startsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""), svg);
        assertTrue(svg.contains("bitmap heap scan of prefetch_test") && svg.contains("<path d=\"M") && svg.trim().endsWith("</svg>"), svg);
        var latest = DrillResults.latest(r.options().resultsDir()).orElseThrow();
        assertEquals(json, latest.json());
        assertEquals(json.resolveSibling(stem + ".svg"), latest.svg());

        List<String> again = new ArrayList<>();
        DrillResult r2 = run(options(1, List.of(16)).withCases(List.of("seq", "bitmap")).withFio(false), again);
        assertTrue(r2.reused(), again.toString());
        assertTrue(again.get(0).startsWith("drill: reusing table t"), again.toString());
        assertTrue(again.get(1).startsWith("drill: reusing table prefetch_test"), again.toString());
        assertEquals(List.of("seq-cold-eic16", "bitmap-cold-eic16"), r2.cases().stream().map(c -> c.drillCase().id()).toList());
        assertTrue(r2.cases().get(0).series().stream().noneMatch(DrillResult.Series::fio));
        assertTrue(r2.fio().contains("switched off"), r2.fio());

        // a table whose visibility map does not cover every block (loaded by an earlier version, or
        // changed since) is loaded again, so its scans run as a fresh load's all-visible pages do
        try (BufferManagerCore bufmgr = BufferManagerCore.open(r.options().dataDir(),
                new org.pageio.bufmgr.BufMgrSettings.Builder().sharedBuffers(256).maxSessions(4).build(), new SyncIoMethod());
                BufferSession s = bufmgr.pool().openSession("client")) {
            TableInfo t = TableServices.over(bufmgr.pool()).table("t");
            SmgrRelation heap = bufmgr.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, t.relNumber()));
            assertTrue(new VisibilityMap(s, heap, null).clear(3, VisibilityMap.VISIBILITYMAP_VALID_BITS));
            bufmgr.pool().checkpoint();
        }
        List<String> third = new ArrayList<>();
        DrillResult r3 = run(options(1, List.of(16)).withCases(List.of("seq")).withFio(false), third);
        assertFalse(r3.table("t").reused(), third.toString());
        assertTrue(third.stream().anyMatch(l -> l.startsWith("drill: table t in ") && l.contains("has no complete visibility map")),
                third.toString());
    }

    /**
     * Every CPU figure the text prints is at least {@link CpuFigures#MIN_RESOLUTIONS} times its
     * clock's resolution, and no share of wall time above 100% is printed.
     */
    static void assertNoCpuFigureBelowItsResolution(DrillResult r, String text) {
        int cpuColumn = List.of(DrillReport.HEADER).indexOf("CPU ms");
        for (String line : text.lines().toList()) {
            String[] cells = line.split("\\|");
            if (cells.length != DrillReport.HEADER.length || line.startsWith("method ")) {
                continue;
            }
            String name = cells[0].strip().replace(" (baseline)", "");
            String cell = cells[cpuColumn].strip();
            if (cell.equals("–")) {
                continue;
            }
            DrillResult.Series s = r.cases().stream().map(c -> c.series(name)).filter(x -> x != null).findFirst().orElseThrow();
            double ms = Double.parseDouble(cell);
            assertTrue(ms * 1e6 >= CpuFigures.MIN_RESOLUTIONS * CpuFigures.resolutionNanos(s) - 1e5,
                    name + " shows CPU " + cell + " ms at a resolution of " + CpuFigures.resolutionNanos(s) + " ns: " + line);
        }
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("([0-9]+)% of its wall time").matcher(text);
        while (m.find()) {
            assertTrue(Integer.parseInt(m.group(1)) <= 100, m.group() + " in " + text);
        }
    }

    /** A series of one counted run of {@code wallMs} ms and {@code cpuMs} ms of CPU. */
    private static DrillResult.Series series(String name, boolean baseline, double wallMs, double cpuMs) {
        Sample x = new Sample(1, (long) (wallMs * 1e6), baseline ? -1 : 1_000_000, 10, 4_972_544, 0, 0, 1214, true, null,
                (long) (cpuMs * 1e6), -1, -1, -1, baseline ? -1 : 1.0, -1);
        return new DrillResult.Series(name, baseline, name, List.of(x));
    }

    /**
     * The report's rule on a made-up result: a CPU time above its run's wall time is never printed
     * as a percentage, and a figure under 10× its clock's resolution (fio's: milliseconds) shows as
     * "–" with a line saying why.
     */
    @Test
    void cpuBelowTheClocksResolutionAndSharesAboveAHundredAreNotFindings() {
        DrillCase seq = new DrillCase("seq-cold-eic16", "count(*) of t, cold, effective_io_concurrency=16", DrillCase.Scan.SEQ, true,
                16, 4_972_544);
        DrillResult.CaseResult c = new DrillResult.CaseResult(seq, List.of(series("sync", false, 6.2, 10),
                series(Drill.FILE_CHANNEL, true, 5.0, 4), series(Drill.ASYNC_FILE_CHANNEL, true, 4.0, 3.5),
                series("fio seq buffered", true, 3.0, 0.9)));
        DrillResult r = new DrillResult(options(1, List.of(16)), java.time.Instant.parse("2026-12-07T01:42:47Z"), 1, List.of(),
                List.of("sync"), Map.of(), "fio ran", List.of(c), 131072, 1024);
        String text = new DrillReport(r).text();
        assertNoCpuFigureBelowItsResolution(r, text);
        assertFalse(text.contains("161%"), text);
        assertTrue(text.contains("sync 270 µs CPU (more CPU than wall time: other threads of the process ran meanwhile)"), text);
        assertTrue(text.contains("FileChannel 108 µs CPU (80% of its wall time)"), text);
        assertTrue(text.contains("CPU: below 10× the timer's 1 ms resolution, not shown (–): fio seq buffered."), text);
        String fioRow = text.lines().filter(l -> l.startsWith("fio seq buffered (baseline)")).findFirst().orElseThrow();
        assertEquals("–", fioRow.split("\\|")[List.of(DrillReport.HEADER).indexOf("CPU ms")].strip(), fioRow);
        String json = new DrillReport(r).json();
        assertTrue(json.contains("\"cpu_clock_resolution_ns\": 1"), json);
        assertTrue(json.matches("(?s).*\"name\": \"fio seq buffered\".*\"cpu_median_ms\": null.*"), json);
    }

    /**
     * The drill lists methods as pageio:methods does, by name, whatever order --methods named
     * them in, the baselines after: in its series, text, JSON and chart.
     */
    @Test
    void methodsAreListedByNameThenTheBaselines() throws Exception {
        SyncIoMethod sync = new SyncIoMethod();
        Map<String, org.pageio.api.IoMethod> registered = new java.util.HashMap<>();
        for (String n : List.of("worker", "sync", "io_uring")) {
            registered.put(n, n.equals("sync") ? sync : new org.pageio.api.ForwardingIoMethod() {
                @Override
                protected org.pageio.api.IoMethod delegate() {
                    return sync;
                }

                @Override
                public String name() {
                    return n;
                }
            });
        }
        DrillOptions o = new DrillOptions(ROWS, 1, List.of("worker", "sync", "io_uring"), List.of(16), 1024, tmp.resolve("drill"),
                null, 128, 1, DrillOptions.parseCases("warm"), false);
        DrillResult r = new Drill(o, registered, DrillProgress.lines(l -> { })).run();
        List<String> order = List.of("io_uring", "sync", "worker", Drill.FILE_CHANNEL, Drill.ASYNC_FILE_CHANNEL);
        assertEquals(List.of("io_uring", "sync", "worker"), r.methods());
        assertEquals(order, r.cases().get(0).series().stream().map(DrillResult.Series::name).toList());
        DrillReport report = new DrillReport(r);
        assertInOrder(report.text(), List.of("\nio_uring ", "\nsync ", "\nworker ", "\nFileChannel (baseline)",
                "\nAsynchronousFileChannel (baseline)"));
        assertInOrder(report.json(), order.stream().map(n -> "\"name\": \"" + n + "\"").toList());
        assertInOrder(report.markdown(), List.of("| io_uring |", "| sync |", "| worker |", "| FileChannel (baseline) |"));
        assertInOrder(report.svg(), order.stream().map(n -> ">" + n).toList());
    }

    private static void assertInOrder(String text, List<String> parts) {
        int at = -1;
        for (String p : parts) {
            int i = text.indexOf(p, at + 1);
            assertTrue(i > at, p + " after position " + at + " in " + text);
            at = i;
        }
    }

    @Test
    void aBadOptionValueNamesTheOptionAndItsRange() {
        IllegalArgumentException eic = assertThrows(IllegalArgumentException.class,
                () -> options(1, List.of(1001)));
        assertEquals("--eic: effective_io_concurrency = 1001 is out of range: valid values are 0..1000", eic.getMessage());
        IllegalArgumentException rounds = assertThrows(IllegalArgumentException.class,
                () -> options(0, List.of(1)));
        assertEquals("--rounds must be 1..100, not 0", rounds.getMessage());
        IllegalArgumentException parse = assertThrows(IllegalArgumentException.class,
                () -> DrillOptions.parseEic("1,x"));
        assertTrue(parse.getMessage().startsWith("--eic: \"x\" is not a number"), parse.getMessage());
    }

    @Test
    void latestFindsTheNewestResult() throws Exception {
        Path dir = tmp.resolve("r");
        assertTrue(DrillResults.latest(dir).isEmpty());
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("20261201T101010Z.json"), "{}");
        Files.writeString(dir.resolve("20261202T090000Z.json"), "{}");
        Files.writeString(dir.resolve("20261202T090000Z.svg"), "<svg/>");
        Files.writeString(dir.resolve("20261203T000000Z.json.tmp"), "{"); // being written: not a result yet
        var l = DrillResults.latest(dir).orElseThrow();
        assertEquals("20261202T090000Z", l.stamp());
        assertEquals(dir.resolve("20261202T090000Z.svg"), l.svg());
        assertNull(l.markdown());
    }

    @Test
    void aResidentSegmentIsNeverCountedAsCold() throws Exception {
        run(options(1, List.of(16)).withCases(List.of("seq")).withFio(false), new ArrayList<>()); // loads t only
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
            DrillResult r = run(options(1, List.of(16)), new ArrayList<>()); // loads prefetch_test too
            assertTrue(r.table("t").reused());
            for (String name : List.of("sync", Drill.FILE_CHANNEL, Drill.ASYNC_FILE_CHANNEL, "fio seq buffered", "fio seq direct")) {
                List<Sample> cold = r.samples("seq-cold-eic16", name);
                assertEquals(1, cold.size());
                Sample s = cold.get(0);
                assertFalse(s.counted(), name + " was counted as cold with " + s.residentPages() + " pages resident");
                assertTrue(s.residentPages() > 0);
                assertTrue(s.note().startsWith("not cold:") && s.note().contains(segment.getFileName().toString()), s.note());
                assertNull(r.cases().get(0).series(name).stats(), "no cold median from a warm round");
                if (!name.startsWith("fio")) {
                    assertTrue(r.samples("seq-warm", name).get(0).counted());
                    // prefetch_test's files are not mapped: its cold cases still count
                    assertTrue(r.samples("bitmap-cold-eic16", name).get(0).counted(),
                            r.samples("bitmap-cold-eic16", name).get(0).note());
                }
            }
            String text = new DrillReport(r).text();
            assertTrue(text.contains("cold run(s) were not counted"), text);
        } finally {
            Posix.munmap(map);
            Posix.close(fd, segment);
        }
    }
}
