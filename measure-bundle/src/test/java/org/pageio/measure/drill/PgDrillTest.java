package org.pageio.measure.drill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.pgdata.PostgresServer;

/**
 * The drill's count(*) cases over a heap of a cluster the installed PostgreSQL writes
 * ({@code --pgdata}, {@code --relation}): {@code t} with rows inserted, deleted and rolled back,
 * stopped cleanly; every run's count is PostgreSQL's {@code count(*)}, every cold run is counted, the
 * method and the Java baselines read the whole heap, and the cluster's files are unchanged. The
 * PostgreSQL is pgdata-bundle's tests' {@code PostgresServer} (missing PostgreSQL fails).
 */
class PgDrillTest {

    @TempDir
    Path tmp;

    @Test
    void theCountCasesReadAPostgresqlHeapReadOnly() throws Exception {
        try (PostgresServer pg = new PostgresServer()) {
            Path data = pg.data;
            pg.initdb();
            pg.start("-c autovacuum=off");
            pg.sql("CREATE TABLE t (id bigint, pad text);"
                    + " INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(1, 20000) g;"
                    + " DELETE FROM t WHERE id % 4 = 0");
            pg.sql("BEGIN; INSERT INTO t SELECT g, 'a' FROM generate_series(1, 500) g; ROLLBACK");
            String relation = pg.sql("SELECT pg_relation_filepath('t')");
            long count = Long.parseLong(pg.sql("SELECT count(*) FROM t"));
            pg.stop("fast");
            byte[] heapBefore = Files.readAllBytes(data.resolve(relation));

            DrillOptions o = new DrillOptions(1, 1, List.of("sync"), List.of(1, 16), 64, tmp.resolve("drill"), null,
                    org.pageio.bufmgr.smgr.StorageManager.DEFAULT_SEGMENT_BLOCKS, 1, DrillOptions.PG_CASES, false, false,
                    org.pageio.table.VacuumOptions.DEFAULT_RING, DrillOptions.DEFAULT_SESSIONS, new DrillOptions.PgSource(data, relation));
            List<String> progress = new ArrayList<>();
            DrillResult r = new Drill(o, Map.of("sync", new SyncIoMethod()), DrillProgress.lines(progress::add)).run();

            assertEquals(15_000, count);
            DrillResult.TableFigures table = r.table("PostgreSQL " + relation);
            assertEquals(count, table.rows());
            assertEquals(Files.size(data.resolve(relation)), table.bytes());
            assertEquals(List.of("seq-cold-eic1", "seq-cold-eic16", "seq-warm"), r.cases().stream().map(c -> c.drillCase().id()).toList());
            for (DrillResult.CaseResult c : r.cases()) {
                assertEquals(List.of("sync", Drill.FILE_CHANNEL, Drill.ASYNC_FILE_CHANNEL), c.series().stream().map(DrillResult.Series::name)
                        .toList());
                for (DrillResult.Series s : c.series()) {
                    Sample x = s.samples().get(0);
                    assertTrue(x.counted(), c.drillCase().id() + " " + s.name() + ": " + x.note());
                    assertEquals(table.bytes(), x.readBytes(), c.drillCase().id() + " " + s.name() + " reads the whole heap");
                }
            }
            assertTrue(progress.stream().anyMatch(l -> l.contains(relation + " in " + data) && l.contains("count(*) = 15,000")), progress
                    .toString());
            String text = new DrillReport(r).text();
            assertTrue(text.contains("count(*) of PostgreSQL's " + relation + ", cold, effective_io_concurrency=16"), text);
            // read-only: the heap is as PostgreSQL left it, and the cluster still starts
            assertTrue(java.util.Arrays.equals(heapBefore, Files.readAllBytes(data.resolve(relation))));

            // only the count(*) cases, and no sequential advice, over a PostgreSQL heap
            IllegalArgumentException bitmap = assertThrows(IllegalArgumentException.class, () -> new DrillOptions(1, 1, List.of(),
                    List.of(1), 64, tmp, null, 128, 1, List.of("bitmap"), false, false, 0, null, new DrillOptions.PgSource(data, relation)));
            assertTrue(bitmap.getMessage().startsWith("--cases: with --pgdata the drill runs the count(*) cases only"), bitmap.getMessage());
        }
    }
}
