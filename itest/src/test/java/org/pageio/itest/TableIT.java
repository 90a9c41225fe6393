package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import javax.inject.Inject;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.junit.Test;
import org.pageio.table.TableService;
import org.pageio.table.TableShape;

/**
 * The table commands inside the container, on a small {@code prefetch_test}: load,
 * index, every scan against the generator's own answer, EXPLAIN with and without ANALYZE, the
 * checksum scan naming a flipped block, the catalog listing and drop.
 */
public class TableIT extends PageioTestBase {

    static final long ROWS = 5_000; // 107 blocks
    static final long SEED = 3;

    @Inject
    private CommandProcessor commands;

    @Inject
    private TableService tables;

    @Test
    public void tableCommandsLoadIndexScanExplainVerifyListAndDrop() throws Exception {
        awaitCommand("pageio:tables");
        String t = "table_it";
        String bad = "table_it_bad";
        run("pageio:drop " + t, true);
        run("pageio:drop " + bad, true);
        try {
            String load = run("pageio:load --rows " + ROWS + " --shape prefetch_test --seed " + SEED + " " + t, false);
            assertTrue(load, load.startsWith("loaded 5,000 rows into " + t + ": 107 blocks") && load.endsWith(" (bulk sink)"));
            // the default sink writes through the buffer manager's io_method: bulkwrite extends of the client backend
            String stats = run("pageio:stat_io --format json", false);
            assertTrue(stats, stats.contains("\"context\": \"bulkwrite\""));
            String index = run("pageio:index " + t + " val", false);
            assertTrue(index, index.startsWith("created index " + t + "_val_idx on " + t + " (val): 5,000 entries"));

            assertTrue(run("pageio:scan count " + t, false), run("pageio:scan count " + t, false).contains(": count=5000 in "));
            long ab = countText("ab");
            assertTrue("a selective pattern: " + ab, ab > 0 && ab < ROWS);
            String filter = run("pageio:scan filter " + t + " payload '%ab%'", false);
            assertTrue(filter, filter.contains(": count=" + ab + " in "));
            long vals = countVal(1000, 9000);
            String idx = run("pageio:scan index " + t + " val 1000 9000", false);
            assertTrue(idx, idx.contains(": count=" + vals + " sum(length)=" + vals * 128 + " in "));
            String bitmap = run("pageio:scan --set effective_io_concurrency=4 bitmap " + t + " val 1000 9000", false);
            assertTrue(bitmap, bitmap.contains(": count=" + vals + " in "));
            String limit = run("pageio:scan limit " + t + " val 1000 10", false);
            assertTrue(limit, limit.contains(": 10 rows in "));
            // the index-only scan of a loaded, all-visible table reads no heap page
            String ios = run("pageio:scan ios " + t + " val 1000 9000", false);
            assertTrue(ios, ios.contains(": count=" + vals + " heap_fetches=0 in "));

            String json = run("pageio:explain --analyze --buffers --io --format json --set effective_io_concurrency=8 index " + t
                    + " val 1000 9000", false);
            for (String field : new String[] {"\"Node Type\": \"Aggregate\"", "\"Node Type\": \"Index Scan\"",
                "\"Index Name\": \"" + t + "_val_idx\"", "\"Relation Name\": \"" + t + "\"", "\"Actual Rows\": " + vals + ".00",
                "\"Shared Hit Blocks\": ", "\"Shared Read Blocks\": ", "\"Average Prefetch Distance\": ",
                "\"Prefetch Capacity\": ", "\"I/O Count\": ", "\"Average I/O Size\": ", "\"Average I/Os In Progress\": ",
                "\"Execution Time\": "}) {
                assertTrue(field + " in\n" + json, json.contains(field));
            }
            String text = run("pageio:explain --analyze --buffers count " + t, false);
            assertTrue(text, text.startsWith("Aggregate (actual time=") && text.contains("->  Seq Scan on " + t + " (actual time=")
                    && text.contains("Buffers: shared") && text.contains("Execution Time: "));
            // without ANALYZE nothing runs: the plan's shape only
            String plain = run("pageio:explain bitmap " + t + " val 1000 9000", false);
            assertEquals("Aggregate\n  ->  Bitmap Heap Scan on " + t + "\n        Recheck Cond: ((val >= 1000) AND (val <= 9000))\n"
                    + "        ->  Bitmap Index Scan on " + t + "_val_idx\n"
                    + "              Index Cond: ((val >= 1000) AND (val <= 9000))", plain);
            String noIndex = run("pageio:explain index " + t + " cat 1 2", true);
            assertTrue(noIndex, noIndex.contains("has no index on cat"));

            String list = run("pageio:tables", false);
            assertTrue(list, list.contains(t + " (id ") && list.contains(t + "_val_idx (")
                    && (list.contains(" 5000 ") || list.contains(" 5,000 ")));
            // pg_visibility_map_summary's figures: a loaded table is all-visible and all-frozen
            long blocks = tables.table(t).blocks();
            assertTrue(list, list.lines().findFirst().orElse("").replaceAll(" +", " ")
                    .contains("| blocks | all_visible | all_frozen | indexes"));
            assertTrue(list, list.replaceAll(" +", " ").contains("| " + blocks + " | " + blocks + " | " + blocks + " | " + t + "_val_idx ("));

            long checked = 107 + tables.table(t).index("val").blocks();
            String verifyOk = run("pageio:verify " + t, false);
            assertTrue(verifyOk, verifyOk.startsWith(String.format(java.util.Locale.ROOT,
                    "Checksum scan of %s: %,d blocks checked, bad checksums or headers: 0", t, checked)));
            // a table no scan has touched, so no block of it is in shared buffers: the flip is on disk only
            String wrongSink = run("pageio:load --sink fast --rows " + ROWS + " --shape prefetch_test " + bad, true);
            assertTrue(wrongSink, wrongSink.contains("unknown load sink \"fast\"; valid: bulk, direct, buffered")
                    && !wrongSink.contains("\n"));
            String direct = run("pageio:load --sink direct --rows " + ROWS + " --shape prefetch_test " + bad, false);
            assertTrue(direct, direct.startsWith("loaded 5,000 rows into " + bad + ": 107 blocks") && direct.endsWith(" (direct sink)"));
            long rel = tables.table(bad).relNumber();
            Path file = Path.of(dataDirectory(), "base", Long.toString(rel));
            try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                long pos = 17L * 8192 + 4000;
                f.seek(pos);
                int b = f.read();
                f.seek(pos);
                f.write(b ^ 0x10);
            }
            // damage fails the command (./pageio exec exits 1); the report is printed before
            String verify = run("pageio:verify " + bad, true);
            assertEquals("pageio:verify: " + bad + " has 1 damaged block(s) (bad checksums or headers, listed above)", verify);
            String scanBad = run("pageio:scan count " + bad, true);
            assertTrue(scanBad, scanBad.startsWith("table " + bad + " (relation pg_default/" + rel + "): invalid page in block 17")
                    && !scanBad.contains("\n"));
            assertEquals("dropped " + t, run("pageio:drop " + t, false));
            assertEquals("dropped " + bad, run("pageio:drop " + bad, false));
        } finally {
            run("pageio:drop " + t, true);
            run("pageio:drop " + bad, true);
        }
        String after = run("pageio:tables", false);
        assertFalse(after, after.contains(t));
    }

    // ------------------------------------------------------------------ the generator's answers

    static long countVal(long lo, long hi) {
        long n = 0;
        for (long g = 1; g <= ROWS; g++) {
            long v = TableShape.PREFETCH_TEST.value(2, g, SEED);
            if (v >= lo && v <= hi) {
                n++;
            }
        }
        return n;
    }

    static long countText(String sub) {
        byte[] p = sub.getBytes(StandardCharsets.US_ASCII);
        long n = 0;
        for (long g = 1; g <= ROWS; g++) {
            if (TableShape.PREFETCH_TEST.textContains(g, SEED, p)) {
                n++;
            }
        }
        return n;
    }

    // ------------------------------------------------------------------ helpers

    private CommandSession session() {
        PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        return commands.createSession(InputStream.nullInputStream(), out, out);
    }

    /** The command's result; with {@code failureOk}, a failure's messages ({@code outer <- cause}) instead of a throw. */
    private String run(String command, boolean failureOk) throws Exception {
        try (CommandSession session = session()) {
            return String.valueOf(session.execute(command));
        } catch (Exception e) {
            if (!failureOk) {
                throw e;
            }
            // the messages of the exception and its causes, outermost first
            StringBuilder b = new StringBuilder(String.valueOf(e.getMessage()));
            for (Throwable t = e.getCause(); t != null && t != t.getCause(); t = t.getCause()) {
                b.append(" <- ").append(t.getMessage());
            }
            return b.toString();
        }
    }

    /** Waits until the console bundle's command is registered. */
    private void awaitCommand(String command) throws Exception {
        long deadline = System.nanoTime() + 20_000_000_000L;
        Exception last = null;
        while (System.nanoTime() < deadline) {
            try {
                run(command, false);
                return;
            } catch (Exception e) {
                last = e;
                Thread.sleep(50);
            }
        }
        fail(command + " never became available: " + last);
    }
}
