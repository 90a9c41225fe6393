package org.pageio.measure.drill;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.measure.fio.Fio;
import org.pageio.pgdata.PgCluster;
import org.pageio.pgdata.PgHeapScan;
import org.pageio.table.IndexInfo;
import org.pageio.table.TableShape;
import org.pageio.settings.DataDirectory;

/**
 * The cold-scan drill as one call. Loads {@code t} (sequential scans) and PostgreSQL 19's
 * read-stream test table {@code prefetch_test} with its index on {@code val} (bitmap heap and index scans), or
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
 * <p>After them, the visibility case ({@link VisibilityCase}), a table wholly in shared buffers
 * against a plain loop ({@link HotCase}) and sessions scanning at once ({@link ConcurrentCase}),
 * each with its own table and rounds.
 *
 * <p>The parts: {@link DrillTables} loads or reuses the tables, {@link DrillCases} says what each
 * case reads, {@link DrillRounds} runs the warm-up and the rounds, {@link CaseCache} evicts or
 * warms the files before each run (through {@code org.pageio.measure.cache.ColdCache}),
 * {@link JavaBaselines} and {@link FioSeries} (jobs for {@code org.pageio.measure.fio.Fio}) are
 * the baselines, and
 * {@link DrillPools} builds every storage manager, AIO core and buffer pool.
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
     * (PostgreSQL 19's read-stream test query reads ~0.5% of the rows and ~15% of the blocks; those two go together at 33 rows
     * a page, so the drill keeps the block fraction, which is what the I/O sees).
     */
    public static final long KEY_LO = 20_000;
    public static final long KEY_HI = 20_172;

    private final DrillOptions opts;
    private final Map<String, IoMethod> methods;
    private final Map<String, String> unavailable;
    private final DrillProgress progress;
    private final DrillPools pools;
    private final Fio fio;

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
        names.sort(Comparator.naturalOrder()); // pageio:methods' order, the settings' and the Web Console's
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
            for (String n : opts.methods()) {
                if (avail.containsKey(n)) {
                    continue;
                } else if (unavail.containsKey(n)) {
                    throw new IllegalArgumentException("io_method=" + n + " is not available here: " + unavail.get(n));
                } else {
                    throw new IllegalArgumentException("io_method=" + n + " is not registered (registered: "
                            + String.join(", ", names) + ")");
                }
            }
            Map<String, IoMethod> chosen = new LinkedHashMap<>(); // by name, whatever order --methods named them in
            avail.forEach((n, m) -> {
                if (opts.methods().contains(n)) {
                    chosen.put(n, m);
                }
            });
            this.methods = chosen;
        }
        if (this.methods.isEmpty()) {
            throw new IllegalStateException("no I/O method is available (registered: " + names + ", unavailable: " + unavail + ")");
        }
        this.unavailable = unavail;
        this.pools = new DrillPools(opts);
        this.fio = opts.fio() ? Fio.find().map(Fio::new).orElse(null) : null;
    }

    /** The method that loads the tables: sync when it runs (the plainest path), else the first by name. */
    private IoMethod loader() {
        IoMethod sync = methods.get("sync");
        return sync != null ? sync : methods.values().iterator().next();
    }


    public DrillResult run() throws IOException {
        if (opts.pg() != null) {
            return runPg();
        }
        Instant started = Instant.now();
        long t0 = System.nanoTime();
        DataDirectory.createPrivate(opts.dataDir());
        RunProbe probe = RunProbe.forDirectory(opts.dataDir());
        boolean needT = opts.runs("seq") || opts.runs("warm") || opts.runs("concurrent"); // concurrent: t OS-warm
        boolean needPf = opts.runs("bitmap") || opts.runs("index");
        boolean needSmall = opts.runs("hot") || opts.runs("concurrent");
        try (DrillRounds rounds = new DrillRounds(opts, methods, pools, fio, probe, progress);
                StorageManager smgr = pools.storageManager()) {
            DrillTables prep = new DrillTables(opts, pools, loader(), progress);
            DrillTables.Loaded t = needT ? prep.prepare(smgr, DrillOptions.TABLE, TableShape.T, null) : null;
            DrillTables.Loaded pf = needPf ? prep.prepare(smgr, DrillOptions.PREFETCH_TABLE, TableShape.PREFETCH_TEST, KEY_COLUMN)
                    : null;
            DrillTables.Loaded small = needSmall ? prep.prepare(smgr, DrillOptions.SMALL_TABLE, TableShape.T, null,
                    DrillOptions.smallRows(opts.rows())) : null;
            DrillCases plan = DrillCases.of(opts, smgr, t == null ? null : t.table(), pf == null ? null : pf.table());
            List<DrillResult.CaseResult> results = rounds.run(plan);
            VisibilityCase.Result visibility = opts.runs("visibility")
                    ? new VisibilityCase(opts, pools, progress).run(smgr, loader(), methods, rounds::rig) : null;
            HotCase.Result hot = null;
            ConcurrentCase.Result concurrent = null;
            if (small != null) {
                int hotBuffers = pools.hotSharedBuffers(small.table().blocks());
                if (opts.runs("hot")) {
                    String name = methods.entrySet().stream().filter(e -> e.getValue() == loader()).findFirst().orElseThrow().getKey();
                    hot = new HotCase(opts, progress, probe).run(smgr, small.table(), name, rounds.rig(name, loader(), hotBuffers),
                            hotBuffers);
                }
                if (opts.runs("concurrent")) {
                    concurrent = new ConcurrentCase(opts, progress, probe, fio).run(smgr, small.table(), t.table(), methods, rounds::rig,
                            hotBuffers,
                            pools.settings().effectiveIoCombineLimit() * StorageManager.BLCKSZ);
                }
            }
            List<DrillResult.TableFigures> tables = new ArrayList<>();
            for (DrillTables.Loaded l : new DrillTables.Loaded[] {t, pf, small}) {
                if (l != null) {
                    IndexInfo i = l.table().index(KEY_COLUMN);
                    tables.add(new DrillResult.TableFigures(l.table().name(), l.table().rows(), l.table().blocks(),
                            l.table().blocks() * (long) StorageManager.BLCKSZ, i == null ? 0 : i.blocks(), l.reused(),
                            l.loadNanos()));
                }
            }
            String fioNote = FioSeries.note(Fio.find().map(Fio::new).orElse(null), opts.fio());
            if (rounds.fioFailure() != null) {
                fioNote += "; but fio failed: " + rounds.fioFailure();
            }
            return new DrillResult(opts, started, System.nanoTime() - t0, tables, List.copyOf(methods.keySet()),
                    Map.copyOf(unavailable), fioNote, results, pools.settings().effectiveIoCombineLimit() * StorageManager.BLCKSZ,
                    opts.sharedBuffers(), visibility, hot, concurrent);
        }
    }

    /**
     * The count(*) cases over a heap of a stopped PostgreSQL cluster ({@code --pgdata},
     * {@code --relation}), read-only, the server not started: one count through the loader's pool
     * gives the answer every run must give (pgdata-bundle's {@link PgHeapScan}, PostgreSQL's tuple
     * visibility), then the rounds as over {@code t}, each method on a rig of its own over the
     * cluster, the baselines and fio on the heap's segment files.
     */
    private DrillResult runPg() throws IOException {
        Instant started = Instant.now();
        long t0 = System.nanoTime();
        DrillOptions.PgSource source = opts.pg();
        long blocks;
        List<Path> files;
        PgHeapScan.Count first;
        DrillOptions o;
        long loadStarted = System.nanoTime();
        try (PgCluster cluster = PgCluster.open(source.pgdata());
                BufferManagerCore core = cluster.openBufferManager(loader(), pools.settings())) {
            o = opts.withPg(source, cluster.controlFile().relsegSize());
            first = PgHeapScan.count(cluster, core.pool(), source.relation());
            blocks = first.blocks();
            files = cluster.relation(source.relation()).segmentPaths(blocks);
        }
        long loadNanos = System.nanoTime() - loadStarted;
        progress.line(String.format(Locale.ROOT, "drill: %s in %s: %,d blocks, count(*) = %,d (%,d tuples, %,d pages all-visible)",
                source.relation(), source.pgdata(), blocks, first.visible(), first.tuples(), first.allVisiblePages()));
        RunProbe probe = RunProbe.forDirectory(source.pgdata());
        List<DrillResult.CaseResult> results;
        String fioFailure;
        try (DrillRounds rounds = new DrillRounds(o, methods, pools, fio, probe, progress)) {
            results = rounds.run(DrillCases.ofPg(o, source.relation(), files, blocks, first.tuples(), first.visible()));
            fioFailure = rounds.fioFailure();
        }
        List<DrillResult.TableFigures> tables = List.of(new DrillResult.TableFigures("PostgreSQL " + source.relation(), first.visible(), blocks,
                blocks * StorageManager.BLCKSZ, 0, true, loadNanos));
        String fioNote = FioSeries.note(Fio.find().map(Fio::new).orElse(null), o.fio());
        if (fioFailure != null) {
            fioNote += "; but fio failed: " + fioFailure;
        }
        return new DrillResult(o, started, System.nanoTime() - t0, tables, List.copyOf(methods.keySet()), Map.copyOf(unavailable),
                fioNote, results, pools.settings().effectiveIoCombineLimit() * StorageManager.BLCKSZ, o.sharedBuffers(), null, null,
                null);
    }

    static boolean isBaseline(String name) {
        return name.equals(FILE_CHANNEL) || name.equals(ASYNC_FILE_CHANNEL) || FioSeries.bySeries(name) != null;
    }

    static String percent(double f) {
        return f == 0 ? "0%" : String.format(Locale.ROOT, "%.2f%%", f * 100);
    }

    static String mb(long bytes) {
        return bytes >= 1e9 ? String.format(Locale.ROOT, "%.2f GB", bytes / 1e9) : String.format(Locale.ROOT, "%.1f MB", bytes / 1e6);
    }
}
