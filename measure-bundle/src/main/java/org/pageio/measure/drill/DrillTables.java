package org.pageio.measure.drill;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.table.IndexInfo;
import org.pageio.table.TableInfo;
import org.pageio.table.TableService;
import org.pageio.table.TableServices;
import org.pageio.table.TableShape;

/**
 * Generates or reuses the drill's tables and says which blocks the bitmap and index scans read.
 * Runs in the drill's thread.
 */
final class DrillTables {

    private static final long STATUS_EVERY_NANOS = 250_000_000L;

    /** A table ready to scan: whether it was reused as found, and what loading and indexing it took. */
    record Loaded(TableInfo table, boolean reused, long loadNanos) {}

    private final DrillOptions opts;
    private final DrillPools pools;
    private final IoMethod loader;
    private final DrillProgress progress;

    DrillTables(DrillOptions opts, DrillPools pools, IoMethod loader, DrillProgress progress) {
        this.opts = opts;
        this.pools = pools;
        this.loader = loader;
        this.progress = progress;
    }

    /** The rows of prefetch_test that match the predicate, as heap blocks in index order (key, block, line). */
    static long[] indexOrderBlocks(long rows, long seed) {
        TableShape s = TableShape.PREFETCH_TEST;
        int col = s.columnIndex(s.column(Drill.KEY_COLUMN));
        int rpp = s.rowsPerPage();
        long[] packed = new long[1024];
        int n = 0;
        for (long g = 1; g <= rows; g++) {
            long v = s.value(col, g, seed);
            if (v >= Drill.KEY_LO && v <= Drill.KEY_HI) {
                if (n == packed.length) {
                    packed = Arrays.copyOf(packed, n * 2);
                }
                long block = (g - 1) / rpp;
                int line = (int) ((g - 1) % rpp) + 1;
                packed[n++] = ((v - Drill.KEY_LO) << 40) | (block << 9) | line; // sorts as the index does: key, block, line
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

    /** Each block of {@code blocks} once, where it first appears: what a scan reads from storage when repeats hit shared buffers. */
    static long[] firstOccurrences(long[] blocks) {
        java.util.HashSet<Long> seen = new java.util.HashSet<>(blocks.length * 2);
        long[] b = new long[blocks.length];
        int n = 0;
        for (long x : blocks) {
            if (seen.add(x)) {
                b[n++] = x;
            }
        }
        return Arrays.copyOf(b, n);
    }

    static List<Path> heapFiles(StorageManager smgr, TableInfo t) {
        return smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, t.relNumber())).segmentPaths(t.blocks());
    }

    /**
     * Reuses table {@code name} when it has the shape, rows and seed asked for, all its blocks and
     * (when {@code indexColumn} is given) a complete index on that column; loads and indexes it
     * otherwise.
     */
    Loaded prepare(StorageManager smgr, String name, TableShape shape, String indexColumn) throws IOException {
        return prepare(smgr, name, shape, indexColumn, opts.rows());
    }

    /** As {@link #prepare(StorageManager, String, TableShape, String)}, with {@code rows} rows. */
    Loaded prepare(StorageManager smgr, String name, TableShape shape, String indexColumn, long rows) throws IOException {
        try (BufferManagerCore bufmgr = pools.loader(smgr, loader)) {
            BufferPool pool = bufmgr.pool();
            try {
                TableService tables = TableServices.over(pool);
                TableInfo t = tables.tables().stream().filter(x -> x.name().equals(name)).findFirst().orElse(null);
                boolean reused = false;
                long nanos = 0;
                if (t != null) {
                    SmgrRelation heap = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, t.relNumber()));
                    long blocks = heap.exists() ? heap.nblocks() : -1;
                    boolean same = t.shape() == shape && t.rows() == rows && t.seed() == opts.seed() && blocks == t.blocks();
                    // a table loaded before loads set the visibility map (and PD_ALL_VISIBLE) would make
                    // every scan check each tuple where a fresh load's pages skip it: load it again
                    if (same && tables.visibilityMapSummary(name).allVisible() != t.blocks()) {
                        progress.line(String.format(Locale.ROOT, "drill: table %s in %s has no complete visibility map (loaded by"
                                + " an earlier version); reloading it so that its pages are all-visible as a fresh load's",
                                name, opts.dataDir()));
                        tables.drop(name);
                        t = null;
                    } else if (same) {
                        reused = true;
                    } else {
                        progress.line(String.format(Locale.ROOT, "drill: table %s in %s has %,d rows (shape %s, seed %d, %,d of %,d"
                                + " blocks on disk); reloading with %,d rows", name, opts.dataDir(), t.rows(), t.shape().shapeName(),
                                t.seed(), blocks, t.blocks(), rows));
                        tables.drop(name);
                        t = null;
                    }
                }
                if (t == null) {
                    long total = shape.blocksFor(rows) * (long) StorageManager.BLCKSZ;
                    progress.line(String.format(Locale.ROOT, "drill: loading %s (%,d rows, %s) into %s", name, rows,
                            Drill.mb(total), opts.dataDir()));
                    long[] next = {0};
                    long t0 = System.nanoTime();
                    var r = tables.load(name, shape, rows, opts.seed(), (done, all, bytes, ns) -> {
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
                            t.blocks(), Drill.mb(t.blocks() * (long) StorageManager.BLCKSZ)));
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
                            t.blocks(), Drill.mb(t.blocks() * (long) StorageManager.BLCKSZ),
                            idx == null ? "" : String.format(Locale.ROOT, ", index %s of %,d blocks", idx.name(), idx.blocks()),
                            opts.dataDir()));
                }
                return new Loaded(t, reused, nanos);
            } finally {
                pool.close();
            }
        }
    }
}
