package org.pageio.measure.drill;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.smgr.ForkNumber;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.measure.cache.CacheState;
import org.pageio.measure.cache.ColdCache;
import org.pageio.table.IndexInfo;
import org.pageio.table.RowFilter;
import org.pageio.table.ScanReport;
import org.pageio.table.ScanRequest;
import org.pageio.table.ScanSettings;
import org.pageio.table.SetClause;
import org.pageio.table.TableInfo;
import org.pageio.table.TableService;
import org.pageio.table.TableServices;
import org.pageio.table.TableShape;
import org.pageio.table.VacuumOptions;
import org.pageio.table.VacuumReport;

/**
 * PostgreSQL 19's "scans set the visibility map" test as a drill case: a {@code prefetch_test}
 * table with an index on {@code (cat, val)} and 20% of its rows updated
 * ({@code UPDATE … SET val = val + 0 WHERE id % 5 = 0}), then, for each method and for PostgreSQL 18's
 * and 19's behaviour, every step cold (shared buffers emptied, the files out of the page cache):
 * <ol>
 *   <li>the index-only scan {@code cat = 50 AND val BETWEEN 100 AND 5000} (heap fetches, time);</li>
 *   <li>{@code count(*)} by a sequential scan, which under 19's behaviour prunes and sets the map;</li>
 *   <li>the index-only scan again;</li>
 *   <li>{@code VACUUM} (time, pages scanned, read and write rates);</li>
 *   <li>the index-only scan again.</li>
 * </ol>
 * <b>The table.</b> PostgreSQL's test updates rows whose pages have room for the new versions (its
 * heap fetches drop to 0 after a scan, which only heap-only updates allow: a version moved to
 * another page leaves a dead line pointer that keeps its page from being all-visible until
 * VACUUM), and on pages less than a tenth free (the on-access pruning rule). pageio loads full pages,
 * so the drill makes that room first: it deletes {@code id % 5 = 1} and two more rows of each page
 * ({@code id % 47 = 2}, {@code id % 47 = 3}; a page holds 47 rows) and vacuums, then runs the update.
 * A page then loses 10 to 12 rows and gets 8 to 10 new versions back: they fit on the page (heap-only
 * updates), and the page is left more than 90% full. That state is built once and copied aside ({@code <table>.base/}); before each run the
 * files are written back in place (the storage managers keep their descriptors) and fsynced, so
 * every run starts from the same bytes and the update is never run again.
 *
 * <p>Runs in the drill's thread, on the rigs of {@link DrillRounds}, with a table service of its
 * own per run (the files under it were just restored).
 */
final class VisibilityCase {

    /** The table's name in the drill's catalog. */
    static final String TABLE = "vis_test";
    /** The index-only scan's predicate, PostgreSQL 19's: {@code cat = 50 AND val BETWEEN 100 AND 5000}. */
    static final long CAT = 50;
    static final long VAL_LO = 100;
    static final long VAL_HI = 5000;
    /** The deletes that make room on every page before the update. */
    static final List<RowFilter> ROOM = List.of(RowFilter.modulo("id", 5, 1), RowFilter.modulo("id", 47, 2),
            RowFilter.modulo("id", 47, 3));

    /** Whether row {@code g} (its id) is among {@link #ROOM}'s. */
    static boolean deleted(long g) {
        return g % 5 == 1 || g % 47 == 2 || g % 47 == 3;
    }

    /**
     * Rounds of this case at most: each run restores the table and takes five cold steps, about 40 s
     * a round with five methods; two keep the default drill near eight minutes with the hot and
     * concurrent cases.
     */
    static final int MAX_ROUNDS = 2;

    /** PostgreSQL 18 (only VACUUM sets the map) and PostgreSQL 19 (scans set it too). */
    enum Behaviour {
        PG18("PostgreSQL 18", false), PG19("PostgreSQL 19", true);

        final String label;
        final boolean scansSetMap;

        Behaviour(String label, boolean scansSetMap) {
            this.label = label;
            this.scansSetMap = scansSetMap;
        }
    }

    /**
     * One run's figures.
     *
     * @param method        the I/O method
     * @param behaviour     {@code PG18} or {@code PG19}
     * @param round         1-based
     * @param iosBeforeMs   the index-only scan before anything ran
     * @param fetchesBefore its heap fetches
     * @param seqMs         count(*) by the sequential scan
     * @param seqSetPages   pages the visibility map marked all-visible after it
     * @param iosAfterSeqMs the index-only scan after the sequential scan
     * @param fetchesAfterSeq its heap fetches
     * @param vacuumMs      VACUUM
     * @param vacuumScanned pages VACUUM read
     * @param vacuumReadMBs VACUUM's read rate (MB/s over its run)
     * @param vacuumWriteMBs its write rate
     * @param seqReadMBs    the sequential scan's read rate (MB/s over its run), VACUUM's yardstick
     * @param iosAfterVacuumMs the index-only scan after VACUUM
     * @param fetchesAfterVacuum its heap fetches
     * @param counted       every step ran cold (0% resident) and gave the expected counts
     * @param note          why not, when not
     */
    record Run(String method, Behaviour behaviour, int round, double iosBeforeMs, long fetchesBefore, double seqMs, long seqSetPages,
            double iosAfterSeqMs, long fetchesAfterSeq, double vacuumMs, long vacuumScanned, double vacuumReadMBs,
            double vacuumWriteMBs, double seqReadMBs, double iosAfterVacuumMs, long fetchesAfterVacuum, boolean counted,
            String note) {
    }

    /**
     * Every run, and what the table is.
     *
     * @param rows        rows loaded
     * @param blocks      heap blocks after the update
     * @param updated     rows the update changed
     * @param expectedIos the index-only scan's count
     * @param expectedAll count(*)
     * @param vacuumBufferUsageLimitKb VACUUM's ring in kB, 0 none, -1 PostgreSQL's default
     * @param runs        in the order they ran
     */
    record Result(long rows, long blocks, long updated, long expectedIos, long expectedAll, long vacuumBufferUsageLimitKb,
            List<Run> runs) {

        Result {
            runs = List.copyOf(runs);
        }

        /** The counted runs of {@code method} under {@code b}. */
        List<Run> of(String method, Behaviour b) {
            return runs.stream().filter(r -> r.counted() && r.method().equals(method) && r.behaviour() == b).toList();
        }
    }

    private final DrillOptions opts;
    private final DrillPools pools;
    private final DrillProgress progress;
    private final long rows;

    VisibilityCase(DrillOptions opts, DrillPools pools, DrillProgress progress) {
        this.opts = opts;
        this.pools = pools;
        this.progress = progress;
        this.rows = rows(opts.rows());
    }

    /** The table's rows: an eighth of {@code t}'s (1,000,000 at the default 8,000,000), at least 10,000. */
    static long rows(long tRows) {
        return Math.max(10_000, tRows / 8);
    }

    /** The table as the drill leaves it between runs: loaded, room made, updated, and its files copied aside. */
    private record Prepared(TableInfo table, long updated, long expectedIos, long expectedAll, List<Path> files, Path base) {
    }

    private Path baseDir() {
        return opts.dataDir().resolve(TABLE + ".base");
    }

    /** Builds (or finds) the table in its starting state and its copy. */
    private Prepared prepare(StorageManager smgr, IoMethod loader) throws IOException {
        Path base = baseDir();
        try (BufferManagerCore bufmgr = pools.loader(smgr, loader)) {
            TableService tables = TableServices.over(bufmgr.pool());
            TableInfo t = tables.tables().stream().filter(x -> x.name().equals(TABLE)).findFirst().orElse(null);
            long updated = rows / 5;
            boolean reuse = t != null && t.rows() == rows && t.seed() == opts.seed() && Files.isRegularFile(base.resolve("READY"))
                    && t.index(List.of("cat", "val")) != null;
            if (!reuse) {
                if (t != null) {
                    tables.drop(TABLE);
                }
                deleteTree(base);
                long t0 = System.nanoTime();
                progress.line(String.format(Locale.ROOT, "drill: visibility: loading %s (%,d rows), index (cat, val), deleting"
                        + " id %% 5 = 1 and two rows a page and vacuuming to make room, updating val = val + 0 WHERE id %% 5 = 0",
                        TABLE, rows));
                tables.load(TABLE, TableShape.PREFETCH_TEST, rows, opts.seed(), null);
                tables.createIndex(TABLE, "cat,val");
                for (RowFilter room : ROOM) {
                    tables.delete(TABLE, room);
                }
                tables.vacuum(TABLE, VacuumOptions.DEFAULT);
                updated = tables.update(TABLE, SetClause.parse("SET", "val", "=", "val", "+", "0"), RowFilter.modulo("id", 5, 0));
                bufmgr.pool().checkpoint();
                t = tables.table(TABLE);
                Files.createDirectories(base);
                for (Path f : files(smgr, t)) {
                    Files.copy(f, base.resolve(f.getFileName()));
                }
                Files.writeString(base.resolve("READY"), "updated=" + updated + "\n");
                progress.line(String.format(Locale.ROOT, "drill: visibility: %s ready in %.1f s (%,d blocks, %,d rows updated)",
                        TABLE, (System.nanoTime() - t0) / 1e9, t.blocks(), updated));
            } else {
                String ready = Files.readString(base.resolve("READY")).trim();
                updated = Long.parseLong(ready.substring(ready.indexOf('=') + 1));
                progress.line(String.format(Locale.ROOT, "drill: visibility: reusing %s (%,d rows, %,d blocks) and its copy in %s",
                        TABLE, rows, t.blocks(), base));
            }
            long all = 0;
            long ios = 0;
            for (long g = 1; g <= rows; g++) {
                if (deleted(g)) {
                    continue;
                }
                all++;
                long v = TableShape.PREFETCH_TEST.value(2, g, opts.seed());
                if (TableShape.PREFETCH_TEST.value(1, g, opts.seed()) == CAT && v >= VAL_LO && v <= VAL_HI) {
                    ios++;
                }
            }
            return new Prepared(t, updated, ios, all, files(smgr, t), base);
        }
    }

    /** The table's files: heap segments, its visibility map, its index. */
    private static List<Path> files(StorageManager smgr, TableInfo t) throws IOException {
        List<Path> out = new ArrayList<>();
        SmgrRelation heap = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, t.relNumber()));
        out.addAll(heap.segmentPaths(heap.nblocks()));
        SmgrRelation vm = heap.fork(ForkNumber.VISIBILITYMAP_FORKNUM);
        if (vm.exists()) {
            out.addAll(vm.segmentPaths(vm.nblocks()));
        }
        for (IndexInfo i : t.indexes()) {
            SmgrRelation r = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, i.relNumber()));
            out.addAll(r.segmentPaths(r.nblocks()));
        }
        return out;
    }

    /** Writes the copies back over the table's files, in place (same inodes: descriptors stay valid), and fsyncs them. */
    private static void restore(Prepared p) throws IOException {
        ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20);
        for (Path f : p.files()) {
            try (FileChannel from = FileChannel.open(p.base().resolve(f.getFileName()), StandardOpenOption.READ);
                    FileChannel to = FileChannel.open(f, StandardOpenOption.WRITE)) {
                long pos = 0;
                for (;;) {
                    buf.clear();
                    int n = from.read(buf, pos);
                    if (n <= 0) {
                        break;
                    }
                    buf.flip();
                    while (buf.hasRemaining()) {
                        to.write(buf, pos + buf.position());
                    }
                    pos += n;
                }
                to.truncate(pos);
                to.force(true);
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (var s = Files.list(dir)) {
            for (Path f : s.toList()) {
                Files.delete(f);
            }
        }
        Files.delete(dir);
    }

    /**
     * Builds the table if needed, then runs {@code min(rounds, 3)} rounds, each method and behaviour
     * in an order rotated by round, on the methods' rigs.
     */
    Result run(StorageManager smgr, IoMethod loader, Map<String, IoMethod> methods, RigSource rigs) throws IOException {
        Prepared p = prepare(smgr, loader);
        List<String[]> order = new ArrayList<>();
        for (String m : methods.keySet()) {
            for (Behaviour b : Behaviour.values()) {
                order.add(new String[] {m, b.name()});
            }
        }
        int rounds = Math.min(opts.rounds(), MAX_ROUNDS);
        List<Run> runs = new ArrayList<>();
        int done = 0;
        for (int round = 1; round <= rounds; round++) {
            int shift = (round - 1) % order.size();
            for (int i = 0; i < order.size(); i++) {
                String[] o = order.get((i + shift) % order.size());
                Behaviour b = Behaviour.valueOf(o[1]);
                progress.status(String.format(Locale.ROOT, "drill: visibility round %d/%d  %-10s %s  running…  (run %d of %d)",
                        round, rounds, o[0], b.label, ++done, rounds * order.size()));
                Run r = runOne(p, o[0], b, round, rigs.rig(o[0], methods.get(o[0])));
                runs.add(r);
                progress.line(String.format(Locale.ROOT, "drill: visibility round %d/%d  %-10s %s: ios %,d fetches %.1f ms, seq %.1f ms,"
                        + " ios %,d fetches %.1f ms, VACUUM %.1f ms (%.0f MB/s read), ios %,d fetches %.1f ms%s", round, rounds, o[0],
                        b.label, r.fetchesBefore(), r.iosBeforeMs(), r.seqMs(), r.fetchesAfterSeq(), r.iosAfterSeqMs(), r.vacuumMs(),
                        r.vacuumReadMBs(), r.fetchesAfterVacuum(), r.iosAfterVacuumMs(), r.counted() ? "" : "  NOT COUNTED: " + r.note()));
            }
        }
        restore(p); // leave the table as the next drill expects it
        return new Result(rows, p.table().blocks(), p.updated(), p.expectedIos(), p.expectedAll(), opts.vacuumBufferUsageLimitKb(),
                runs);
    }

    /** The rig of a method, kept by the drill for all its runs. */
    interface RigSource {
        DrillPools.Rig rig(String name, IoMethod m) throws IOException;
    }

    private Run runOne(Prepared p, String method, Behaviour b, int round, DrillPools.Rig rig) throws IOException {
        rig.empty(method);
        restore(p);
        TableService tables = TableServices.over(rig.pool);
        ScanSettings set = ScanSettings.parse("scan_sets_visibility_map=" + (b.scansSetMap ? "on" : "off"));
        ScanRequest ios = ScanRequest.indexOnly(TABLE, "cat", CAT, "val", VAL_LO, VAL_HI).with(set);
        List<String> notes = new ArrayList<>();

        cold(rig, method, p, notes);
        ScanReport before = check(tables.scan(ios), p.expectedIos(), "index-only scan", notes);
        cold(rig, method, p, notes);
        ScanReport seq = check(tables.scan(ScanRequest.count(TABLE).with(set)), p.expectedAll(), "count(*)", notes);
        long setPages = tables.visibilityMapSummary(TABLE).allVisible();
        cold(rig, method, p, notes);
        ScanReport afterSeq = check(tables.scan(ios), p.expectedIos(), "index-only scan after the sequential scan", notes);
        cold(rig, method, p, notes);
        VacuumReport vac = tables.vacuum(TABLE, new VacuumOptions(false, set, opts.vacuumBufferUsageLimitKb()));
        cold(rig, method, p, notes);
        ScanReport afterVac = check(tables.scan(ios), p.expectedIos(), "index-only scan after VACUUM", notes);
        double seqMBs = seq.sharedRead() * 8192.0 / (1024 * 1024) / (seq.executionNanos() / 1e9);
        return new Run(method, b, round, before.executionNanos() / 1e6, before.heapFetches(), seq.executionNanos() / 1e6, setPages,
                afterSeq.executionNanos() / 1e6, afterSeq.heapFetches(), vac.elapsedNanos() / 1e6, vac.scannedPages(), vac.readRate(),
                vac.writeRate(), seqMBs, afterVac.executionNanos() / 1e6, afterVac.heapFetches(), notes.isEmpty(),
                notes.isEmpty() ? null : String.join("; ", notes));
    }

    /** Empties shared buffers (writing what the last step dirtied) and evicts the table's files from the page cache. */
    private static void cold(DrillPools.Rig rig, String method, Prepared p, List<String> notes) throws IOException {
        rig.empty(method);
        CacheState c = ColdCache.evict(p.files());
        if (!c.cold()) {
            notes.add(String.format(Locale.ROOT, "not cold: %,d of %,d pages still in the page cache", c.residentPages(),
                    c.totalPages()));
        }
    }

    private static ScanReport check(ScanReport r, long expected, String what, List<String> notes) {
        if (r.count() != expected) {
            throw new IllegalStateException("visibility case: " + what + " of " + TABLE + " counted " + r.count() + " rows, expected "
                    + expected);
        }
        return r;
    }

    /** Median of the counted runs' {@code field}, or NaN. */
    static double median(List<Run> runs, java.util.function.ToDoubleFunction<Run> field) {
        double[] v = runs.stream().mapToDouble(field).sorted().toArray();
        return v.length == 0 ? Double.NaN : v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    /** Per method and behaviour, the medians, as a markdown table (methods in {@code methods}' order). */
    static List<String> table(Result r, List<String> methods) {
        List<String> out = new ArrayList<>();
        out.add(String.format(Locale.ROOT, "PostgreSQL 19's visibility test: %s (%,d rows, %,d blocks), %,d rows updated"
                + " (val = val + 0 WHERE id %% 5 = 0) after id %% 5 = 1 and two rows a page were deleted and vacuumed; index-only"
                + " scan cat = %d AND val"
                + " BETWEEN %d AND %d (%,d rows); every step cold. Medians of %d round(s).", TABLE, r.rows(), r.blocks(),
                r.updated(), CAT, VAL_LO, VAL_HI, r.expectedIos(), r.runs().stream().mapToInt(Run::round).max().orElse(0))
                + (r.vacuumBufferUsageLimitKb() < 0 ? "" : " VACUUM with BUFFER_USAGE_LIMIT " + r.vacuumBufferUsageLimitKb() + "kB"
                        + (r.vacuumBufferUsageLimitKb() == 0 ? " (no ring)." : ".")));
        out.add("");
        out.add("| method | behaviour | ios fetches | ios ms | seq ms | pages all-visible after seq | ios fetches after seq"
                + " | ios ms after seq | VACUUM ms | VACUUM read MB/s (÷ seq MB/s) | ios fetches after VACUUM | ios ms after VACUUM"
                + " | before ÷ after VACUUM |");
        out.add("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        Map<String, Double> syncVacuum = new LinkedHashMap<>();
        for (String m : methods) {
            for (Behaviour b : Behaviour.values()) {
                List<Run> runs = r.of(m, b);
                if (runs.isEmpty()) {
                    out.add("| " + m + " | " + b.label + " | no counted run |  |  |  |  |  |  |  |  |  |  |");
                    continue;
                }
                double vac = median(runs, Run::vacuumMs);
                if (m.equals("sync")) {
                    syncVacuum.put(b.name(), vac);
                }
                double iosBefore = median(runs, Run::iosBeforeMs);
                double iosAfter = median(runs, Run::iosAfterVacuumMs);
                double readRate = median(runs, Run::vacuumReadMBs);
                double seqRate = median(runs, Run::seqReadMBs);
                out.add(String.format(Locale.ROOT, "| %s | %s | %.0f | %.1f | %.1f | %.0f | %.0f | %.1f | %.1f | %.0f (%.2f×) | %.0f | %.2f"
                        + " | %.0f× |", m, b.label, median(runs, Run::fetchesBefore), iosBefore, median(runs, Run::seqMs),
                        median(runs, Run::seqSetPages), median(runs, Run::fetchesAfterSeq), median(runs, Run::iosAfterSeqMs), vac,
                        readRate, seqRate > 0 ? readRate / seqRate : Double.NaN, median(runs, Run::fetchesAfterVacuum), iosAfter,
                        iosAfter > 0 ? iosBefore / iosAfter : Double.NaN));
            }
        }
        if (!syncVacuum.isEmpty()) {
            out.add("");
            StringBuilder b = new StringBuilder("VACUUM against sync (speed, median ms of sync ÷ the method's):");
            for (String m : methods) {
                List<Run> runs = r.of(m, Behaviour.PG18);
                if (!runs.isEmpty() && syncVacuum.containsKey(Behaviour.PG18.name())) {
                    b.append(String.format(Locale.ROOT, " %s %.2f×;", m, syncVacuum.get(Behaviour.PG18.name()) / median(runs,
                            Run::vacuumMs)));
                }
            }
            out.add(b.substring(0, b.length() - 1) + " (PostgreSQL 18 behaviour: VACUUM does all the work).");
        }
        return out;
    }
}
