package org.pageio.pgdata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.method.worker.WorkerIoMethod;
import org.pageio.method.worker.WorkerSettings;

/**
 * pageio's {@code count(*)} and {@code pg_visibility_map_summary} of a heap against PostgreSQL's, on
 * a cluster the installed PostgreSQL writes (autovacuum off, so nothing changes behind the test): a
 * table shaped like the drill's {@code t} loaded and frozen, then rows deleted, updated, locked
 * (a lock-only multixact among them), inserted and rolled back, inserted in committed and rolled
 * back subtransactions, a plain {@code VACUUM} on the way so that some pages are all-visible and
 * others not, and a prepared transaction left open (its inserts and deletes in progress in
 * {@code pg_xact} after the clean stop). pageio counts first, on pages whose last changes carry no
 * hint bits (so {@code pg_xact} decides them); PostgreSQL then starts, answers {@code count(*)} and
 * the summary, and stops; pageio counts again, now over the hint bits PostgreSQL's scan set. A
 * second table holds a tuple whose xmax is an updating multixact (a row locked by a transaction and
 * updated by its subtransaction): refused, naming it.
 */
class PgHeapScanTest {

    private static PostgresServer pg;
    private static String heapPath;
    private static String multiPath;
    private static PgHeapScan.Count unhinted;
    private static PgVisibilityMap.Summary unhintedMap;
    private static long theirCount;
    private static long theirBlocks;
    private static PgVisibilityMap.Summary theirMap;
    private static int committedXid;
    private static int abortedXid;
    private static int preparedXid;

    @BeforeAll
    static void cluster() throws Exception {
        pg = new PostgresServer();
        pg.initdb();
        pg.start("-c autovacuum=off -c max_prepared_transactions=2");
        pg.sql("CREATE EXTENSION pg_visibility");
        pg.sql("CREATE TABLE t (id bigint, pad text);"
                + " INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(1, 3000) g");
        pg.sql("VACUUM (FREEZE) t"); // every page all-visible and all-frozen
        pg.sql("DELETE FROM t WHERE id <= 300 AND id % 3 = 0;"
                + " UPDATE t SET pad = repeat('u', 200) WHERE id BETWEEN 1000 AND 1100");
        pg.sql("VACUUM t"); // the pages those touched: all-visible again, not all-frozen
        // after the last vacuum: row locks, a lock-only multixact (a share lock, then a subtransaction's)
        pg.sql("BEGIN; SELECT count(*) FROM (SELECT * FROM t WHERE id BETWEEN 2700 AND 2710 FOR UPDATE) l; COMMIT");
        pg.sql("BEGIN; SELECT count(*) FROM (SELECT * FROM t WHERE id BETWEEN 2711 AND 2720 FOR SHARE) l;"
                + " SAVEPOINT s; SELECT count(*) FROM (SELECT * FROM t WHERE id BETWEEN 2711 AND 2720 FOR UPDATE) l; COMMIT");
        // the last scans of t: what they delete and update, and all that follows, carries no hint bits
        pg.sql("DELETE FROM t WHERE id > 2000 AND id % 10 = 0;"
                + " UPDATE t SET pad = repeat('v', 200) WHERE id BETWEEN 1500 AND 2500 AND id % 7 = 0");
        committedXid = Integer.parseUnsignedInt(pg.sql("BEGIN; SELECT pg_current_xact_id();"
                + " INSERT INTO t SELECT g, repeat('n', 200) FROM generate_series(3001, 4000) g; COMMIT"));
        // no more scans: inserts, and deletes by ctid (a TID scan reads only those tuples)
        abortedXid = Integer.parseUnsignedInt(pg.sql("BEGIN; SELECT pg_current_xact_id();"
                + " INSERT INTO t SELECT g, repeat('a', 200) FROM generate_series(5001, 5500) g;"
                + " DELETE FROM t WHERE ctid = ANY (ARRAY['(50,1)', '(50,2)', '(50,3)']::tid[]); ROLLBACK"));
        pg.sql("BEGIN; INSERT INTO t VALUES (7000, 'parent'); SAVEPOINT s1;"
                + " INSERT INTO t SELECT g, 's' FROM generate_series(7001, 7010) g; RELEASE s1; SAVEPOINT s2;"
                + " INSERT INTO t SELECT g, 'r' FROM generate_series(7011, 7020) g; ROLLBACK TO s2; COMMIT");
        preparedXid = Integer.parseUnsignedInt(pg.sql("BEGIN; SELECT pg_current_xact_id();"
                + " INSERT INTO t SELECT g, 'p' FROM generate_series(8001, 8050) g;"
                + " DELETE FROM t WHERE ctid = ANY (ARRAY['(60,1)', '(60,2)', '(60,3)']::tid[]); PREPARE TRANSACTION 'open'"));
        // an updating multixact: a row share-locked by a transaction, then updated by its subtransaction
        pg.sql("CREATE TABLE m (id int, pad text); INSERT INTO m SELECT g, 'm' FROM generate_series(1, 3) g");
        pg.sql("BEGIN; SELECT count(*) FROM (SELECT * FROM m WHERE id = 1 FOR SHARE) l; SAVEPOINT s;"
                + " UPDATE m SET pad = 'updated' WHERE id = 1; COMMIT");
        heapPath = pg.sql("SELECT pg_relation_filepath('t')");
        multiPath = pg.sql("SELECT pg_relation_filepath('m')");
        pg.sql("CHECKPOINT");
        pg.stop("fast");

        try (PgCluster cluster = PgCluster.open(pg.data);
                BufferManagerCore bufmgr = cluster.openBufferManager(new SyncIoMethod(), settings())) {
            unhinted = PgHeapScan.count(cluster, bufmgr.pool(), heapPath);
            unhintedMap = PgVisibilityMap.summary(cluster, bufmgr.pool(), heapPath);
        }

        pg.start("-c autovacuum=off -c max_prepared_transactions=2");
        theirCount = Long.parseLong(pg.sql("SELECT count(*) FROM t"));
        theirBlocks = Long.parseLong(pg.sql("SELECT pg_relation_size('t') / 8192"));
        String[] summary = pg.sql("SELECT all_visible || ' ' || all_frozen FROM pg_visibility_map_summary('t')").split(" ");
        theirMap = new PgVisibilityMap.Summary(Long.parseLong(summary[0]), Long.parseLong(summary[1]));
        assertEquals(String.valueOf(preparedXid), pg.sql("SELECT transaction FROM pg_prepared_xacts WHERE gid = 'open'"));
        pg.sql("CHECKPOINT");
        pg.stop("fast");
    }

    @AfterAll
    static void drop() throws Exception {
        if (pg != null) {
            pg.close();
        }
    }

    private static BufMgrSettings settings() {
        return new BufMgrSettings.Builder().sharedBuffers(256).maxSessions(4).build();
    }

    /** pageio's count, on {@code method}, of {@code relpath}; every heap page came through the pool's reads. */
    private static PgHeapScan.Count count(IoMethod method, String relpath) throws IOException {
        try (PgCluster cluster = PgCluster.open(pg.data);
                BufferManagerCore bufmgr = cluster.openBufferManager(method, settings())) {
            PgHeapScan.Count c = PgHeapScan.count(cluster, bufmgr.pool(), relpath);
            assertEquals(c.blocks() * 8192, bufmgr.stats().total(StatIo.Column.READ_BYTES));
            return c;
        }
    }

    @Test
    void theCountWithoutHintBitsIsPostgresqlsCount() {
        assertEquals(theirCount, unhinted.visible(), unhinted.toString());
        assertEquals(theirBlocks, unhinted.blocks());
        // what the scenario made: some pages all-visible, some not; dead, aborted and in-progress versions
        assertTrue(unhinted.allVisiblePages() > 0 && unhinted.allVisiblePages() < unhinted.blocks(), unhinted.toString());
        assertTrue(unhinted.tuples() > unhinted.visible(), unhinted.toString());
        // the changes after the last read carried no hint bits: pg_xact decided them
        assertTrue(unhinted.commitLogLookups() > 1500, unhinted.toString());
    }

    @Test
    void theCountWithPostgresqlsHintBitsIsTheSame() throws Exception {
        WorkerIoMethod worker = new WorkerIoMethod(WorkerSettings.DEFAULTS);
        try {
            for (IoMethod method : List.<IoMethod>of(new SyncIoMethod(), worker)) {
                PgHeapScan.Count hinted = count(method, heapPath);
                assertEquals(theirCount, hinted.visible(), hinted.toString());
                assertEquals(unhinted.allVisiblePages(), hinted.allVisiblePages());
                // PostgreSQL's count set hint bits on what it decided (and may have pruned dead tuples);
                // the prepared transaction's tuples have none
                assertTrue(hinted.commitLogLookups() < unhinted.commitLogLookups() && hinted.commitLogLookups() > 0,
                        hinted + " after " + unhinted);
            }
        } finally {
            worker.close();
        }
    }

    @Test
    void theVisibilityMapSummaryIsPgVisibilitys() throws Exception {
        assertEquals(theirMap, unhintedMap);
        assertTrue(theirMap.allVisible() > theirMap.allFrozen() && theirMap.allFrozen() > 0
                && theirMap.allVisible() < theirBlocks, theirMap + " of " + theirBlocks + " blocks");
        try (PgCluster cluster = PgCluster.open(pg.data);
                BufferManagerCore bufmgr = cluster.openBufferManager(new SyncIoMethod(), settings())) {
            assertEquals(theirMap, PgVisibilityMap.summary(cluster, bufmgr.pool(), heapPath));
            // a heap without a _vm fork: nothing set, as visibilitymap_get_status answers
            assertEquals(new PgVisibilityMap.Summary(0, 0), PgVisibilityMap.summary(cluster, bufmgr.pool(), multiPath));
        }
    }

    @Test
    void theCommitLogReadsPostgresqlsStatuses() throws Exception {
        CommitLog clog = new CommitLog(pg.data.resolve("pg_xact"));
        assertEquals(CommitLog.TRANSACTION_STATUS_COMMITTED, clog.status(committedXid));
        assertEquals(CommitLog.TRANSACTION_STATUS_ABORTED, clog.status(abortedXid));
        assertEquals(CommitLog.TRANSACTION_STATUS_IN_PROGRESS, clog.status(preparedXid));
        assertTrue(clog.didCommit(committedXid));
        assertFalse(clog.didCommit(abortedXid));
        assertFalse(clog.didCommit(preparedXid));
    }

    @Test
    void anUpdatingMultixactIsRefusedNamingTheTuple() throws Exception {
        PgDataException e = assertThrows(PgDataException.class, () -> count(new SyncIoMethod(), multiPath));
        String file = pg.data.resolve(multiPath).toAbsolutePath().normalize().toString();
        assertTrue(e.getMessage().startsWith("relation " + multiPath + " (file \"" + file + "\"), block 0, item 1: xmax "), e.getMessage());
        assertTrue(e.getMessage().contains("is a MultiXactId (HEAP_XMAX_IS_MULTI) that is not lock-only"), e.getMessage());
    }

    @Test
    void aRelationWithoutAFileIsRefusedNamingIt() throws Exception {
        String gone = heapPath.substring(0, heapPath.lastIndexOf('/') + 1) + "4000000000";
        PgDataException e = assertThrows(PgDataException.class, () -> count(new SyncIoMethod(), gone));
        assertEquals("could not open file \"" + pg.data.resolve(gone).toAbsolutePath().normalize()
                + "\": No such file or directory (relation " + gone + ")", e.getMessage());
    }

    @Test
    void aDamagedHeapPageIsRefusedNotCounted() throws Exception {
        var heap = pg.data.resolve(heapPath);
        long at = 3 * 8192 + 6000;
        byte original = PostgresServer.flip(heap, at, 0x20);
        try {
            PgDataException e = assertThrows(PgDataException.class, () -> count(new SyncIoMethod(), heapPath));
            assertTrue(e.getMessage().startsWith("invalid page in block 3 of relation \""), e.getMessage());
            assertTrue(e.getMessage().contains("page verification failed, calculated checksum"), e.getMessage());
        } finally {
            PostgresServer.restore(heap, at, original);
        }
        assertEquals(theirCount, count(new SyncIoMethod(), heapPath).visible());
    }
}
