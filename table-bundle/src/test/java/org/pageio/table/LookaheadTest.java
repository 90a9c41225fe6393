package org.pageio.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.table.engine.TableEngine;

/**
 * PostgreSQL 19's read-stream look-ahead shapes (PostgreSQL 18 against 19), on real files with a cold pool and reads that take 2 ms
 * on their own threads (so they are really in flight, as with io_method=worker on a disk).
 */
class LookaheadTest {

    static final int ROWS = 20_000; // 426 blocks of prefetch_test
    static final long SEED = 42;

    @TempDir
    Path dir;

    private record Env(BufferManagerCore bufmgr, BufferPool pool, TableEngine engine) implements AutoCloseable {
        @Override
        public void close() {
            bufmgr.close();
        }
    }

    /** A pool that holds the whole table, with room for a deep look-ahead (2 sessions × 1024 pins). */
    private static final BufMgrSettings SETTINGS = new BufMgrSettings.Builder().sharedBuffers(2048).maxSessions(2)
            .segmentBlocks(100).build();

    private Env env(IoMethod m) throws Exception {
        BufferManagerCore bufmgr = BufferManagerCore.open(dir, SETTINGS, m);
        return new Env(bufmgr, bufmgr.pool(), new TableEngine(bufmgr.pool()));
    }

    private void load(String... indexes) throws Exception {
        try (Env e = env(new SyncIoMethod())) {
            e.engine.load("prefetch_test", TableShape.PREFETCH_TEST, ROWS, SEED, null);
            for (String c : indexes) {
                e.engine.createIndex("prefetch_test", c);
            }
        }
    }

    /** One scan on a fresh (cold) pool whose reads take 2 ms each. */
    private ScanReport coldScan(ScanRequest req, String set) throws Exception {
        try (SlowMethod slow = new SlowMethod(16, 2); Env e = env(slow)) {
            ScanReport r = e.engine.scan(req.with(ScanSettings.parse(set)));
            assertEquals(0, e.pool.pinnedBuffers(), "no pin left behind");
            return r;
        }
    }

    /**
     * Index scan in heap order (an index on {@code id}: each heap block comes back 47 times in a
     * row, then the next block): 46 hits between misses. PostgreSQL 18's distance doubles on each
     * read and drops by one on each hit, so it is back at 1 long before the next block: every read
     * starts only when the scan reaches it, one at a time. PostgreSQL 19 holds the distance after
     * an I/O ({@code max_pinned_buffers} hits of hold-off) and grows it on each wait, so the
     * look-ahead reaches the next blocks and keeps several I/Os in progress.
     */
    @Test
    void pg19KeepsMoreIoInFlightThanPg18OnAnIndexScanWithRepeatedHeapBlocks() throws Exception {
        load("id");
        ScanRequest req = ScanRequest.index("prefetch_test", "id", 1, ROWS);
        ScanReport pg18 = coldScan(req, "effective_io_concurrency=4,read_stream_lookahead=pg18");
        ScanReport pg19 = coldScan(req, "effective_io_concurrency=4,read_stream_lookahead=pg19");
        long blocks = TableShape.PREFETCH_TEST.blocksFor(ROWS);
        for (ScanReport r : new ScanReport[] {pg18, pg19}) {
            assertEquals(ROWS, r.count(), "every row, in both");
            assertEquals(blocks, r.stream().readBlocks(), "each heap block read once: " + r.stream());
            assertEquals(ROWS, r.stream().hits() + r.stream().readBlocks(), "a heap block asked for per row: " + r.stream());
        }
        StreamFigures a = pg18.stream();
        StreamFigures b = pg19.stream();
        assertTrue(a.avgInProgress() < 1.2 && a.avgPrefetch() < 2, "pg18's distance decays to 1 on the hits: " + a);
        assertTrue(b.avgInProgress() > a.avgInProgress() + 1.5, "pg19 keeps more I/O in flight: pg18 " + a.ioLine()
                + ", pg19 " + b.ioLine());
        assertTrue(b.avgPrefetch() > 10 * a.avgPrefetch(), "pg19 holds its distance: pg18 " + a.prefetchLine() + ", pg19 "
                + b.prefetchLine());
        String text = pg19.explain(true, true, true, "text");
        assertTrue(text.contains("Index Scan using prefetch_test_id_idx on prefetch_test") && text.contains("I/O: count="), text);
    }

    /** {@code io_combine_limit=16}, {@code effective_io_concurrency=1}: a cold sequential scan still reads in large pieces. */
    @Test
    void readsCombineAtEffectiveIoConcurrencyOne() throws Exception {
        load();
        for (String la : new String[] {"pg18", "pg19"}) {
            try (SlowMethod slow = new SlowMethod(4, 2); Env e = env(slow)) {
                ScanReport r = e.engine.scan(ScanRequest.count("prefetch_test")
                        .with(ScanSettings.parse("effective_io_concurrency=1,io_combine_limit=16,read_stream_lookahead=" + la)));
                assertEquals(ROWS, r.count());
                long reads = 0;
                long bytes = 0;
                for (StatIo.Row row : e.pool.stats().rows()) {
                    reads += row.value(StatIo.Column.READS);
                    bytes += row.value(StatIo.Column.READ_BYTES);
                }
                double perRead = (double) bytes / reads;
                assertEquals(TableShape.PREFETCH_TEST.blocksFor(ROWS) * 8192L, bytes, "every block read once");
                assertTrue(perRead > 8 * 8192, la + ": stat_io bytes per read " + perRead + " (" + r.stream().ioLine() + ")");
                assertTrue(r.stream().avgIoSize() > 8, la + ": " + r.stream().ioLine());
            }
        }
    }
}
