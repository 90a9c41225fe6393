package org.pageio.measure.drill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.method.sync.SyncIoMethod;

/**
 * The drill's count(*) cases over a heap of a cluster the installed PostgreSQL writes
 * ({@code --pgdata}, {@code --relation}): {@code t} with rows inserted, deleted and rolled back,
 * stopped cleanly; every run's count is PostgreSQL's {@code count(*)}, every cold run is counted, the
 * method and the Java baselines read the whole heap, and the cluster's files are unchanged. Runs the
 * PostgreSQL programs as {@code postgres} when the test runs as root; missing PostgreSQL fails.
 */
class PgDrillTest {

    @TempDir
    Path tmp;

    @Test
    void theCountCasesReadAPostgresqlHeapReadOnly() throws Exception {
        Path root = Files.createTempDirectory("pageio-pgdrill-");
        try {
            Path data = root.resolve("data");
            pg(root, "initdb", "--data-checksums", "--no-sync", "-A", "trust", "-U", "postgres", "-D", data.toString());
            pg(root, "pg_ctl", "start", "-w", "-D", data.toString(), "-l", root.resolve("log").toString(), "-o",
                    "-c listen_addresses='' -k " + root + " -c autovacuum=off");
            pg(root, "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", root.toString(), "-d", "postgres",
                    "-c", "CREATE TABLE t (id bigint, pad text)",
                    "-c", "INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(1, 20000) g",
                    "-c", "DELETE FROM t WHERE id % 4 = 0",
                    "-c", "BEGIN; INSERT INTO t SELECT g, 'a' FROM generate_series(1, 500) g; ROLLBACK");
            String relation = pg(root, "psql", "-X", "-q", "-At", "-h", root.toString(), "-d", "postgres", "-c",
                    "SELECT pg_relation_filepath('t')").strip();
            long count = Long.parseLong(pg(root, "psql", "-X", "-q", "-At", "-h", root.toString(), "-d", "postgres", "-c",
                    "SELECT count(*) FROM t").strip());
            pg(root, "pg_ctl", "stop", "-w", "-m", "fast", "-D", data.toString());
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
        } finally {
            try (Stream<Path> all = Files.walk(root)) {
                for (Path f : all.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(f);
                }
            }
        }
    }

    /** Runs a program of the installed PostgreSQL (as {@code postgres} when root); fails on a non-zero exit. */
    private static String pg(Path root, String program, String... args) throws Exception {
        Path bin;
        try (Stream<Path> versions = Files.list(Path.of("/usr/lib/postgresql"))) {
            bin = versions.filter(v -> v.getFileName().toString().matches("\\d+") && Files.isExecutable(v.resolve("bin/initdb")))
                    .max(Comparator.comparingInt(v -> Integer.parseInt(v.getFileName().toString())))
                    .orElseThrow(() -> new AssertionError("PostgreSQL is not installed: ./pageio test installs it")).resolve("bin");
        }
        List<String> cmd = new ArrayList<>();
        if ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid") == 0) { // PostgreSQL refuses root
            new ProcessBuilder("chown", "postgres", root.toString()).start().waitFor();
            cmd.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        cmd.add(bin.resolve(program).toString());
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile("pgdrill", ".out");
        try {
            Process p = new ProcessBuilder(cmd).directory(root.toFile()).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            int exit = p.waitFor();
            String text = Files.readString(out);
            assertEquals(0, exit, () -> String.join(" ", cmd) + ": " + text);
            return text;
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
