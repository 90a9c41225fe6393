package org.pageio.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.table.engine.TableEngine;
import org.pageio.shell.command.Commands;

/**
 * The table commands as a person types them, through Gogo's real command processor (its argument
 * coercion included) over a real buffer manager and table engine on files: a bad option is one
 * line naming the option, its range and the usage, and nothing is created.
 */
class TableCommandsTest {

    static final String LOAD_USAGE = "; usage: pageio:load [--shape t|prefetch_test] [--rows N] [--seed N]"
            + " [--sink bulk|direct|buffered] NAME";

    @TempDir
    Path dir;

    private BufferManagerCore bufmgr;
    private TableEngine engine;
    private ThreadIOImpl threadIo;
    private CommandProcessorImpl gogo;

    @BeforeEach
    void start() throws Exception {
        bufmgr = BufferManagerCore.open(dir, new BufMgrSettings.Builder().sharedBuffers(256).maxSessions(4).build(),
                new SyncIoMethod());
        engine = new TableEngine(bufmgr.pool());
        threadIo = new ThreadIOImpl();
        threadIo.start();
        gogo = new CommandProcessorImpl(threadIo);
        gogo.addCommand(Commands.PAGEIO, new TableCommands(engine), "load");
        gogo.addCommand(Commands.PAGEIO, new TableCommands(engine), "scan");
        gogo.addCommand(Commands.PAGEIO, new TableCommands(engine), "tables");
        gogo.addCommand(Commands.PAGEIO, new TableCommands(engine), "delete");
        gogo.addCommand(Commands.PAGEIO, new TableCommands(engine), "update");
        gogo.addCommand(Commands.PAGEIO, new TableCommands(engine), "index");
        gogo.addCommand(Commands.PAGEIO, new TableCommands(engine), "vacuum");
    }

    @AfterEach
    void stop() throws Exception {
        gogo.stop();
        threadIo.stop();
        bufmgr.close();
    }

    private Object run(String line) throws Exception {
        PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        try (CommandSession s = gogo.createSession(InputStream.nullInputStream(), out, out)) {
            return s.execute(line);
        }
    }

    private String refused(String line) {
        Exception e = assertThrows(Exception.class, () -> run(line), line);
        String m = e.getMessage();
        assertEquals(1, m.lines().count(), m);
        return m;
    }

    @Test
    void rowsThatAreNotAPositiveWholeNumberAreRefusedNamingTheOptionAndNothingIsLoaded() throws Exception {
        assertEquals("pageio:load: --rows takes a whole number of rows, 1 or more (got \"abc\")" + LOAD_USAGE,
                refused("pageio:load --rows abc t"));
        assertEquals("pageio:load: --rows takes a whole number of rows, 1 or more (got \"-1\")" + LOAD_USAGE,
                refused("pageio:load --rows -1 t"));
        assertEquals("pageio:load: --rows takes a whole number of rows, 1 or more (got \"0\")" + LOAD_USAGE,
                refused("pageio:load --rows 0 t"));
        assertEquals("pageio:load: --rows takes a whole number of rows, 1 or more (got \"1.5\")" + LOAD_USAGE,
                refused("pageio:load -r 1.5 t"));
        assertEquals("pageio:load: --seed takes a whole number (got \"x\")" + LOAD_USAGE,
                refused("pageio:load --rows 10 --seed x t"));
        assertEquals(List.of(), engine.tables(), "nothing was created");

        String loaded = String.valueOf(run("pageio:load --rows 100 --seed -7 t"));
        assertTrue(loaded.startsWith("loaded 100 rows into t"), loaded);
        assertEquals(100, engine.table("t").rows());
        assertEquals(-7, engine.table("t").seed());
    }

    /** pageio:tables shows pg_visibility_map_summary's all_visible and all_frozen: a loaded table has every page in both. */
    @Test
    void tablesShowTheVisibilityMapSummary() throws Exception {
        run("pageio:load --rows 1000 --shape prefetch_test t");
        long blocks = engine.table("t").blocks();
        String text = String.valueOf(run("pageio:tables"));
        List<String> lines = text.lines().toList();
        assertEquals("table | shape | relation | rows | n_live_tup | n_dead_tup | blocks | all_visible | all_frozen | indexes",
                lines.get(0).replaceAll(" +", " ").strip(), text);
        String row = lines.get(2).replaceAll(" +", " ").strip();
        assertTrue(row.startsWith("t | t (id int, cat int, val int, payload text) | ")
                && row.endsWith(" | 1000 | 1000 | 0 | " + blocks + " | " + blocks + " | " + blocks + " |"), "[" + row + "] " + blocks);
        String json = String.valueOf(run("pageio:tables --format json"));
        assertTrue(json.contains("\"all_visible\"") && json.contains("\"all_frozen\""), json);
    }

    @Test
    void aLimitOfNoRowsIsRefusedInsteadOfRunningAnIndexScan() throws Exception {
        run("pageio:load --rows 100 t");
        assertEquals("scan limit: N takes a whole number of rows, 1 or more (got 0); usage: limit T COLUMN LO N",
                refused("pageio:scan limit t id 1 0"));
        assertEquals("scan limit: N takes a whole number of rows, 1 or more (got -3); usage: limit T COLUMN LO N",
                refused("pageio:scan limit t id 1 -3"));
    }

    /** pageio:delete as typed: each WHERE form through Gogo's parser, DELETE n, scans agreeing after; refusals in one line. */
    @Test
    void deleteTakesTheWhereFormsAndPrintsDeleteN() throws Exception {
        run("pageio:load --rows 1000 --shape prefetch_test p");
        run("pageio:index p val");
        assertEquals("DELETE 200", String.valueOf(run("pageio:delete p WHERE id '%' 5 = 0")));
        assertEquals("DELETE 0", String.valueOf(run("pageio:delete p where 'id % 5 = 0'")));
        assertEquals("DELETE 0", String.valueOf(run("pageio:delete p WHERE id mod 5 = 0")));
        assertEquals("DELETE 8", String.valueOf(run("pageio:delete p WHERE id BETWEEN 1 AND 10")));
        assertEquals("DELETE 1", String.valueOf(run("pageio:delete p WHERE id = 11")));
        assertEquals("DELETE 0", String.valueOf(run("pageio:delete p WHERE payload LIKE '%zzz%'")));
        String count = String.valueOf(run("pageio:scan count p"));
        assertTrue(count.contains("count=791 "), count);
        String index = String.valueOf(run("pageio:scan index p val 0 100000"));
        assertTrue(index.contains("count=791 "), index);
        String bitmap = String.valueOf(run("pageio:scan bitmap p val 0 100000"));
        assertTrue(bitmap.contains("count=791 "), bitmap);

        assertTrue(refused("pageio:delete q WHERE id 1 2").startsWith("table \"q\" does not exist"));
        assertEquals("table p has no column \"nope\"; its columns are id, cat, val, payload", refused("pageio:delete p WHERE nope 1 2"));
        assertEquals("pageio:delete: bad WHERE \"WHERE id is 3\"; the forms: " + org.pageio.table.RowFilter.USAGE,
                refused("pageio:delete p WHERE id is 3"));
        assertEquals("pageio:delete: expected WHERE and a condition; the forms: " + org.pageio.table.RowFilter.USAGE,
                refused("pageio:delete p"));
        String row = String.valueOf(run("pageio:tables")).lines().toList().get(2).replaceAll(" +", " ");
        assertTrue(row.contains(" | 1000 | 791 | 209 | "), "n_live_tup and n_dead_tup: " + row);
        String help = String.valueOf(run("pageio:delete --help"));
        assertTrue(help.contains("usage: pageio:delete TABLE WHERE"), help);
    }

    /**
     * pageio:update as typed: a heap-only update on the half-empty last page prints UPDATE n; rows on
     * full pages and an indexed column are updated too (new versions moved, new index entries).
     */
    @Test
    void updateSetsAColumnOrSaysWhyNot() throws Exception {
        run("pageio:load --rows 1000 --shape prefetch_test p"); // rows 988..1000 on the last page
        run("pageio:index p val");
        assertEquals("UPDATE 5", String.valueOf(run("pageio:update p SET cat = cat + 1000 WHERE id BETWEEN 990 AND 994")));
        assertEquals("UPDATE 1", String.valueOf(run("pageio:update p SET cat = 7 where id = 995")));
        String count = String.valueOf(run("pageio:scan index p val 0 100000"));
        assertTrue(count.contains("count=1000 "), count);
        String row = String.valueOf(run("pageio:tables")).lines().toList().get(2).replaceAll(" +", " ");
        assertTrue(row.contains(" | 1000 | 1000 | 6 | "), "an update leaves as many live rows and one dead version each: " + row);
        assertEquals("UPDATE 10", String.valueOf(run("pageio:update p SET cat = 1 WHERE id 1 10")), "moved off a full page");
        assertEquals("UPDATE 10", String.valueOf(run("pageio:update p SET val = 60000 WHERE id 1 10")), "an indexed column");
        count = String.valueOf(run("pageio:scan index p val 60000 60000"));
        assertTrue(count.contains("count=10 "), count);
        assertEquals("pageio:update: bad SET \"SET cat 1\"; the forms: " + org.pageio.table.SetClause.USAGE,
                refused("pageio:update p SET cat 1 WHERE id 1 10"));
        assertEquals("pageio:update: expected WHERE and a condition; the forms: " + org.pageio.table.RowFilter.USAGE,
                refused("pageio:update p SET cat = 1"));
        String help = String.valueOf(run("pageio:update --help"));
        assertTrue(help.contains("usage: pageio:update TABLE SET"), help);
    }

    /** pageio:vacuum as typed: one summary line, VACUUM VERBOSE's report, FREEZE, a refusal. */
    @Test
    void vacuumReportsWhatItDidAsVacuumVerbose() throws Exception {
        run("pageio:load --rows 1000 --shape prefetch_test p");
        run("pageio:index p val");
        assertEquals("DELETE 200", String.valueOf(run("pageio:delete p WHERE 'id % 5 = 0'")));
        String plain = String.valueOf(run("pageio:vacuum p"));
        assertTrue(plain.startsWith("VACUUM p: 22 of 22 pages scanned, 200 tuples removed, 22 pages set all-visible"), plain);
        run("pageio:delete p WHERE id BETWEEN 1 AND 4");
        String verbose = String.valueOf(run("pageio:vacuum --verbose --set maintenance_io_concurrency=4,track_io_timing=on p"));
        assertTrue(verbose.contains("INFO:  finished vacuuming \"p\": index scans: 1"), verbose);
        assertTrue(verbose.contains("tuples: 4 removed, 796 remain, 0 are dead but not yet removable"), verbose);
        assertTrue(verbose.contains("index \"p_val_idx\": pages: "), verbose);
        assertTrue(verbose.contains("I/O timings: read: "), verbose);
        assertTrue(verbose.contains("buffer usage: "), verbose);
        String noRing = String.valueOf(run("pageio:vacuum --buffer-usage-limit 0 p"));
        assertTrue(noRing.startsWith("VACUUM p: 22 of 22 pages scanned, 0 tuples removed"), noRing); // a run under 32 pages is read, not skipped
        assertTrue(refused("pageio:vacuum --buffer-usage-limit 64kB p").startsWith(
                "pageio:vacuum: BUFFER_USAGE_LIMIT = 64kB is out of range: valid values are 0 (no ring) or 128kB .. 16GB"));
        String frozen = String.valueOf(run("pageio:vacuum --freeze p"));
        assertTrue(frozen.startsWith("VACUUM p: "), frozen);
        String row = String.valueOf(run("pageio:tables")).lines().toList().get(2).replaceAll(" +", " ");
        assertTrue(row.contains(" | 796 | 0 | 22 | 22 | 22 | "), "n_live_tup, n_dead_tup, blocks, all_visible, all_frozen: " + row);
        assertTrue(refused("pageio:vacuum q").startsWith("table \"q\" does not exist"));
        assertTrue(String.valueOf(run("pageio:vacuum --help")).contains("usage: pageio:vacuum [--freeze] [--verbose]"));
    }
}
