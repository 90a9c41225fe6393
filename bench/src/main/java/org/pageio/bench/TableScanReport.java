package org.pageio.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.measure.cache.ColdCache;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.method.worker.WorkerIoMethod;
import org.pageio.method.worker.WorkerSettings;
import org.pageio.table.LoadResult;
import org.pageio.table.ScanReport;
import org.pageio.table.ScanRequest;
import org.pageio.table.ScanSettings;
import org.pageio.table.TableInfo;
import org.pageio.table.TableShape;
import org.pageio.table.engine.TableEngine;

/**
 * The table bundle's report figures (not a JMH benchmark: each figure is one cold run):
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -cp bench/target/benchmarks.jar org.pageio.bench.TableScanReport DIR [T_ROWS] [PT_ROWS]
 * </pre>
 * loads {@code t} (T_ROWS, default 2,000,000 = 485 MB) and {@code prefetch_test} (PT_ROWS,
 * default 1,200,000 = 200 MB) into DIR, prints the loader's throughput, then runs each scan on a
 * fresh pool with the relation evicted from the page cache (fdatasync + POSIX_FADV_DONTNEED, proven
 * 0% resident by {@link ColdCache}) and
 * prints its EXPLAIN and stat_io bytes per read — among them the index scan in heap order (index on
 * {@code id}) with {@code read_stream_lookahead} pg18 and pg19. Deletes DIR's relation files at the end.
 */
public final class TableScanReport {

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args.length > 0 ? args[0] : "/tmp/pageio-table-report");
        long tRows = args.length > 1 ? Long.parseLong(args[1]) : 2_000_000;
        long ptRows = args.length > 2 ? Long.parseLong(args[2]) : 1_200_000;
        Files.createDirectories(dir);
        BufMgrSettings base = new BufMgrSettings.Builder().build();
        try {
            TableInfo pt;
            try (Env env = new Env(dir, new SyncIoMethod(), base)) {
                if (tRows > 0) {
                    LoadResult r = env.engine.load("t", TableShape.T, tRows, 1, (done, total, bytes, nanos) -> { });
                    System.out.println(r);
                    env.engine.drop("t");
                }
                LoadResult r = env.engine.load("prefetch_test", TableShape.PREFETCH_TEST, ptRows, 1, null);
                System.out.println(r);
                long t0 = System.nanoTime();
                env.engine.createIndex("prefetch_test", "val");
                System.out.printf(Locale.ROOT, "index on val built in %.2f s%n", (System.nanoTime() - t0) / 1e9);
                env.engine.createIndex("prefetch_test", "id");
                pt = env.engine.table("prefetch_test");
            }
            run(dir, "sync", base, pt, ScanRequest.filter("prefetch_test", "payload", "%zzz%"), "");
            run(dir, "sync", base, pt, ScanRequest.filter("prefetch_test", "payload", "%zzz%"),
                    "effective_io_concurrency=1,io_combine_limit=16");
            run(dir, "worker", base, pt, ScanRequest.filter("prefetch_test", "payload", "%zzz%"),
                    "effective_io_concurrency=1,io_combine_limit=16");
            run(dir, "worker", base, pt, ScanRequest.bitmap("prefetch_test", "val", 2000, 2150), "effective_io_concurrency=32");
            for (String la : new String[] {"pg18", "pg19"}) {
                run(dir, "worker", base, pt, ScanRequest.index("prefetch_test", "val", 0, 3000),
                        "effective_io_concurrency=32,read_stream_lookahead=" + la);
            }
            // heap blocks repeated 47 times in a row (index in heap order), 46 hits between misses:
            // pg18's distance decays to 1 on the hits, pg19 holds it (PostgreSQL 19's shape)
            for (String la : new String[] {"pg18", "pg19"}) {
                run(dir, "worker", base, pt, ScanRequest.index("prefetch_test", "id", 1, Math.min(ptRows, 300_000)),
                        "effective_io_concurrency=4,read_stream_lookahead=" + la);
            }
            run(dir, "worker", base, pt, ScanRequest.limit("prefetch_test", "val", 1000, 10), "effective_io_concurrency=64");
            run(dir, "worker", base, pt, ScanRequest.checksums("prefetch_test"), "");
        } finally {
            try (Env env = new Env(dir, new SyncIoMethod(), base)) {
                for (TableInfo t : env.engine.tables()) {
                    env.engine.drop(t.name());
                }
            }
        }
    }

    private static void run(Path dir, String method, BufMgrSettings s, TableInfo pt, ScanRequest req, String set)
            throws Exception {
        IoMethod m = method.equals("sync") ? new SyncIoMethod() : new WorkerIoMethod(WorkerSettings.of(2, 2, 60_000, 100));
        try (Env env = new Env(dir, m, s)) {
            evict(env.engine.heap(pt), pt.blocks());
            for (var i : pt.indexes()) {
                evict(env.engine.indexRelation(i), i.blocks());
            }
            ScanReport r = env.engine.scan(req.with(ScanSettings.parse(set + (set.isEmpty() ? "" : ",") + "track_io_timing=on")));
            System.out.println();
            System.out.println("== " + req.kind().word() + " io_method=" + method + (set.isEmpty() ? "" : " SET " + set));
            System.out.println(r.explain(true, true, true, "text"));
            for (StatIo.Row row : env.pool.stats().rows()) {
                if (row.value(StatIo.Column.READS) > 0) {
                    System.out.printf(Locale.ROOT, "stat_io %s %s: reads=%d read_bytes=%d bytes_per_read=%.0f%n", row.kind(),
                            row.context().label, row.value(StatIo.Column.READS), row.value(StatIo.Column.READ_BYTES),
                            row.bytesPerRead());
                }
            }
        } finally {
            if (m instanceof WorkerIoMethod w) {
                w.close();
            }
        }
    }

    /** Drops the relation's pages from the OS page cache (no root needed). */
    private static void evict(SmgrRelation rel, long blocks) throws Exception {
        ColdCache.requireCold(rel.segmentPaths(blocks)); // proven: 0 pages resident, or one line naming what stayed
    }

    private static final class Env implements AutoCloseable {
        final BufferManagerCore bufmgr;
        final BufferPool pool;
        final TableEngine engine;

        Env(Path dir, IoMethod m, BufMgrSettings s) throws Exception {
            bufmgr = BufferManagerCore.open(dir, s, m);
            pool = bufmgr.pool();
            engine = new TableEngine(pool);
        }

        @Override
        public void close() {
            bufmgr.close();
        }
    }
}
