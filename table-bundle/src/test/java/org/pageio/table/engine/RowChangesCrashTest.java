package org.pageio.table.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.table.ScanRequest;

/**
 * Twenty SIGKILLs in a row while rows change ({@link RowChangesCrashChild}: deletes, updates in
 * place and to other pages, updates of indexed columns, VACUUM, scans that set the visibility
 * map), on one data directory. After each kill a new engine opens it with no repair step and every
 * plan over the same rows agrees: sequential, bitmap heap, index and index-only scans on
 * {@code val}, and index-only scans on {@code (cat, val)} summed over every {@code cat} (0..100); the count
 * is the one the last finished statement printed, or for a delete cut short, at most that. So the
 * visibility map never claims a page all-visible whose rows the index-only scan would miscount,
 * and no committed change is lost or half seen. The seed is printed on failure.
 */
class RowChangesCrashTest {

    static final int KILLS = 20;

    @TempDir
    Path dir;

    /** The children's log files, outside the data directory. */
    @TempDir
    Path logs;

    @Test
    void twentyKillsWhileRowsChangeLeaveEveryPlanAgreeing() throws Exception {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        long last = RowChangesCrashChild.ROWS;
        int statements = 0;
        for (int kill = 0; kill < KILLS; kill++) {
            int after = 1 + rnd.nextInt(4);
            long delayMs = rnd.nextInt(120);
            String where = "kill " + (kill + 1) + " of " + KILLS + " (seed " + seed + ", " + delayMs + " ms after " + after
                    + " statement(s))";
            List<String> out = runAndKill(rnd.nextLong(), after, delayMs, where);
            String begun = null;
            for (String line : out) {
                if (line.startsWith("BEGIN ")) {
                    begun = line.substring(6);
                } else if (line.startsWith("DONE ")) {
                    last = Long.parseLong(line.substring(5));
                    begun = null;
                    statements++;
                }
            }
            long count = verify(where);
            if ("delete".equals(begun)) {
                assertTrue(count <= last, where + ": count(*) " + count + " after a delete cut short; before it " + last);
                last = count;
            } else {
                assertEquals(last, count, where + ": count(*) after the last finished statement; then " + begun + " was cut");
            }
        }
        System.out.println("RowChangesCrashTest: " + KILLS + " kills over " + statements + " finished statements, every plan"
                + " agreeing after each (seed " + seed + ")");
    }

    /**
     * Runs a child until it finished {@code afterStatements} statements, kills it {@code delayMs}
     * later, and returns its log: the lines it wrote to its log file, which unlike its pipe keeps
     * everything written before the kill.
     */
    private List<String> runAndKill(long childSeed, int afterStatements, long delayMs, String where) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path logFile = Files.createTempFile(logs, "child", ".log");
        Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), RowChangesCrashChild.class.getName(), dir.toString(),
                Long.toString(childSeed), logFile.toString()).redirectErrorStream(true).start();
        LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (IOException e) {
                lines.add("(output lost: " + e + ")");
            }
        }, "crash child output");
        reader.setDaemon(true);
        reader.start();
        List<String> seen = new ArrayList<>();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (!seen.contains("STARTED") || seen.stream().filter(l -> l.startsWith("DONE ")).count() < afterStatements) {
                String line = lines.poll(100, TimeUnit.MILLISECONDS);
                if (line != null) {
                    seen.add(line);
                } else if (!child.isAlive() || System.nanoTime() - deadline > 0) {
                    fail(where + ": the child did not get that far on the data directory the last one left: " + seen);
                }
            }
            Thread.sleep(delayMs);
        } finally {
            child.destroyForcibly(); // SIGKILL
        }
        assertTrue(child.waitFor(30, TimeUnit.SECONDS), where);
        assertEquals(137, child.exitValue(), where + ": killed by SIGKILL; output " + seen);
        reader.join(TimeUnit.SECONDS.toMillis(10));
        return Files.readAllLines(logFile, StandardCharsets.UTF_8);
    }

    /** Opens the directory as the next start would and checks that every plan agrees; returns count(*). */
    private long verify(String where) throws Exception {
        try (BufferManagerCore core = BufferManagerCore.open(dir, RowChangesCrashChild.settings(), new SyncIoMethod())) {
            TableEngine engine = new TableEngine(core.pool());
            long lo = Integer.MIN_VALUE;
            long hi = Integer.MAX_VALUE;
            long seq = engine.scan(ScanRequest.count("p")).count();
            assertEquals(seq, engine.scan(ScanRequest.bitmap("p", "val", lo, hi)).count(), where + ": bitmap heap scan");
            assertEquals(seq, engine.scan(ScanRequest.index("p", "val", lo, hi)).count(), where + ": index scan");
            assertEquals(seq, engine.scan(ScanRequest.indexOnly("p", "val", lo, hi)).count(), where + ": index-only scan (val)");
            long byCat = 0;
            for (long cat = 0; cat <= 100; cat++) {
                byCat += engine.scan(ScanRequest.indexOnly("p", "cat", cat, "val", lo, hi)).count();
            }
            assertEquals(seq, byCat, where + ": index-only scans on (cat, val), summed over cat 0..100");
            return seq;
        }
    }
}
