package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.method.sync.SyncIoMethod;

/**
 * Twenty SIGKILLs in a row, at random moments of loads, checkpoints, writes and scans
 * ({@link CrashLoopChild}), on one data directory: after each, a new buffer manager opens it with
 * no repair step; every relation whose checkpoint was reported done reads back whole, every page
 * passing its checksum with the content its load gave it; and on the relation still being written,
 * every page either passes its checksum with content that some write gave it or fails it: a torn
 * page is reported, never trusted. The seed is printed on failure.
 */
class CrashLoopTest {

    static final int KILLS = 20;

    @TempDir
    Path dir;

    @Test
    void twentyKillsInARowLoseNothingReportedDurableAndNoTornPageGoesUnreported() throws Exception {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        List<Long> durable = new ArrayList<>();
        int torn = 0;
        int awaited = 0;
        for (int kill = 0; kill < KILLS; kill++) {
            long first = 100_000L + 1_000L * kill; // a fresh range: a load cut short stays behind, unreported
            int afterDurable = rnd.nextInt(3); // 0: during the first load, its checkpoint, or the start itself
            long delayMs = rnd.nextInt(150);
            String where = "kill " + (kill + 1) + " of " + KILLS + " (seed " + seed + ", " + delayMs + " ms after "
                    + afterDurable + " relation(s) reported durable)";
            List<Long> reported = runAndKill(first, rnd.nextLong(), afterDurable, delayMs, where);
            assertTrue(reported.size() >= afterDurable, where + ": " + reported);
            awaited += afterDurable;
            durable.addAll(reported);
            torn += verify(durable, where);
        }
        assertTrue(durable.size() >= awaited, "relations reported durable: " + durable.size() + " (seed " + seed + ")");
        System.out.println("CrashLoopTest: " + KILLS + " kills, " + durable.size() + " relations reported durable and"
                + " found whole, " + torn + " torn pages found and reported (seed " + seed + ")");
    }

    /**
     * Starts a child, kills it {@code delayMs} after it reported {@code afterDurable} relations
     * durable, returns the relations it reported durable.
     */
    private List<Long> runAndKill(long first, long childSeed, int afterDurable, long delayMs, String where) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), CrashLoopChild.class.getName(), dir.toString(), Long.toString(first),
                Long.toString(childSeed)).redirectErrorStream(true).start();
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
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!seen.contains("STARTED") || seen.stream().filter(l -> l.startsWith("DURABLE ")).count() < afterDurable) {
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
        lines.drainTo(seen);
        List<Long> durable = new ArrayList<>();
        for (String line : seen) {
            if (line.startsWith("DURABLE ")) {
                durable.add(Long.parseLong(line.substring(8)));
            }
        }
        return durable;
    }

    /** Opens a new buffer manager on the directory and checks what the kills left; returns the torn pages found. */
    private int verify(List<Long> durable, String where) throws Exception {
        try (BufferManagerCore core = BufferManagerCore.open(dir, CrashLoopChild.settings(), new SyncIoMethod());
                BufferSession s = core.openSession("client"); Arena arena = Arena.ofConfined()) {
            for (long k : durable) {
                SmgrRelation rel = core.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, k));
                assertEquals(CrashLoopChild.LOAD_BLOCKS, rel.nblocks(), where + ": relation " + k + " reported durable");
                try (ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, CrashLoopChild.LOAD_BLOCKS), 0, null)) {
                    for (long b = 0; b < CrashLoopChild.LOAD_BLOCKS; b++) {
                        int buf = stream.next(); // the read verifies header and checksum: a bad page throws, naming it
                        assertEquals(1, WriteTestPages.generation(s.page(buf), k, b, 1),
                                where + ": block " + b + " of relation " + k + " reported durable");
                        s.releaseBuffer(buf);
                    }
                }
            }
            SmgrRelation hot = core.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, CrashLoopChild.HOT));
            int torn = 0;
            long blocks = Math.min(hot.exists() ? hot.nblocks() : 0, CrashLoopChild.HOT_BLOCKS);
            for (long b = 0; b < blocks; b++) {
                MemorySegment page = WriteTestPages.readFromDisk(arena, hot, b);
                if (WriteTestPages.verify(page, b) != null) {
                    torn++; // its checksum reports it: allowed, never trusted
                    continue;
                }
                int gen = WriteTestPages.generation(page, CrashLoopChild.HOT, b, CrashLoopChild.MAX_GEN);
                boolean empty = page.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0) == 0 && gen < 0; // extended, never written
                assertTrue(gen >= 1 || empty, where + ": block " + b + " of the hot relation passes its checksum with"
                        + " content no write gave it");
            }
            return torn;
        }
    }
}
