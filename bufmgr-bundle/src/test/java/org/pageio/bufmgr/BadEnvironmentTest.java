package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.method.sync.SyncIoMethod;

/**
 * Real bad environments, made by the test on this machine: a full file system (a small tmpfs), a
 * read-only one (the same, remounted read-only: it stops root too), a segment file replaced by a
 * directory, a missing middle segment. Each gives one message naming the file and what went
 * wrong, loses nothing that was acknowledged, and leaves the rest of the data readable.
 */
class BadEnvironmentTest {

    private final List<Path> mounts = new ArrayList<>();
    private BufferManagerCore core;

    @AfterEach
    void tearDown() throws Exception {
        if (core != null) {
            core.close();
        }
        for (Path m : mounts) {
            run("umount", m.toString());
        }
    }

    /** A tmpfs of {@code kib} KiB, mounted for this test (this machine kind lets root mount). */
    private Path tmpfs(int kib) throws Exception {
        Path dir = Files.createTempDirectory("pageio-badenv-");
        run("mount", "-t", "tmpfs", "-o", "size=" + kib + "k", "tmpfs", dir.toString());
        mounts.add(dir);
        return dir;
    }

    private static void run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + out.trim());
        }
    }

    private BufferPool open(Path dataDir) {
        core = BufferManagerCore.open(dataDir, new BufMgrSettings.Builder().sharedBuffers(256).maxSessions(4)
                .segmentBlocks(8).build(), new SyncIoMethod());
        return core.pool();
    }

    private SmgrRelation relation(long number, long blocks) throws IOException {
        SmgrRelation rel = core.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, number));
        TestPages.fill(rel, blocks);
        return rel;
    }

    @Test
    void aFullFileSystemFailsTheCheckpointNamingTheFileAndNothingIsLostOnceThereIsRoom() throws Exception {
        Path fs = tmpfs(1024);
        BufferPool pool = open(fs.resolve("data"));
        SmgrRelation rel = relation(74001, 16);
        Path filler = fs.resolve("filler");
        // Fill the file system: what pageio writes next does not fit.
        try (var out = Files.newOutputStream(filler)) {
            byte[] chunk = new byte[4096];
            try {
                for (;;) {
                    out.write(chunk);
                    out.flush();
                }
            } catch (IOException full) {
                // No space left on device: as full as it gets
            }
        }
        int[] bufs = new int[8];
        IOException e;
        try (BufferSession s = pool.openSession("client")) {
            BufferWriteTest.modify(s, rel, 74001, 1, 3, 12); // pages already on disk: rewritten in place
            e = assertThrows(IOException.class, () -> s.extendBy(rel, 8, bufs, null));
        }
        assertTrue(e.getMessage().contains(rel.segmentPath(16).toString()) && e.getMessage().contains("ENOSPC"),
                e.getMessage());
        assertEquals(16, rel.nblocks(), "the failed extension added nothing");

        pool.checkpoint(); // rewriting in place needs no new space on tmpfs
        BufferWriteTest.assertOnDisk(rel, 74001, 1, 3, 12);
        Files.delete(filler);
        try (BufferSession s = pool.openSession("client")) {
            long first = s.extendBy(rel, 8, bufs, null);
            for (int i = 0; i < 8; i++) {
                s.beginModify(bufs[i]);
                WriteTestPages.fill(s.page(bufs[i]), 74001, first + i, 1);
                s.endModify(bufs[i], true);
                s.releaseBuffer(bufs[i]);
            }
        }
        pool.checkpoint();
        BufferWriteTest.assertOnDisk(rel, 74001, 1, 16, 17, 23);
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void aReadOnlyFileSystemRefusesWritesNamingTheFileAndReadsGoOn() throws Exception {
        Path fs = tmpfs(4096);
        BufferPool pool = open(fs.resolve("data"));
        SmgrRelation rel = relation(74002, 16);
        core.close();
        core = null;
        run("mount", "-o", "remount,ro", fs.toString());

        pool = open(fs.resolve("data"));
        SmgrRelation ro = core.storage().open(rel.locator());
        try (BufferSession s = pool.openSession("client")) {
            int buf = s.readBuffer(ro, 9, null);
            assertEquals(null, TestPages.check(74002, 9, s.page(buf)), "reads go on");
            s.beginModify(buf);
            WriteTestPages.fill(s.page(buf), 74002, 9, 1);
            s.endModify(buf, true);
            s.releaseBuffer(buf);
        }
        IOException e = assertThrows(IOException.class, pool::checkpoint);
        assertTrue(e.getMessage().contains(ro.segmentPath(9).toString()) && e.getMessage().contains("EROFS"),
                e.getMessage());
        assertTrue(pool.isDirty(pool.mapping().lookup(BufferPool.tagKey(ro, 9))), "the change is kept, dirty");
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void aSegmentReplacedByADirectoryAndAMissingMiddleSegmentAreNamedAndTheRestReads() throws Exception {
        Path dir = Files.createTempDirectory("pageio-badenv-");
        try {
            BufferPool pool = open(dir.resolve("data"));
            SmgrRelation rel = relation(74003, 24); // segments .0, .1, .2 of 8 blocks
            SmgrRelation other = relation(74004, 16);
            core.close();
            Path seg1 = rel.segmentPath(8);
            Path seg0Other = other.segmentPath(0);
            Files.delete(seg1); // the middle segment is missing
            Files.delete(seg0Other);
            Files.createDirectory(seg0Other); // and a segment is a directory
            pool = open(dir.resolve("data"));
            SmgrRelation r = core.storage().open(rel.locator());
            SmgrRelation o = core.storage().open(other.locator());
            try (BufferSession s = pool.openSession("client")) {
                IOException missing = assertThrows(IOException.class, () -> s.readBuffer(r, 10, null));
                assertTrue(missing.getMessage().contains(seg1.toString()) && missing.getMessage().contains("ENOENT")
                        && missing.getMessage().contains("block 10"), missing.getMessage());
                IOException isDir = assertThrows(IOException.class, () -> s.readBuffer(o, 2, null));
                assertTrue(isDir.getMessage().contains(seg0Other.toString()) && isDir.getMessage().contains("EISDIR"),
                        isDir.getMessage());
                for (long b : new long[] {0, 7, 16, 23}) { // the segments that are there
                    int buf = s.readBuffer(r, b, null);
                    assertEquals(null, TestPages.check(74003, b, s.page(buf)), "block " + b);
                    s.releaseBuffer(buf);
                }
                int buf = s.readBuffer(o, 12, null);
                assertEquals(null, TestPages.check(74004, 12, s.page(buf)));
                s.releaseBuffer(buf);
            }
            assertEquals(0, pool.pinnedBuffers());
        } finally {
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
