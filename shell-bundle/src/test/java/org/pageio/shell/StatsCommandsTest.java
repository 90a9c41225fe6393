package org.pageio.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.report.Json;
import org.pageio.api.AioHandleInfo;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.method.worker.WorkerIoMethod;
import org.pageio.method.worker.WorkerSettings;
import org.pageio.report.StatViews;
import org.pageio.report.TextTable;
import org.pageio.shell.command.Commands;

class StatsCommandsTest {

    /** A timestamptz as PostgreSQL prints it. */
    static final String TIMESTAMPTZ = "\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d(\\.\\d{1,6})?[+-]\\d\\d(:\\d\\d){0,2}";

    @TempDir
    Path dir;

    @Test
    void statIoLikePgStatIoWithMethodStatsResetAndBytesPerRead() {
        StatIo s = new StatIo();
        int base = StatIo.base(s.method("sync"), s.kind("client backend"), StatIo.IoObject.RELATION, StatIo.IoContext.BULKREAD);
        s.add(base, StatIo.Column.READS, 4);
        s.add(base, StatIo.Column.READ_BYTES, 4 * 131072);
        s.add(base, StatIo.Column.READ_TIME, 1_234_567);
        s.add(base, StatIo.Column.HITS, 10);
        String reset = StatIo.timestamptz(s.statsReset(StatIo.IoObject.RELATION, StatIo.IoContext.BULKREAD),
                ZoneId.systemDefault());
        assertTrue(reset.matches(TIMESTAMPTZ), reset);
        TextTable t = StatViews.statIoTable(s.rows());
        String text = t.toString();
        String[] lines = text.split("\n");
        assertEquals(3, lines.length, text);
        assertTrue(lines[0].startsWith("backend_type   | object   | context  | io_method | reads | read_bytes | read_time"
                + " | writes"), text);
        assertTrue(lines[0].endsWith("| fsync_time | stats_reset" + " ".repeat(reset.length() - "stats_reset".length())
                + " | bytes_per_read"), text);
        assertTrue(lines[2].startsWith("client backend | relation | bulkread | sync      |     4 |     524288 |     1.235"
                + " |      0"), text);
        assertTrue(lines[2].endsWith("| " + reset + " |         131072"), text);
        String json = t.toJson();
        assertTrue(json.contains("\"context\": \"bulkread\", \"io_method\": \"sync\", \"reads\": 4, \"read_bytes\": 524288,"
                + " \"read_time\": 1.235"), json);
        assertTrue(json.contains("\"stats_reset\": \"" + reset + "\", \"bytes_per_read\": 131072}"), json);
        s.reset();
        assertEquals(0, StatViews.statIoTable(s.rows()).rowCount());
    }

    /**
     * {@code pageio:stat_io} typed into Gogo's real command processor over a real buffer manager
     * on files, across a real swap from sync to worker: rows per method, stats_reset, the listing
     * and the reset by object and context, text and JSON, and refusals that change nothing.
     */
    @Test
    void theCommandListsRowsPerMethodAndResetsByObjectAndContext() throws Exception {
        WorkerIoMethod worker = new WorkerIoMethod(WorkerSettings.DEFAULTS);
        ThreadIOImpl threadIo = new ThreadIOImpl();
        threadIo.start();
        CommandProcessorImpl gogo = new CommandProcessorImpl(threadIo);
        try (BufferManagerCore bufmgr = BufferManagerCore.open(dir,
                new BufMgrSettings.Builder().sharedBuffers(64).maxSessions(4).build(), new SyncIoMethod())) {
            gogo.addCommand(Commands.PAGEIO, new StatsCommands(bufmgr), "stat_io");
            try (BufferSession s = bufmgr.pool().openSession("client")) {
                SmgrRelation rel = WrittenRelation.create(bufmgr, s, 16384, 16);
                BufferAccessStrategy ring = bufmgr.pool().strategy(BufferAccessStrategy.Type.BULKREAD);
                for (int b = 0; b < 8; b++) {
                    s.releaseBuffer(s.readBuffer(rel, b, ring));
                }
                bufmgr.swapMethod(worker, TimeUnit.SECONDS.toNanos(10));
                for (int b = 8; b < 16; b++) {
                    s.releaseBuffer(s.readBuffer(rel, b, null));
                }
            }
            Instant start = bufmgr.stats().statsReset(StatIo.IoObject.RELATION, StatIo.IoContext.NORMAL);
            String started = StatIo.timestamptz(start, ZoneId.systemDefault());

            String text = run(gogo, "pageio:stat_io");
            List<String> lines = text.lines().toList();
            assertTrue(lines.get(0).startsWith("backend_type | object   | context  | io_method | reads |"), text);
            assertTrue(lines.stream().anyMatch(
                    l -> l.matches("client +\\| relation \\| bulkread \\| sync +\\| +8 \\| +65536 \\|.*")), text);
            assertTrue(lines.stream().anyMatch(
                    l -> l.matches("client +\\| relation \\| normal +\\| worker +\\| +8 \\| +65536 \\|.*")), text);
            assertTrue(lines.stream().skip(2).allMatch(l -> l.contains("| " + started + " |")), text);

            String json = run(gogo, "pageio:stat_io --format json");
            assertTrue(json.contains("{\"backend_type\": \"client\", \"object\": \"relation\", \"context\": \"normal\","
                    + " \"io_method\": \"worker\", \"reads\": 8, \"read_bytes\": 65536,"), json);
            assertTrue(json.contains("\"stats_reset\": \"" + started + "\""), json);

            String bulk = run(gogo, "pageio:stat_io --context bulkread");
            assertEquals(3, bulk.lines().count(), bulk);
            assertTrue(bulk.contains("| bulkread | sync "), bulk);

            // refused before anything changes: one line naming what is valid
            assertEquals("unknown stat_io context 'bulk': use 'normal', 'bulkread', 'bulkwrite', 'vacuum'",
                    refused(gogo, "pageio:stat_io --reset --context bulk"));
            assertEquals("unknown stat_io object 'table': use 'relation' or 'temp relation'",
                    refused(gogo, "pageio:stat_io --reset --object table --context bulkread"));
            assertEquals("unknown format 'xml': use text or json", refused(gogo, "pageio:stat_io --reset -f xml"));
            assertEquals(text, run(gogo, "pageio:stat_io"));

            // pageio's reset of one object and context: says when, lists nothing; the other rows stay
            String outcome = run(gogo, "pageio:stat_io --reset --object relation --context bulkread");
            assertTrue(outcome.matches("stat_io reset: the rows of object relation, context bulkread, stats_reset "
                    + TIMESTAMPTZ), outcome);
            String after = run(gogo, "pageio:stat_io");
            assertFalse(after.contains("bulkread"), after);
            assertTrue(after.lines().anyMatch(l -> l.matches("client +\\| relation \\| normal +\\| worker +\\| +8 \\| .*\\| "
                    + java.util.regex.Pattern.quote(started) + " \\| .*")), after);
            assertEquals(StatIo.timestamptz(bufmgr.stats().statsReset(StatIo.IoObject.RELATION, StatIo.IoContext.BULKREAD),
                    ZoneId.systemDefault()), outcome.substring(outcome.indexOf("stats_reset ") + "stats_reset ".length()));

            // pg_stat_reset_shared('io'), as JSON
            String all = run(gogo, "pageio:stat_io --reset --format json");
            assertTrue(all.matches("\\{\"reset\": \"io\", \"object\": null, \"context\": null, \"stats_reset\": \""
                    + TIMESTAMPTZ + "\"}"), all);
            assertEquals("[]", run(gogo, "pageio:stat_io -f json").strip());
        } finally {
            gogo.stop();
            threadIo.stop();
            worker.close();
        }
    }

    private static String run(CommandProcessorImpl gogo, String line) throws Exception {
        PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        try (CommandSession s = gogo.createSession(InputStream.nullInputStream(), out, out)) {
            return String.valueOf(s.execute(line));
        }
    }

    private static String refused(CommandProcessorImpl gogo, String line) {
        Exception e = assertThrows(Exception.class, () -> run(gogo, line), line);
        return e.getMessage();
    }

    @Test
    void aiosLikePgAios() {
        AioHandleInfo h = new AioHandleInfo(2, 17, 5, "SUBMITTED", "readv", 454_295_552L, 131072,
                "blocks 55455..55470 of 1663/5/16384", 0, "UNKNOWN", false, false, false);
        AioHandleInfo done = new AioHandleInfo(1, 3, 9, "COMPLETED_SHARED", "readv", 0, 8192, "block 0", 8192, "OK",
                true, false, false);
        TextTable t = StatViews.aiosTable(List.of(h, done));
        String[] lines = t.toString().split("\n");
        assertTrue(lines[0].startsWith("session | io_id | io_generation | state"), lines[0]);
        assertTrue(lines[2].contains("COMPLETED_SHARED") && lines[2].contains("| OK "), lines[2]);
        assertTrue(lines[3].contains("| SUBMITTED        | readv     | 454295552 | 131072 | blocks 55455..55470"), lines[3]);
        assertTrue(t.toJson().contains("\"raw_result\": 0, \"result\": null, \"f_sync\": false"), t.toJson());
    }

    @Test
    void formatIsTextOrJson() {
        assertEquals(false, Json.requested("TEXT"));
        assertEquals(true, Json.requested("json"));
        assertEquals("unknown format 'xml': use text or json",
                org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                        () -> Json.requested("xml")).getMessage());
    }
}
