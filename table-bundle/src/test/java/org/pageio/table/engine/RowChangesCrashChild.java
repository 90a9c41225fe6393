package org.pageio.table.engine;

import java.nio.file.Path;
import java.util.Random;
import org.pageio.bufmgr.BgWriterSettings;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.table.RowFilter;
import org.pageio.table.ScanRequest;
import org.pageio.table.SetClause;
import org.pageio.table.TableShape;
import org.pageio.table.VacuumOptions;

/**
 * The child JVM of {@link RowChangesCrashTest}, started again and again on one data directory and
 * killed with SIGKILL at a random moment. It opens the engine on what the last one left (no repair
 * step), loads table {@code p} with its two indexes the first time, and then changes rows for ever:
 * deletes, updates that keep their page (HOT) or move rows and add index entries, updates of an
 * indexed column, VACUUM (sometimes FREEZE), and sequential scans (which prune and set the
 * visibility map). A small pool and a busy background writer keep writes in flight throughout.
 * Before each statement it prints {@code BEGIN <what>}; after it, {@code DONE <count(*)>}: on stdout,
 * which the parent watches to time the kill, and appended to a log file, which the parent reads
 * after the kill (a killed process's pipe may lose its last lines; what a {@code write} put in a
 * file is there). Arguments: the data directory, the seed, the log file.
 */
public final class RowChangesCrashChild {

    static final int ROWS = 3_000;
    static final long SEED = 5;

    static BufMgrSettings settings() {
        return new BufMgrSettings.Builder().sharedBuffers(48).maxSessions(8).segmentBlocks(16).build();
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        Random rnd = new Random(Long.parseLong(args[1]));
        log = new java.io.FileOutputStream(args[2], true);
        BufferManagerCore core = BufferManagerCore.open(dir, settings(), new SyncIoMethod());
        core.startBackgroundWriter(new BgWriterSettings(10, 100, 2.0));
        TableEngine engine = new TableEngine(core.pool());
        if (engine.catalog().table("p") == null) {
            engine.load("p", TableShape.PREFETCH_TEST, ROWS, SEED, null);
            engine.createIndex("p", "val");
            engine.createIndex("p", "cat,val");
        }
        say("STARTED");
        for (;;) {
            long a = 1 + rnd.nextInt(ROWS);
            switch (rnd.nextInt(6)) {
                case 0 -> run(engine, "delete", () -> engine.delete("p", RowFilter.range("id", a, a + 19)));
                case 1 -> run(engine, "update in place", () -> engine.update("p", SetClause.parse("SET", "val", "=", "val", "+", "0"),
                        RowFilter.range("id", a, a + 99)));
                case 2 -> run(engine, "update of a key", () -> engine.update("p", SetClause.parse("SET", "val", "=", "val", "+", "1"),
                        RowFilter.range("id", a, a + 39)));
                case 3 -> run(engine, "vacuum", () -> engine.vacuum("p", new VacuumOptions(a % 3 == 0, null)));
                default -> run(engine, "scan", () -> engine.scan(ScanRequest.count("p")));
            }
        }
    }

    private interface Statement {
        Object run() throws Exception;
    }

    private static java.io.FileOutputStream log;

    /** One line to the log file (one {@code write}) and to stdout. */
    private static void say(String line) throws java.io.IOException {
        log.write((line + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        System.out.println(line);
        System.out.flush();
    }

    /** Runs one statement between its BEGIN and DONE lines; DONE carries count(*) by a sequential scan after it. */
    private static void run(TableEngine engine, String what, Statement s) throws Exception {
        say("BEGIN " + what);
        s.run();
        say("DONE " + engine.scan(ScanRequest.count("p")).count());
    }

    private RowChangesCrashChild() {
    }
}
