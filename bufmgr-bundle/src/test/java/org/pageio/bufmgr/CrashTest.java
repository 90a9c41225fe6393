package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.api.AioContext;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.method.sync.SyncIoMethod;

/**
 * The crash test: a child JVM ({@link CrashChild}) loads and modifies a relation, runs a
 * checkpoint, reports success, keeps writing, and is killed with SIGKILL in the middle of its
 * writes. Afterwards a new buffer pool finds every page of the cold half exactly as the
 * checkpoint left it (checksum and content), and no page anywhere that passes its checksum with
 * content that no write ever gave it.
 */
class CrashTest {

    @TempDir
    Path dir;

    @Test
    void pagesCheckpointedBeforeASigkillAreIntactAndNoPageLies() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), CrashChild.class.getName(), dir.toString())
                .redirectErrorStream(true).start();
        List<String> output = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            boolean checkpointed = false;
            int loops = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            String line;
            while ((line = r.readLine()) != null && System.nanoTime() < deadline) {
                output.add(line);
                checkpointed |= line.equals("CHECKPOINT OK");
                if (line.startsWith("LOOP CHECKPOINT") && ++loops == 2) {
                    Thread.sleep(20 + (System.nanoTime() & 0x3F)); // then kill it mid-write
                    break;
                }
            }
            assertTrue(checkpointed && loops == 2, "the child did not get far: " + output);
            child.destroyForcibly(); // SIGKILL
            assertTrue(child.waitFor(30, TimeUnit.SECONDS));
            assertEquals(137, child.exitValue(), "killed by SIGKILL");
        } finally {
            child.destroyForcibly();
        }

        // A new "container": a fresh pool over the same files.
        BufMgrSettings settings = new BufMgrSettings.Builder().sharedBuffers(64).maxSessions(4)
                .segmentBlocks(CrashChild.SEGMENT_BLOCKS).build();
        try (StorageManager smgr = new StorageManager(dir, settings.segmentBlocks(), false);
                AioContext aio = AioContext.create(new SyncIoMethod(), settings.aioConfig());
                BufferPool pool = new BufferPool(settings, smgr, aio, new StatIo());
                Arena arena = Arena.ofConfined()) {
            SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, CrashChild.REL));
            assertEquals(CrashChild.BLOCKS, rel.nblocks());
            int cold = CrashChild.BLOCKS / 2;
            try (BufferSession s = pool.openSession("client");
                    ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, cold), 0, null)) {
                for (long b = 0; b < cold; b++) {
                    int buf = stream.next(); // verifies the checksum on the way in
                    int expected = b % 3 == 0 ? 2 : 1;
                    assertEquals(expected, WriteTestPages.generation(s.page(buf), CrashChild.REL, b, 3), "block " + b);
                    s.releaseBuffer(buf);
                }
            }
            int newer = 0;
            int torn = 0;
            for (long b = cold; b < CrashChild.BLOCKS; b++) {
                MemorySegment page = WriteTestPages.readFromDisk(arena, rel, b);
                if (WriteTestPages.verify(page, b) != null) {
                    torn++; // a torn page is detected by its checksum: allowed, never trusted
                    continue;
                }
                int gen = WriteTestPages.generation(page, CrashChild.REL, b, 3);
                int atCheckpoint = b % 3 == 0 ? 2 : 1;
                assertTrue(gen == atCheckpoint || gen == 3, "block " + b + " passes its checksum with generation " + gen);
                newer += gen == 3 ? 1 : 0;
            }
            assertTrue(newer > 0, "writes after the checkpoint reached the files");
            assertNull(torn > CrashChild.BLOCKS / 2 ? "most hot pages torn: " + torn : null);
        }
    }
}
