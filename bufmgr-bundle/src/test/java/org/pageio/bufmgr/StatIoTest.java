package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.bufmgr.stats.StatIo.IoContext;
import org.pageio.bufmgr.stats.StatIo.IoObject;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.method.worker.WorkerIoMethod;
import org.pageio.method.worker.WorkerSettings;

/**
 * stat_io as PostgreSQL 18's pg_stat_io has it, on a real pool over real files: stats_reset per row
 * (the start, then each reset), resets of one object or context, and rows kept per I/O method across a
 * real hot swap from sync to worker.
 */
class StatIoTest extends PoolTestBase {

    private static Instant now() {
        return Instant.now().truncatedTo(ChronoUnit.MICROS);
    }

    /** The one row of (kind, object, context, method), or null. */
    private StatIo.Row row(String kind, IoContext context, String method) {
        StatIo.Row found = null;
        for (StatIo.Row r : pool.stats().rows()) {
            if (r.kind().equals(kind) && r.object() == IoObject.RELATION && r.context() == context
                    && r.ioMethod().equals(method)) {
                assertNull(found, "two rows for " + kind + "/" + context + "/" + method + ": " + pool.stats().rows());
                found = r;
            }
        }
        return found;
    }

    private void scan(BufferSession s, SmgrRelation rel, long relNumber, long first, long count, BufferAccessStrategy ring)
            throws IOException {
        try (ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(first, count), 0, ring)) {
            for (long b = first; b < first + count; b++) {
                int buf = stream.next();
                String wrong = TestPages.check(relNumber, b, s.page(buf));
                s.releaseBuffer(buf);
                assertNull(wrong);
            }
        }
    }

    @Test
    void statsResetIsTheStartThenTheResetThatCoveredTheRow() throws Exception {
        Instant beforeStart = now();
        pool(new SyncIoMethod(), small().build());
        Instant afterStart = now();
        SmgrRelation rel = relation(73000, 64);
        try (BufferSession s = pool.openSession("client")) {
            scan(s, rel, 73000, 0, 16, null);
            scan(s, rel, 73000, 16, 16, pool.strategy(BufferAccessStrategy.Type.BULKREAD));
        }
        StatIo.Row normal = row("client", IoContext.NORMAL, "sync");
        StatIo.Row bulk = row("client", IoContext.BULKREAD, "sync");
        assertEquals(16L * 8192, normal.value(Column.READ_BYTES));
        assertEquals(16L * 8192, bulk.value(Column.READ_BYTES));
        Instant start = normal.statsReset();
        assertEquals(start, bulk.statsReset(), "every row starts at the buffer manager's start");
        assertFalse(start.isBefore(beforeStart) || start.isAfter(afterStart), start + " not in [" + beforeStart + ", "
                + afterStart + "]");

        // pageio's reset of one object and context: only those rows go, only their stats_reset moves
        Instant beforeReset = now();
        Instant at = pool.stats().reset(IoObject.RELATION, IoContext.BULKREAD);
        Instant afterReset = now();
        assertFalse(at.isBefore(beforeReset) || at.isAfter(afterReset), at + " not in [" + beforeReset + ", " + afterReset + "]");
        assertNull(row("client", IoContext.BULKREAD, "sync"), "relation/bulkread zeroed: " + pool.stats().rows());
        assertEquals(normal.value(Column.READ_BYTES), row("client", IoContext.NORMAL, "sync").value(Column.READ_BYTES));
        assertEquals(start, row("client", IoContext.NORMAL, "sync").statsReset());
        assertEquals(at, pool.stats().statsReset(IoObject.RELATION, IoContext.BULKREAD));
        assertEquals(start, pool.stats().statsReset(IoObject.TEMP_RELATION, IoContext.BULKREAD));
        assertEquals(at, pool.stats().lastReset());

        // counted again after it: the row comes back with the reset's time
        try (BufferSession s = pool.openSession("client")) {
            scan(s, rel, 73000, 32, 8, pool.strategy(BufferAccessStrategy.Type.BULKREAD));
        }
        assertEquals(at, row("client", IoContext.BULKREAD, "sync").statsReset());
        assertEquals(8L * 8192, row("client", IoContext.BULKREAD, "sync").value(Column.READ_BYTES));

        // a reset of one context covers every object of it, of every kind and method
        Instant atNormal = pool.stats().reset(null, IoContext.NORMAL);
        assertNull(row("client", IoContext.NORMAL, "sync"));
        assertEquals(atNormal, pool.stats().statsReset(IoObject.TEMP_RELATION, IoContext.NORMAL));
        assertEquals(at, row("client", IoContext.BULKREAD, "sync").statsReset());

        // pg_stat_reset_shared('io'): every counter, every row's stats_reset
        Instant all = pool.stats().reset();
        assertEquals(List.of(), pool.stats().rows());
        for (IoObject o : IoObject.values()) {
            for (IoContext c : IoContext.values()) {
                assertEquals(all, pool.stats().statsReset(o, c), o + "/" + c);
            }
        }
        assertFalse(all.isBefore(atNormal));
    }

    @Test
    void aSwapFromSyncToWorkerKeepsEachMethodsCountsInRowsOfItsOwn() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation before = relation(73100, 24);
        SmgrRelation after = relation(73101, 40);
        WorkerIoMethod worker = new WorkerIoMethod(WorkerSettings.DEFAULTS);
        closeLast.add(worker::close);
        try (BufferSession s = pool.openSession("client")) {
            scan(s, before, 73100, 0, 24, null);
            // the same session across the swap (idle, outside a batch): it rebinds at its next I/O
            core.swapMethod(worker, TimeUnit.SECONDS.toNanos(10));
            assertEquals("worker", pool.method().name());
            scan(s, after, 73101, 0, 40, null);
            scan(s, before, 73100, 0, 4, null); // cached: hits, on the method in force now
            // a change written by the checkpointer after the swap: its writes and fsyncs are worker's
            int buf = s.readBuffer(after, 3, null);
            s.beginModify(buf);
            s.endModify(buf, true);
            s.releaseBuffer(buf);
        }
        pool.checkpoint();
        try (BufferSession s = pool.openSession("client")) { // a session opened after the swap
            scan(s, after, 73101, 0, 1, null);
        }

        StatIo.Row sync = row("client", IoContext.NORMAL, "sync");
        StatIo.Row work = row("client", IoContext.NORMAL, "worker");
        assertEquals(24L * 8192, sync.value(Column.READ_BYTES), "sync read only the relation read before the swap");
        assertEquals(0, sync.value(Column.HITS));
        assertEquals(40L * 8192, work.value(Column.READ_BYTES), "worker read only the one read after it");
        assertEquals(4 + 1 + 1, work.value(Column.HITS), "the hits after the swap: " + work);
        assertEquals(sync.value(Column.READ_BYTES) + work.value(Column.READ_BYTES), total(Column.READ_BYTES),
                "no row mixes methods and none is lost: " + pool.stats().rows());
        StatIo.Row ckpt = row("checkpointer", IoContext.NORMAL, "worker");
        assertEquals(8192, ckpt.value(Column.WRITE_BYTES), "the checkpoint's write: " + pool.stats().rows());
        assertTrue(ckpt.value(Column.FSYNCS) >= 1, ckpt.toString());
        assertNull(row("checkpointer", IoContext.NORMAL, "sync"));
        assertEquals(List.of("sync", "worker"), pool.stats().methods());

        // and back: sync's rows go on from where they were, worker's stay
        core.swapMethod(new SyncIoMethod(), TimeUnit.SECONDS.toNanos(10));
        try (BufferSession s = pool.openSession("client")) {
            pool.evictAll(s);
            scan(s, before, 73100, 0, 8, null);
        }
        assertEquals(32L * 8192, row("client", IoContext.NORMAL, "sync").value(Column.READ_BYTES));
        assertEquals(40L * 8192, row("client", IoContext.NORMAL, "worker").value(Column.READ_BYTES));
        assertEquals(List.of("sync", "worker"), pool.stats().methods(), "a method comes back to its own slot");
    }

    @Test
    void methodsBeyondTheSlotsCountUnderOther() {
        StatIo s = new StatIo();
        int kind = s.kind("client");
        for (int i = 0; i < StatIo.MAX_METHODS + 2; i++) {
            int slot = s.method("m" + i);
            assertEquals(Math.min(i, StatIo.MAX_METHODS - 1), slot, "m" + i);
            s.add(StatIo.base(slot, kind, IoObject.RELATION, IoContext.NORMAL), Column.READS, 1);
        }
        assertEquals(3, s.method("m3"), "a named method keeps its slot");
        assertEquals(StatIo.MAX_METHODS - 1, s.method("m" + (StatIo.MAX_METHODS + 5)));
        List<StatIo.Row> rows = s.rows();
        assertEquals(StatIo.MAX_METHODS, rows.size(), rows.toString());
        assertEquals("m0", rows.get(0).ioMethod());
        assertEquals(StatIo.OTHER_METHOD, rows.get(StatIo.MAX_METHODS - 1).ioMethod());
        assertEquals(3, rows.get(StatIo.MAX_METHODS - 1).value(Column.READS), "m7, m8, m9 share it");
        assertEquals(StatIo.MAX_METHODS + 2, s.total(Column.READS));
        StatIo fresh = new StatIo();
        fresh.add(StatIo.base(fresh.method(null), fresh.kind("client"), IoObject.RELATION, IoContext.NORMAL), Column.HITS, 1);
        assertEquals(StatIo.NO_METHOD, fresh.rows().get(0).ioMethod(), "counted before any method was named");
    }

    @Test
    void statsResetPrintsAsPostgreSqlPrintsATimestamptz() {
        Instant t = Instant.parse("2026-05-01T12:03:07.120431Z");
        assertEquals("2026-05-01 14:03:07.120431+02", StatIo.timestamptz(t, ZoneId.of("Europe/Berlin")));
        assertEquals("2026-05-01 12:03:07.120431+00", StatIo.timestamptz(t, ZoneOffset.UTC));
        assertEquals("2026-05-01 17:33:07.12+05:30",
                StatIo.timestamptz(Instant.parse("2026-05-01T12:03:07.120Z"), ZoneId.of("Asia/Kolkata")));
        assertEquals("2026-01-01 00:00:00-03", StatIo.timestamptz(Instant.parse("2026-01-01T03:00:00Z"), ZoneOffset.ofHours(-3)));
        assertEquals("2026-01-01 03:00:00.000001+00:00:30",
                StatIo.timestamptz(Instant.parse("2026-01-01T02:59:30.000001Z"), ZoneOffset.ofTotalSeconds(30)));
    }

    @Test
    void objectAndContextNamesAreParsedAsPgStatIoShowsThem() {
        assertEquals(IoObject.TEMP_RELATION, IoObject.of("temp relation"));
        assertEquals(IoContext.BULKREAD, IoContext.of("BulkRead"));
        assertEquals("unknown stat_io context 'bulk': use 'normal', 'bulkread', 'bulkwrite', 'vacuum'",
                assertThrows(IllegalArgumentException.class, () -> IoContext.of("bulk")).getMessage());
        assertEquals("unknown stat_io object 'table': use 'relation' or 'temp relation'",
                assertThrows(IllegalArgumentException.class, () -> IoObject.of("table")).getMessage());
    }
}
