package org.pageio.console.drill;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousFileChannel;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import org.pageio.api.AioContext;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.posix.PageCache;
import org.pageio.posix.Residency;
import org.pageio.table.ScanReport;
import org.pageio.table.ScanRequest;
import org.pageio.table.ScanSettings;
import org.pageio.table.TableInfo;
import org.pageio.table.TableService;
import org.pageio.table.TableServices;
import org.pageio.table.TableShape;

/**
 * The first article's drill as one call: load {@code t} (or reuse it when it was loaded with the
 * same rows and seed), then for each round, each case, each method in an order rotated by round:
 * a fresh buffer pool (empty shared buffers), the table's files evicted from the page cache and
 * proven cold with mincore (cold cases) or kept there (OS-warm case), one {@code count(*)} scan.
 * Before round 1 every method and the baseline scan once, unrecorded (JIT, threads).
 * The {@code FileChannel} baseline reads the same files with one positional read of
 * {@code io_combine_limit} bytes at a time. A cold run whose files are not 0% resident is kept in
 * the result but never counted as cold.
 *
 * <p>Runs in the calling thread; not thread-safe (one drill at a time per data directory).
 */
public final class Drill {

    /** The name of the positional-read baseline. */
    public static final String FILE_CHANNEL = "FileChannel";
    /** The baseline with as many reads in flight as the case's effective_io_concurrency. */
    public static final String ASYNC_FILE_CHANNEL = "AsynchronousFileChannel";

    private final DrillOptions opts;
    private final Map<String, IoMethod> methods;
    private final Map<String, String> unavailable;
    private final Consumer<String> progress;
    private final BufMgrSettings settings;

    /**
     * @param opts        what to run
     * @param registered  every registered method by {@code io.method}, available or not
     * @param progress    receives one line at a time while loading and running
     */
    public Drill(DrillOptions opts, Map<String, IoMethod> registered, Consumer<String> progress) {
        this.opts = opts;
        this.progress = progress == null ? s -> { } : progress;
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
    }

    private static int rank(String method) {
        return switch (method) {
            case "sync" -> 0;
            case "worker" -> 1;
            case "io_uring" -> 2;
            default -> 3;
        };
    }

    /** The cases, in the order they run within a round. */
    public List<DrillCase> cases() {
        List<DrillCase> cases = new ArrayList<>();
        for (int e : opts.eic()) {
            cases.add(new DrillCase("seq-cold-eic" + e, "count(*), cold, effective_io_concurrency=" + e, true, e));
        }
        cases.add(new DrillCase("seq-warm", "count(*), OS page cache warm (shared buffers empty), effective_io_concurrency="
                + DrillOptions.DEFAULT_EIC_VALUE, false, DrillOptions.DEFAULT_EIC_VALUE));
        return cases;
    }

    public DrillResult run() throws IOException {
        Instant started = Instant.now();
        long t0 = System.nanoTime();
        Files.createDirectories(opts.dataDir());
        try (StorageManager smgr = new StorageManager(opts.dataDir(), opts.segmentBlocks(), false)) {
            Loaded loaded = prepareTable(smgr);
            SmgrRelation heap = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, loaded.table.relNumber()));
            List<Path> files = heap.segmentPaths(loaded.table.blocks());
            List<DrillCase> cases = cases();
            Map<DrillCase, Map<String, List<Sample>>> samples = new LinkedHashMap<>();
            List<String> runners = new ArrayList<>(methods.keySet());
            runners.add(FILE_CHANNEL);
            runners.add(ASYNC_FILE_CHANNEL);
            for (DrillCase c : cases) {
                Map<String, List<Sample>> m = new LinkedHashMap<>();
                runners.forEach(r -> m.put(r, new ArrayList<>()));
                samples.put(c, m);
            }
            ByteBuffer buffer = ByteBuffer.allocateDirect(settings.effectiveIoCombineLimit() * StorageManager.BLCKSZ);
            int maxDepth = 1;
            for (DrillCase c : cases) {
                maxDepth = Math.max(maxDepth, c.eic());
            }
            ByteBuffer[] inFlight = new ByteBuffer[maxDepth];
            for (int i = 0; i < maxDepth; i++) {
                inFlight[i] = ByteBuffer.allocateDirect(buffer.capacity());
            }
            // Warm-up, not recorded: the first scan in a JVM pays for JIT compilation and thread start-up.
            DrillCase warmUp = new DrillCase("warm-up", "warm-up", false, DrillOptions.DEFAULT_EIC_VALUE);
            for (String r : runners) {
                Sample s = runOne(r, warmUp, 0, loaded.table, files, buffer, inFlight);
                progress.accept(String.format(Locale.ROOT, "drill: warm-up (not recorded)  %-12s %9.1f ms", r, s.executionMs()));
            }
            for (int round = 1; round <= opts.rounds(); round++) {
                for (DrillCase c : cases) {
                    int shift = (round - 1) % runners.size();
                    for (int i = 0; i < runners.size(); i++) {
                        String r = runners.get((i + shift) % runners.size());
                        Sample s = runOne(r, c, round, loaded.table, files, buffer, inFlight);
                        samples.get(c).get(r).add(s);
                        progress.accept(String.format(Locale.ROOT, "drill: round %d/%d  %-28s %-12s %9.1f ms%s  residency %s%s",
                                round, opts.rounds(), c.shortName(), r, s.executionMs(),
                                s.ioWaitNanos() >= 0 ? String.format(Locale.ROOT, "  I/O wait %8.1f ms", s.ioWaitNanos() / 1e6)
                                        : "                      ",
                                percent(s.residency()), s.counted() ? "" : "  NOT COUNTED: " + s.note()));
                    }
                }
            }
            List<DrillResult.CaseResult> results = new ArrayList<>();
            for (DrillCase c : cases) {
                List<DrillResult.Series> series = new ArrayList<>();
                samples.get(c).forEach((name, list) -> series.add(new DrillResult.Series(name,
                        name.equals(FILE_CHANNEL) || name.equals(ASYNC_FILE_CHANNEL),
                        name.equals(FILE_CHANNEL) ? "one " + buffer.capacity() / 1024 + " kB positional read at a time"
                                : name.equals(ASYNC_FILE_CHANNEL) ? c.eic() + " reads of " + buffer.capacity() / 1024
                                        + " kB in flight" : null,
                        list)));
                results.add(new DrillResult.CaseResult(c, series));
            }
            return new DrillResult(opts, started, System.nanoTime() - t0, loaded.table.rows(), loaded.table.blocks(),
                    loaded.table.blocks() * (long) StorageManager.BLCKSZ, loaded.reused, loaded.loadNanos,
                    List.copyOf(methods.keySet()), Map.copyOf(unavailable), FioBaseline.note(), results,
                    settings.effectiveIoCombineLimit() * StorageManager.BLCKSZ, opts.sharedBuffers());
        }
    }

    static String percent(double f) {
        return f == 0 ? "0%" : String.format(Locale.ROOT, "%.2f%%", f * 100);
    }

    private record Loaded(TableInfo table, boolean reused, long loadNanos) {}

    /** Reuses {@code t} when it has the rows and seed asked for and all its blocks; loads it otherwise. */
    private Loaded prepareTable(StorageManager smgr) throws IOException {
        IoMethod loader = methods.values().iterator().next();
        try (AioContext aio = AioContext.create(loader, settings.aioConfig())) {
            BufferPool pool = new BufferPool(settings, smgr, aio, new StatIo());
            try {
                TableService tables = TableServices.over(pool);
                TableInfo t = tables.tables().stream().filter(x -> x.name().equals(DrillOptions.TABLE)).findFirst().orElse(null);
                if (t != null) {
                    SmgrRelation heap = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, t.relNumber()));
                    long blocks = heap.exists() ? heap.nblocks() : -1;
                    if (t.shape() == TableShape.T && t.rows() == opts.rows() && t.seed() == opts.seed() && blocks == t.blocks()) {
                        progress.accept(String.format(Locale.ROOT, "drill: reusing table t (%,d rows, %,d blocks, %s) in %s",
                                t.rows(), t.blocks(), mb(t.blocks() * (long) StorageManager.BLCKSZ), opts.dataDir()));
                        return new Loaded(t, true, 0);
                    }
                    progress.accept(String.format(Locale.ROOT, "drill: table t in %s has %,d rows (seed %d, %,d of %,d blocks on disk);"
                            + " reloading with %,d rows", opts.dataDir(), t.rows(), t.seed(), blocks, t.blocks(), opts.rows()));
                    tables.drop(DrillOptions.TABLE);
                }
                long total = TableShape.T.blocksFor(opts.rows()) * (long) StorageManager.BLCKSZ;
                progress.accept(String.format(Locale.ROOT, "drill: loading t (%,d rows, %s) into %s", opts.rows(), mb(total),
                        opts.dataDir()));
                long[] next = {0};
                long t0 = System.nanoTime();
                var r = tables.load(DrillOptions.TABLE, TableShape.T, opts.rows(), opts.seed(), (done, all, bytes, nanos) -> {
                    if (nanos >= next[0] || done == all) {
                        next[0] = nanos + 1_000_000_000L;
                        double sec = nanos / 1e9;
                        progress.accept(String.format(Locale.ROOT, "drill: loading t: %,d / %,d rows (%.0f%%), %.0f MB/s", done, all,
                                all == 0 ? 100.0 : 100.0 * done / all, sec == 0 ? 0 : bytes / 1e6 / sec));
                    }
                });
                long nanos = System.nanoTime() - t0;
                progress.accept(String.format(Locale.ROOT, "drill: loaded t in %.1f s (%,d blocks)", nanos / 1e9, r.table().blocks()));
                return new Loaded(r.table(), false, nanos);
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

    private static String verdict(DrillCase c, Residency r, List<Path> files) throws IOException {
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
            return b.append(')').toString();
        }
        return r.fraction() >= 0.99 ? null
                : "not warm: only " + percent(r.fraction()) + " of the table stayed in the page cache (memory pressure?)";
    }

    /**
     * One run of one method, in its own storage manager (fresh descriptors: a method may change a
     * descriptor's mode, as {@code direct} switches it to O_DIRECT, and must not change how the
     * next method reads), its own AIO core and an empty buffer pool.
     */
    private Sample runMethod(DrillCase c, int round, IoMethod m, TableInfo t, List<Path> files) throws IOException {
        StatIo stats = new StatIo();
        try (StorageManager smgr = new StorageManager(opts.dataDir(), opts.segmentBlocks(), false);
                AioContext aio = AioContext.create(m, settings.aioConfig())) {
            BufferPool pool = new BufferPool(settings, smgr, aio, stats);
            try {
                TableService tables = TableServices.over(pool);
                ByteBuffer warm = c.cold() ? null : ByteBuffer.allocateDirect(settings.effectiveIoCombineLimit() * StorageManager.BLCKSZ);
                Residency res = prepareCache(c, files, warm);
                String note = verdict(c, res, files);
                ScanReport r = tables.scan(ScanRequest.count(DrillOptions.TABLE)
                        .with(new ScanSettings(c.eic(), -1, null, Boolean.TRUE)));
                if (r.count() != t.rows()) {
                    throw new IllegalStateException("io_method=" + m.name() + ": count(*) of t returned " + r.count() + ", expected "
                            + t.rows());
                }
                long reads = 0;
                long bytes = 0;
                for (StatIo.Row row : stats.rows()) {
                    reads += row.value(StatIo.Column.READS);
                    bytes += row.value(StatIo.Column.READ_BYTES);
                }
                return new Sample(round, r.executionNanos(), r.plan().ioReadNanos(), reads, bytes, res.residentPages(),
                        res.totalPages(), note == null, note);
            } finally {
                pool.close();
            }
        }
    }

    private Sample runOne(String runner, DrillCase c, int round, TableInfo t, List<Path> files, ByteBuffer buffer,
            ByteBuffer[] inFlight) throws IOException {
        return switch (runner) {
            case FILE_CHANNEL -> runFileChannel(c, round, files, buffer);
            case ASYNC_FILE_CHANNEL -> runAsyncFileChannel(c, round, files, buffer, inFlight);
            default -> runMethod(c, round, methods.get(runner), t, files);
        };
    }

    /**
     * What a Java developer would write for concurrency: {@link AsynchronousFileChannel} with
     * {@code effective_io_concurrency} positional reads of {@code io_combine_limit} bytes in flight,
     * oldest first.
     */
    private Sample runAsyncFileChannel(DrillCase c, int round, List<Path> files, ByteBuffer buffer, ByteBuffer[] inFlight)
            throws IOException {
        Residency res = prepareCache(c, files, buffer);
        String note = verdict(c, res, files);
        int depth = Math.max(1, c.eic());
        long reads = 0;
        long bytes = 0;
        long t0 = System.nanoTime();
        java.util.ArrayDeque<java.util.concurrent.Future<Integer>> pending = new java.util.ArrayDeque<>(depth);
        for (Path p : files) {
            try (AsynchronousFileChannel ch = AsynchronousFileChannel.open(p, StandardOpenOption.READ)) {
                long size = ch.size();
                long next = 0;
                int slot = 0;
                while (next < size || !pending.isEmpty()) {
                    while (pending.size() < depth && next < size) {
                        ByteBuffer b = inFlight[slot];
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
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("drill interrupted");
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IOException("AsynchronousFileChannel read failed: " + e.getCause(), e.getCause());
            }
        }
        long nanos = System.nanoTime() - t0;
        return new Sample(round, nanos, -1, reads, bytes, res.residentPages(), res.totalPages(), note == null, note);
    }

    private Sample runFileChannel(DrillCase c, int round, List<Path> files, ByteBuffer buffer) throws IOException {
        Residency res = prepareCache(c, files, buffer);
        String note = verdict(c, res, files);
        long reads = 0;
        long bytes = 0;
        long t0 = System.nanoTime();
        for (Path p : files) {
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
        long nanos = System.nanoTime() - t0;
        return new Sample(round, nanos, -1, reads, bytes, res.residentPages(), res.totalPages(), note == null, note);
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
