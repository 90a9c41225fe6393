package org.pageio.console.drill;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousFileChannel;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.console.drill.DrillCase.Scan;
import org.pageio.posix.Fadvise;
import org.pageio.posix.PageCache;
import org.pageio.posix.Posix;
import org.pageio.posix.Residency;
import org.pageio.table.IndexInfo;
import org.pageio.table.ScanReport;
import org.pageio.table.ScanRequest;
import org.pageio.table.ScanSettings;
import org.pageio.table.TableInfo;
import org.pageio.table.TableService;
import org.pageio.table.TableServices;
import org.pageio.table.TableShape;

/**
 * The first article's drill as one call. Loads {@code t} (sequential scans) and the third
 * article's {@code prefetch_test} with its index on {@code val} (bitmap heap and index scans), or
 * reuses them when they were loaded with the same rows and seed; then for each round, each case,
 * each method and baseline in an order rotated by round: empty shared buffers (each method keeps
 * one buffer pool for the whole drill, emptied with {@link BufferPool#evictAll} before each run),
 * the case's files evicted from the page cache and proven cold with mincore (cold cases) or kept
 * there (OS-warm case), one scan. Before round 1 every method and Java baseline
 * scans once, unrecorded (JIT, threads).
 *
 * <p>Baselines read the same blocks in the same order: {@code FileChannel} one positional read
 * at a time ({@code io_combine_limit} bytes for a sequential scan, one 8 kB block per heap fetch
 * otherwise), {@code AsynchronousFileChannel} with {@code effective_io_concurrency} of those reads
 * in flight, and fio (when installed) on the same segment files. A cold run whose files are not
 * 0% resident is kept in the result but never counted.
 *
 * <p>Runs in the calling thread; not thread-safe (one drill at a time per data directory).
 */
public final class Drill {

    /** The name of the positional-read baseline. */
    public static final String FILE_CHANNEL = "FileChannel";
    /** Suffix of a buffered method run with posix_fadvise(SEQUENTIAL) on the table's segments ({@code --seq-hint}). */
    public static final String SEQ_HINT_SUFFIX = " +FADV_SEQUENTIAL";
    /** The baseline with as many reads in flight as the case's effective_io_concurrency. */
    public static final String ASYNC_FILE_CHANNEL = "AsynchronousFileChannel";

    /** The bitmap and index scans' predicate column (prefetch_test.val, uniform in 0..50000). */
    public static final String KEY_COLUMN = "val";
    /**
     * {@code val BETWEEN 20000 AND 20172}: 173 of 50,001 values, 0.35% of the rows. With 47 rows a
     * page that touches 1 - (1 - 0.00346)^47 = 15% of the heap blocks, spread over the whole table
     * (the third article's query reads ~0.5% of the rows and ~15% of the blocks; those two go together at 33 rows
     * a page, so the drill keeps the block fraction, which is what the I/O sees).
     */
    public static final long KEY_LO = 20_000;
    public static final long KEY_HI = 20_172;

    private static final long STATUS_EVERY_NANOS = 250_000_000L;

    private final DrillOptions opts;
    private final Map<String, IoMethod> methods;
    private final Map<String, String> unavailable;
    private final DrillProgress progress;
    private final BufMgrSettings settings;
    private final String fio;
    private String fioFailure;
    /** Per method, for the whole run; closed at its end. */
    private final Map<String, Rig> rigs = new LinkedHashMap<>();
    /** CPU and device counters around each timed run; set once the data directory exists. */
    private RunProbe probe;

    /**
     * @param opts        what to run
     * @param registered  every registered method by {@code io.method}, available or not
     * @param progress    kept lines and transient status while loading and running
     */
    public Drill(DrillOptions opts, Map<String, IoMethod> registered, DrillProgress progress) {
        this.opts = opts;
        this.progress = progress == null ? DrillProgress.lines(s -> { }) : progress;
        Map<String, IoMethod> avail = new LinkedHashMap<>();
        Map<String, String> unavail = new LinkedHashMap<>();
        List<String> names = new ArrayList<>(registered.keySet());
        names.sort(Comparator.comparingInt(Drill::rank).thenComparing(Comparator.naturalOrder()));
        for (String n : names) {
            IoMethod m = registered.get(n);
            IoMethod.Availability a;
            try {
                a = m.availability();
            } catch (RuntimeException | LinkageError e) {
                a = IoMethod.Availability.unavailable("availability() failed: " + e);
            }
            if (a != null && a.available()) {
                avail.put(n, m);
            } else {
                unavail.put(n, a == null ? "availability() returned null" : a.cause());
            }
        }
        if (opts.methods().isEmpty()) {
            this.methods = avail;
        } else {
            Map<String, IoMethod> chosen = new LinkedHashMap<>();
            for (String n : opts.methods()) {
                if (avail.containsKey(n)) {
                    chosen.put(n, avail.get(n));
                } else if (unavail.containsKey(n)) {
                    throw new IllegalArgumentException("io_method=" + n + " is not available here: " + unavail.get(n));
                } else {
                    throw new IllegalArgumentException("io_method=" + n + " is not registered (registered: "
                            + String.join(", ", names) + ")");
                }
            }
            this.methods = chosen;
        }
        if (this.methods.isEmpty()) {
            throw new IllegalStateException("no I/O method is available (registered: " + names + ", unavailable: " + unavail + ")");
        }
        this.unavailable = unavail;
        this.settings = new BufMgrSettings.Builder().sharedBuffers(opts.sharedBuffers()).segmentBlocks(opts.segmentBlocks())
                .trackIoTiming(true).build();
        this.fio = opts.fio() ? FioBaseline.path() : null;
    }

    private static int rank(String method) {
        return switch (method) {
            case "sync" -> 0;
            case "worker" -> 1;
            case "io_uring" -> 2;
            default -> 3;
        };
    }

    /**
     * What one case reads.
     *
     * @param table      the table's name
     * @param rows       its rows
     * @param heapFiles  its heap's segment files (what the baselines and fio read)
     * @param coldFiles  every file the scan reads (heap and index): evicted and checked
     * @param blocks     null for a sequential scan; else the heap blocks in the order the scan asks for them
     * @param expected   the scan's count(*), from the generator
     */
    private record Target(String table, long relNumber, long rows, List<Path> heapFiles, List<Path> coldFiles, long[] blocks,
            long expected) {
    }

    /** The rows of prefetch_test that match the predicate, as heap blocks in index order (key, block, line). */
    static long[] indexOrderBlocks(long rows, long seed) {
        TableShape s = TableShape.PREFETCH_TEST;
        int col = s.columnIndex(s.column(KEY_COLUMN));
        int rpp = s.rowsPerPage();
        long[] packed = new long[1024];
        int n = 0;
        for (long g = 1; g <= rows; g++) {
            long v = s.value(col, g, seed);
            if (v >= KEY_LO && v <= KEY_HI) {
                if (n == packed.length) {
                    packed = Arrays.copyOf(packed, n * 2);
                }
                long block = (g - 1) / rpp;
                int line = (int) ((g - 1) % rpp) + 1;
                packed[n++] = ((v - KEY_LO) << 40) | (block << 9) | line; // sorts as the index does: key, block, line
            }
        }
        Arrays.sort(packed, 0, n);
        long[] blocks = new long[n];
        for (int i = 0; i < n; i++) {
            blocks[i] = (packed[i] >>> 9) & ((1L << 31) - 1);
        }
        return blocks;
    }

    /** The distinct blocks of {@code blocks}, ascending (the bitmap heap scan's order). */
    static long[] distinctSorted(long[] blocks) {
        long[] b = blocks.clone();
        Arrays.sort(b);
        int n = 0;
        for (int i = 0; i < b.length; i++) {
            if (n == 0 || b[n - 1] != b[i]) {
                b[n++] = b[i];
            }
        }
        return Arrays.copyOf(b, n);
    }

    public DrillResult run() throws IOException {
        try {
            return runAll();
        } finally {
            for (Rig r : rigs.values()) {
                r.close();
            }
            rigs.clear();
        }
    }

    private DrillResult runAll() throws IOException {
        Instant started = Instant.now();
        long t0 = System.nanoTime();
        Files.createDirectories(opts.dataDir());
        probe = RunProbe.forDirectory(opts.dataDir());
        boolean needT = opts.runs("seq") || opts.runs("warm");
        boolean needPf = opts.runs("bitmap") || opts.runs("index");
        try (StorageManager smgr = new StorageManager(opts.dataDir(), opts.segmentBlocks(), false)) {
            Loaded t = needT ? prepareTable(smgr, DrillOptions.TABLE, TableShape.T, null) : null;
            Loaded pf = needPf ? prepareTable(smgr, DrillOptions.PREFETCH_TABLE, TableShape.PREFETCH_TEST, KEY_COLUMN) : null;
            List<DrillCase> cases = new ArrayList<>();
            Map<DrillCase, Target> targets = new LinkedHashMap<>();
            if (t != null) {
                List<Path> files = heapFiles(smgr, t.table);
                Target seq = new Target(t.table.name(), t.table.relNumber(), t.table.rows(), files, files, null, t.table.rows());
                long bytes = t.table.blocks() * (long) StorageManager.BLCKSZ;
                if (opts.runs("seq")) {
                    for (int e : opts.eic()) {
                        DrillCase c = new DrillCase("seq-cold-eic" + e, "count(*) of t, cold, effective_io_concurrency=" + e, Scan.SEQ,
                                true, e, bytes);
                        cases.add(c);
                        targets.put(c, seq);
                    }
                }
                if (opts.runs("warm")) {
                    DrillCase c = new DrillCase("seq-warm", "count(*) of t, OS page cache warm (shared buffers empty),"
                            + " effective_io_concurrency=" + DrillOptions.DEFAULT_EIC_VALUE, Scan.SEQ, false,
                            DrillOptions.DEFAULT_EIC_VALUE, bytes);
                    cases.add(c);
                    targets.put(c, seq);
                }
            }
            if (pf != null) {
                TableInfo p = pf.table;
                List<Path> heap = heapFiles(smgr, p);
                List<Path> all = new ArrayList<>(heap);
                IndexInfo idx = p.index(KEY_COLUMN);
                all.addAll(smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, idx.relNumber())).segmentPaths(idx.blocks()));
                long[] fetches = indexOrderBlocks(p.rows(), p.seed());
                long[] distinct = distinctSorted(fetches);
                long bytes = distinct.length * (long) StorageManager.BLCKSZ;
                String pred = String.format(Locale.ROOT, "val BETWEEN %d AND %d: %,d rows (%.2f%%), %,d of %,d heap blocks (%.1f%%)",
                        KEY_LO, KEY_HI, fetches.length, 100.0 * fetches.length / p.rows(), distinct.length, p.blocks(),
                        100.0 * distinct.length / p.blocks());
                int e = DrillOptions.DEFAULT_EIC_VALUE;
                if (opts.runs("bitmap")) {
                    DrillCase c = new DrillCase("bitmap-cold", "bitmap heap scan of prefetch_test, cold, effective_io_concurrency=" + e
                            + ": " + pred + ", read in block order", Scan.BITMAP, true, e, bytes);
                    cases.add(c);
                    targets.put(c, new Target(p.name(), p.relNumber(), p.rows(), heap, all, distinct, fetches.length));
                }
                if (opts.runs("index")) {
                    DrillCase c = new DrillCase("index-cold", "index scan of prefetch_test, cold, effective_io_concurrency=" + e
                            + ": count(*), sum(length(payload)) WHERE " + pred + String.format(Locale.ROOT,
                            "; %,d heap fetches in index order, %,d of them repeat a block", fetches.length,
                            fetches.length - distinct.length), Scan.INDEX, true, e, bytes);
                    cases.add(c);
                    targets.put(c, new Target(p.name(), p.relNumber(), p.rows(), heap, all, fetches, fetches.length));
                }
            }
            if (cases.isEmpty()) {
                throw new IllegalArgumentException("no case to run (--cases " + String.join(",", opts.cases()) + " with --eic "
                        + opts.eic() + ")");
            }
            Map<DrillCase, List<String>> runners = new LinkedHashMap<>();
            Map<DrillCase, Map<String, List<Sample>>> samples = new LinkedHashMap<>();
            int total = 0;
            for (DrillCase c : cases) {
                List<String> r = new ArrayList<>(methods.keySet());
                if (opts.seqHint() && c.cold() && c.scan() == Scan.SEQ) {
                    methods.forEach((n, m) -> {
                        if (!m.bypassesPageCache()) {
                            r.add(n + SEQ_HINT_SUFFIX);
                        }
                    });
                }
                r.add(FILE_CHANNEL);
                r.add(ASYNC_FILE_CHANNEL);
                if (fio != null && c.cold()) {
                    if (c.scan() == Scan.SEQ) { // at every eic, depth = eic
                        r.add(FioBaseline.Job.SEQ_BUFFERED.series);
                        r.add(FioBaseline.Job.SEQ_DIRECT.series);
                    } else {
                        r.add(FioBaseline.Job.RAND_DIRECT.series);
                    }
                }
                runners.put(c, r);
                Map<String, List<Sample>> m = new LinkedHashMap<>();
                r.forEach(x -> m.put(x, new ArrayList<>()));
                samples.put(c, m);
                total += r.size() * opts.rounds();
            }
            Buffers buffers = new Buffers(settings.effectiveIoCombineLimit() * StorageManager.BLCKSZ,
                    Math.max(DrillOptions.DEFAULT_EIC_VALUE, cases.stream().mapToInt(DrillCase::eic).max().orElse(1))); // the warm-up runs at the default eic
            // Warm-up, not recorded: the first scan in a JVM pays for JIT compilation and thread start-up.
            DrillCase first = cases.get(0);
            DrillCase warmUp = new DrillCase("warm-up", "warm-up", first.scan(), false, DrillOptions.DEFAULT_EIC_VALUE, first.bytes());
            for (String r : runners.get(first)) {
                if (FioBaseline.Job.bySeries(r) != null) {
                    continue;
                }
                progress.status(String.format(Locale.ROOT, "drill: warm-up (not recorded)  %-12s …", r));
                Sample s = runOne(r, warmUp, 0, targets.get(first), buffers);
                progress.line(String.format(Locale.ROOT, "drill: warm-up (not recorded)  %-24s %9.1f ms", r, s.executionMs()));
            }
            int done = 0;
            long runsStarted = System.nanoTime();
            for (int round = 1; round <= opts.rounds(); round++) {
                for (DrillCase c : cases) {
                    List<String> r = runners.get(c);
                    int shift = (round - 1) % r.size();
                    for (int i = 0; i < r.size(); i++) {
                        String name = r.get((i + shift) % r.size());
                        progress.status(String.format(Locale.ROOT, "drill: round %d/%d  %-22s %-24s running…  (run %d of %d%s)",
                                round, opts.rounds(), c.shortName(), name, done + 1, total, eta(runsStarted, done, total)));
                        Sample s = runOne(name, c, round, targets.get(c), buffers);
                        samples.get(c).get(name).add(s);
                        done++;
                        progress.line(String.format(Locale.ROOT, "drill: round %d/%d  %-22s %-24s %9.1f ms%s  residency %s%s",
                                round, opts.rounds(), c.shortName(), name, s.executionMs(),
                                s.ioWaitNanos() >= 0 ? String.format(Locale.ROOT, "  I/O wait %8.1f ms", s.ioWaitNanos() / 1e6)
                                        : "                      ",
                                percent(s.residency()), s.counted() ? "" : "  NOT COUNTED: " + s.note()));
                    }
                }
            }
            List<DrillResult.CaseResult> results = new ArrayList<>();
            for (DrillCase c : cases) {
                List<DrillResult.Series> series = new ArrayList<>();
                samples.get(c).forEach((name, list) -> series.add(new DrillResult.Series(name, isBaseline(name),
                        description(name, c, buffers.big), list)));
                results.add(new DrillResult.CaseResult(c, series));
            }
            List<DrillResult.TableFigures> tables = new ArrayList<>();
            for (Loaded l : new Loaded[] {t, pf}) {
                if (l != null) {
                    IndexInfo i = l.table.index(KEY_COLUMN);
                    tables.add(new DrillResult.TableFigures(l.table.name(), l.table.rows(), l.table.blocks(),
                            l.table.blocks() * (long) StorageManager.BLCKSZ, i == null ? 0 : i.blocks(), l.reused, l.loadNanos));
                }
            }
            String fioNote = FioBaseline.note(opts.fio());
            if (fioFailure != null) {
                fioNote += "; but fio failed: " + fioFailure;
            }
            return new DrillResult(opts, started, System.nanoTime() - t0, tables, List.copyOf(methods.keySet()),
                    Map.copyOf(unavailable), fioNote, results, settings.effectiveIoCombineLimit() * StorageManager.BLCKSZ,
                    opts.sharedBuffers());
        }
    }

    private static String eta(long since, int done, int total) {
        if (done == 0) {
            return "";
        }
        long left = (System.nanoTime() - since) / done * (total - done);
        return String.format(Locale.ROOT, ", about %d s left", left / 1_000_000_000L);
    }

    static boolean isBaseline(String name) {
        return name.equals(FILE_CHANNEL) || name.equals(ASYNC_FILE_CHANNEL) || FioBaseline.Job.bySeries(name) != null;
    }

    private static String description(String name, DrillCase c, ByteBuffer big) {
        String unit = c.scan() == Scan.SEQ ? big.capacity() / 1024 + " kB positional read" : "8 kB read per heap fetch";
        if (name.endsWith(SEQ_HINT_SUFFIX)) {
            return "posix_fadvise(POSIX_FADV_SEQUENTIAL) on each of t's segment descriptors before the scan (not PostgreSQL's)";
        }
        if (name.equals(FILE_CHANNEL)) {
            return "one " + unit + " at a time";
        }
        if (name.equals(ASYNC_FILE_CHANNEL)) {
            return c.eic() + " reads in flight (" + unit + ")";
        }
        FioBaseline.Job j = FioBaseline.Job.bySeries(name);
        return j == null ? null : j.description(c.eic());
    }

    static String percent(double f) {
        return f == 0 ? "0%" : String.format(Locale.ROOT, "%.2f%%", f * 100);
    }

    private record Loaded(TableInfo table, boolean reused, long loadNanos) {}

    private static List<Path> heapFiles(StorageManager smgr, TableInfo t) {
        return smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, t.relNumber())).segmentPaths(t.blocks());
    }

    /**
     * Reuses table {@code name} when it has the shape, rows and seed asked for, all its blocks and
     * (when {@code indexColumn} is given) a complete index on that column; loads and indexes it
     * otherwise.
     */
    private Loaded prepareTable(StorageManager smgr, String name, TableShape shape, String indexColumn) throws IOException {
        IoMethod loader = methods.values().iterator().next();
        try (BufferManagerCore bufmgr = BufferManagerCore.on(smgr, settings, loader)) {
            BufferPool pool = bufmgr.pool();
            try {
                TableService tables = TableServices.over(pool);
                TableInfo t = tables.tables().stream().filter(x -> x.name().equals(name)).findFirst().orElse(null);
                boolean reused = false;
                long nanos = 0;
                if (t != null) {
                    SmgrRelation heap = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, t.relNumber()));
                    long blocks = heap.exists() ? heap.nblocks() : -1;
                    if (t.shape() == shape && t.rows() == opts.rows() && t.seed() == opts.seed() && blocks == t.blocks()) {
                        reused = true;
                    } else {
                        progress.line(String.format(Locale.ROOT, "drill: table %s in %s has %,d rows (shape %s, seed %d, %,d of %,d"
                                + " blocks on disk); reloading with %,d rows", name, opts.dataDir(), t.rows(), t.shape().shapeName(),
                                t.seed(), blocks, t.blocks(), opts.rows()));
                        tables.drop(name);
                        t = null;
                    }
                }
                if (t == null) {
                    long total = shape.blocksFor(opts.rows()) * (long) StorageManager.BLCKSZ;
                    progress.line(String.format(Locale.ROOT, "drill: loading %s (%,d rows, %s) into %s", name, opts.rows(), mb(total),
                            opts.dataDir()));
                    long[] next = {0};
                    long t0 = System.nanoTime();
                    var r = tables.load(name, shape, opts.rows(), opts.seed(), (done, all, bytes, ns) -> {
                        if (ns >= next[0] || done == all) {
                            next[0] = ns + STATUS_EVERY_NANOS;
                            double sec = ns / 1e9;
                            progress.status(String.format(Locale.ROOT, "drill: loading %s: %,d / %,d rows (%.0f%%)%s", name,
                                    done, all, all == 0 ? 100.0 : 100.0 * done / all, sec == 0 || bytes == 0 ? ""
                                            : String.format(Locale.ROOT, ", %.0f MB/s written", bytes / 1e6 / sec)));
                        }
                    });
                    nanos = System.nanoTime() - t0;
                    t = r.table();
                    progress.line(String.format(Locale.ROOT, "drill: loaded %s in %.1f s (%,d blocks, %s)", name, nanos / 1e9,
                            t.blocks(), mb(t.blocks() * (long) StorageManager.BLCKSZ)));
                }
                if (indexColumn != null) {
                    IndexInfo idx = t.index(indexColumn);
                    boolean ok = false;
                    if (idx != null) {
                        SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, idx.relNumber()));
                        ok = rel.exists() && rel.nblocks() == idx.blocks() && idx.entries() == t.rows();
                    }
                    if (!ok) {
                        reused = false;
                        progress.status(String.format(Locale.ROOT, "drill: building the index on %s(%s) (%,d rows)…", name,
                                indexColumn, t.rows()));
                        long i0 = System.nanoTime();
                        idx = tables.createIndex(name, indexColumn);
                        long in = System.nanoTime() - i0;
                        nanos += in;
                        progress.line(String.format(Locale.ROOT, "drill: built the index %s in %.1f s (%,d blocks, height %d)",
                                idx.name(), in / 1e9, idx.blocks(), idx.height()));
                        t = tables.table(name);
                    }
                }
                if (reused) {
                    IndexInfo idx = indexColumn == null ? null : t.index(indexColumn);
                    progress.line(String.format(Locale.ROOT, "drill: reusing table %s (%,d rows, %,d blocks, %s%s) in %s", name, t.rows(),
                            t.blocks(), mb(t.blocks() * (long) StorageManager.BLCKSZ),
                            idx == null ? "" : String.format(Locale.ROOT, ", index %s of %,d blocks", idx.name(), idx.blocks()),
                            opts.dataDir()));
                }
                return new Loaded(t, reused, nanos);
            } finally {
                pool.close();
            }
        }
    }

    /** Evicts (cold) or warms (OS-warm) the files; returns the residency just before the run. */
    private Residency prepareCache(DrillCase c, List<Path> files, ByteBuffer buffer) throws IOException {
        if (c.cold()) {
            Residency r = evict(files);
            if (r.residentPages() != 0) {
                r = evict(files); // once more: a read-ahead may still have been in flight
            }
            return r;
        }
        Residency r = residency(files);
        if (r.residentPages() < r.totalPages()) {
            for (Path p : files) {
                readAll(p, buffer);
            }
            r = residency(files);
        }
        return r;
    }

    static Residency evict(List<Path> files) throws IOException {
        long resident = 0;
        long total = 0;
        for (Path p : files) {
            Residency r = PageCache.evict(p);
            resident += r.residentPages();
            total += r.totalPages();
        }
        return new Residency(resident, total);
    }

    static Residency residency(List<Path> files) throws IOException {
        long resident = 0;
        long total = 0;
        for (Path p : files) {
            Residency r = PageCache.residency(p);
            resident += r.residentPages();
            total += r.totalPages();
        }
        return new Residency(resident, total);
    }

    /** Null when the run may count; else why not (a cold run with pages still cached names the files). */
    static String verdict(DrillCase c, Residency r, List<Path> files) throws IOException {
        if (c.cold()) {
            if (r.residentPages() == 0) {
                return null;
            }
            StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "not cold: %,d of %,d pages still in the page cache after"
                    + " eviction (", r.residentPages(), r.totalPages()));
            String sep = "";
            for (Path p : files) {
                Residency f = PageCache.residency(p);
                if (f.residentPages() > 0) {
                    b.append(sep).append(p.getFileName()).append(' ').append(percent(f.fraction()));
                    sep = ", ";
                }
            }
            return b.append("); something has them mapped or is reading them").toString();
        }
        return r.fraction() >= 0.99 ? null
                : "not warm: only " + percent(r.fraction()) + " of the files stayed in the page cache (memory pressure?)";
    }

    /** The buffers of the Java baselines, allocated once per drill. */
    private static final class Buffers {
        final ByteBuffer big;
        final ByteBuffer[] inFlight;

        Buffers(int size, int depth) {
            big = ByteBuffer.allocateDirect(size);
            inFlight = new ByteBuffer[Math.max(1, depth)];
            for (int i = 0; i < inFlight.length; i++) {
                inFlight[i] = ByteBuffer.allocateDirect(size);
            }
        }
    }

    private Sample runOne(String runner, DrillCase c, int round, Target t, Buffers b) throws IOException {
        FioBaseline.Job job = FioBaseline.Job.bySeries(runner);
        if (job != null) {
            return runFio(job, c, round, t, b.big);
        }
        return switch (runner) {
            case FILE_CHANNEL -> runFileChannel(c, round, t, b.big);
            case ASYNC_FILE_CHANNEL -> runAsyncFileChannel(c, round, t, b);
            default -> runner.endsWith(SEQ_HINT_SUFFIX)
                    ? runMethod(c, round, methods.get(runner.substring(0, runner.length() - SEQ_HINT_SUFFIX.length())), runner, t, b.big)
                    : runMethod(c, round, methods.get(runner), runner, t, b.big);
        };
    }

    private ScanRequest request(DrillCase c, Target t) {
        ScanRequest r = switch (c.scan()) {
            case SEQ -> ScanRequest.count(t.table());
            case BITMAP -> ScanRequest.bitmap(t.table(), KEY_COLUMN, KEY_LO, KEY_HI);
            case INDEX -> ScanRequest.index(t.table(), KEY_COLUMN, KEY_LO, KEY_HI);
        };
        return r.with(new ScanSettings(c.eic(), -1, null, Boolean.TRUE));
    }

    /**
     * One method's storage manager, AIO core, buffer pool and table service, kept for every run of
     * that method in the drill (one 256MB pool per method instead of one allocated and zeroed per
     * run). Its own storage manager: a method may change a descriptor's mode, as {@code direct}
     * switches it to O_DIRECT, and must not change how another method reads.
     */
    private final class Rig implements AutoCloseable {
        /** The buffer manager as a user runs one: storage manager, AIO core, pool, stat_io. */
        final BufferManagerCore bufmgr;
        final StorageManager smgr;
        final StatIo stats;
        final BufferPool pool;
        final TableService tables;

        Rig(IoMethod m) throws IOException {
            bufmgr = BufferManagerCore.open(opts.dataDir(), settings, m);
            try {
                tables = TableServices.over(bufmgr.pool());
            } catch (IOException | RuntimeException | Error e) {
                bufmgr.close();
                throw e;
            }
            smgr = bufmgr.storage();
            stats = bufmgr.stats();
            pool = bufmgr.pool();
        }

        /**
         * Empties shared buffers ({@link BufferPool#evictAll}) and zeroes stat_io. Nothing is dirty
         * or pinned between runs; a buffer left would be a leak, and the run would not start empty.
         */
        void empty(String method) throws IOException {
            BufferPool.EvictAllResult e;
            try (var s = pool.openSession("client")) {
                e = pool.evictAll(s);
            }
            if (e.skipped() != 0) {
                throw new IllegalStateException("io_method=" + method + ": shared buffers could not be emptied before the run: "
                        + e.skipped() + " buffer(s) still pinned or dirty");
            }
            stats.reset();
        }

        @Override
        public void close() {
            bufmgr.close();
        }
    }

    /** The rig of runner {@code name} (a method, or a method with a lever: its own descriptors). */
    private Rig rig(String name, IoMethod m) throws IOException {
        Rig r = rigs.get(name);
        if (r == null) {
            r = new Rig(m);
            rigs.put(name, r);
        }
        return r;
    }

    /**
     * One run of one method on its rig, shared buffers emptied first. Runner {@code <method>
     * +FADV_SEQUENTIAL} advises POSIX_FADV_SEQUENTIAL on each heap segment's descriptor of its own
     * storage manager first (Linux doubles that file's read-ahead window; the advice stays with the
     * descriptor, so it is given again each run, which costs nothing).
     */
    private Sample runMethod(DrillCase c, int round, IoMethod m, String runner, Target t, ByteBuffer warmBuffer) throws IOException {
        Rig rig = rig(runner, m);
        rig.empty(runner);
        if (runner.endsWith(SEQ_HINT_SUFFIX)) {
            SmgrRelation rel = rig.smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, t.relNumber()));
            for (int seg = 0; seg < t.heapFiles().size(); seg++) {
                long block = seg * opts.segmentBlocks();
                Posix.fadvise(rel.fd(block), 0, 0, Fadvise.POSIX_FADV_SEQUENTIAL, t.heapFiles().get(seg));
            }
        }
        StatIo stats = rig.stats;
        Residency res = prepareCache(c, t.coldFiles(), warmBuffer);
        String note = verdict(c, res, t.coldFiles());
        RunProbe.Snapshot before = probe.now();
        ScanReport r = rig.tables.scan(request(c, t));
        RunProbe.Snapshot after = probe.now();
        if (r.count() != t.expected()) {
            throw new IllegalStateException("io_method=" + m.name() + ": " + c.scan().label() + " of " + t.table() + " returned "
                    + r.count() + " rows, expected " + t.expected());
        }
        if (c.scan() == Scan.INDEX && r.sumLength() != r.count() * TableShape.PREFETCH_TEST.textLength()) {
            throw new IllegalStateException("io_method=" + m.name() + ": sum(length(payload)) of " + t.table() + " returned "
                    + r.sumLength() + ", expected " + r.count() * TableShape.PREFETCH_TEST.textLength());
        }
        long reads = 0;
        long bytes = 0;
        for (StatIo.Row row : stats.rows()) {
            reads += row.value(StatIo.Column.READS);
            bytes += row.value(StatIo.Column.READ_BYTES);
        }
        return new Sample(round, r.executionNanos(), r.plan().ioReadNanos(), reads, bytes, r.sharedHit(), res.residentPages(),
                res.totalPages(), note == null, note).probed(before, after);
    }

    private Sample runFio(FioBaseline.Job job, DrillCase c, int round, Target t, ByteBuffer warmBuffer) throws IOException {
        Residency res = prepareCache(c, t.coldFiles(), warmBuffer);
        String note = verdict(c, res, t.coldFiles());
        try {
            RunProbe.Snapshot before = probe.now();
            FioBaseline.Result r = FioBaseline.run(fio, job, job.depth(c.eic()), t.heapFiles(), job.rw.equals("randread") ? c.bytes() : 0);
            RunProbe.Snapshot after = probe.now();
            return new Sample(round, r.runtimeNanos(), -1, r.ios(), r.ioBytes(), 0, res.residentPages(), res.totalPages(), note == null,
                    note).probed(before, after, r.cpuNanos());
        } catch (InterruptedIOException e) {
            throw e;
        } catch (IOException e) {
            if (fioFailure == null) {
                fioFailure = e.getMessage();
            }
            return new Sample(round, 0, -1, 0, 0, 0, res.residentPages(), res.totalPages(), false, e.getMessage());
        }
    }

    private static long segment(long block, long segmentBlocks) {
        return block / segmentBlocks;
    }

    /**
     * What a Java developer would write for concurrency: {@link AsynchronousFileChannel} with
     * {@code effective_io_concurrency} positional reads in flight, oldest first; for a sequential
     * case reads of {@code io_combine_limit} bytes through each file, otherwise one 8 kB read per
     * heap fetch in the scan's order.
     */
    private Sample runAsyncFileChannel(DrillCase c, int round, Target t, Buffers buf) throws IOException {
        Residency res = prepareCache(c, t.coldFiles(), buf.big);
        String note = verdict(c, res, t.coldFiles());
        int depth = Math.max(1, c.eic());
        long reads = 0;
        long bytes = 0;
        RunProbe.Snapshot before = probe.now();
        long t0 = System.nanoTime();
        ArrayDeque<Future<Integer>> pending = new ArrayDeque<>(depth);
        try {
            if (t.blocks() == null) {
                for (Path p : t.heapFiles()) {
                    try (AsynchronousFileChannel ch = AsynchronousFileChannel.open(p, StandardOpenOption.READ)) {
                        long size = ch.size();
                        long next = 0;
                        int slot = 0;
                        while (next < size || !pending.isEmpty()) {
                            while (pending.size() < depth && next < size) {
                                ByteBuffer b = buf.inFlight[slot];
                                slot = (slot + 1) % depth;
                                b.clear();
                                pending.add(ch.read(b, next));
                                next += b.capacity();
                            }
                            int n = pending.poll().get();
                            if (n > 0) {
                                bytes += n;
                                reads++;
                            }
                        }
                    }
                }
            } else {
                AsynchronousFileChannel[] chs = new AsynchronousFileChannel[t.heapFiles().size()];
                try {
                    for (int i = 0; i < chs.length; i++) {
                        chs[i] = AsynchronousFileChannel.open(t.heapFiles().get(i), StandardOpenOption.READ);
                    }
                    long[] blocks = t.blocks();
                    int next = 0;
                    int slot = 0;
                    while (next < blocks.length || !pending.isEmpty()) {
                        while (pending.size() < depth && next < blocks.length) {
                            ByteBuffer b = buf.inFlight[slot];
                            slot = (slot + 1) % depth;
                            b.clear().limit(StorageManager.BLCKSZ);
                            long blk = blocks[next++];
                            pending.add(chs[(int) segment(blk, opts.segmentBlocks())].read(b,
                                    (blk % opts.segmentBlocks()) * StorageManager.BLCKSZ));
                        }
                        int n = pending.poll().get();
                        if (n > 0) {
                            bytes += n;
                            reads++;
                        }
                    }
                } finally {
                    for (AsynchronousFileChannel ch : chs) {
                        if (ch != null) {
                            ch.close();
                        }
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("drill interrupted");
        } catch (ExecutionException e) {
            throw new IOException("AsynchronousFileChannel read failed: " + e.getCause(), e.getCause());
        }
        long nanos = System.nanoTime() - t0;
        RunProbe.Snapshot after = probe.now();
        return new Sample(round, nanos, -1, reads, bytes, 0, res.residentPages(), res.totalPages(), note == null, note)
                .probed(before, after);
    }

    private Sample runFileChannel(DrillCase c, int round, Target t, ByteBuffer buffer) throws IOException {
        Residency res = prepareCache(c, t.coldFiles(), buffer);
        String note = verdict(c, res, t.coldFiles());
        long reads = 0;
        long bytes = 0;
        RunProbe.Snapshot before = probe.now();
        long t0 = System.nanoTime();
        if (t.blocks() == null) {
            for (Path p : t.heapFiles()) {
                try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
                    long pos = 0;
                    while (true) {
                        buffer.clear();
                        int n = ch.read(buffer, pos);
                        if (n <= 0) {
                            break;
                        }
                        pos += n;
                        bytes += n;
                        reads++;
                    }
                }
            }
        } else {
            FileChannel[] chs = new FileChannel[t.heapFiles().size()];
            try {
                for (int i = 0; i < chs.length; i++) {
                    chs[i] = FileChannel.open(t.heapFiles().get(i), StandardOpenOption.READ);
                }
                for (long blk : t.blocks()) {
                    buffer.clear().limit(StorageManager.BLCKSZ);
                    long offset = (blk % opts.segmentBlocks()) * StorageManager.BLCKSZ;
                    int n = chs[(int) segment(blk, opts.segmentBlocks())].read(buffer, offset);
                    if (n > 0) {
                        bytes += n;
                        reads++;
                    }
                }
            } finally {
                for (FileChannel ch : chs) {
                    if (ch != null) {
                        ch.close();
                    }
                }
            }
        }
        long nanos = System.nanoTime() - t0;
        RunProbe.Snapshot after = probe.now();
        return new Sample(round, nanos, -1, reads, bytes, 0, res.residentPages(), res.totalPages(), note == null, note)
                .probed(before, after);
    }

    private static void readAll(Path p, ByteBuffer buffer) throws IOException {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            long pos = 0;
            int n;
            while ((n = ch.read(buffer.clear(), pos)) > 0) {
                pos += n;
            }
        }
    }

    static String mb(long bytes) {
        return bytes >= 1e9 ? String.format(Locale.ROOT, "%.2f GB", bytes / 1e9) : String.format(Locale.ROOT, "%.1f MB", bytes / 1e6);
    }
}
