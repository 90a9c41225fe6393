package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.api.AioContext;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.posix.Errno;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;
import org.pageio.posix.PosixException;

/** The storage manager with O_DIRECT (io_method=direct), and streams over a method that bypasses the page cache. */
class DirectStorageTest {

    @TempDir
    Path dir;

    /** Executes inline (real preadv) and records each read's length; says whether it bypasses the page cache. */
    static final class Inline implements IoMethod {
        final boolean direct;
        final List<Long> lengths = new CopyOnWriteArrayList<>();

        Inline(boolean direct) {
            this.direct = direct;
        }

        @Override
        public String name() {
            return direct ? "test-direct" : "test-buffered";
        }

        @Override
        public boolean needsSynchronousExecution(IoHandle h) {
            lengths.add(h.length());
            return true;
        }

        @Override
        public int submit(IoHandle[] handles, int count) {
            throw new AssertionError("inline method");
        }

        @Override
        public boolean bypassesPageCache() {
            return direct;
        }
    }

    static boolean openedWithODirect(int fd) throws Exception {
        String info = Files.readString(Path.of("/proc/self/fdinfo/" + fd));
        String flags = info.lines().filter(l -> l.startsWith("flags:")).findFirst().orElseThrow();
        return (Long.parseLong(flags.substring("flags:".length()).trim(), 8) & OpenFlags.O_DIRECT) != 0;
    }

    @Test
    void directStorageOpensWithODirectAndReadsWhatABufferedOneWrote() throws Exception {
        RelFileLocator loc = new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 5001);
        // written through the page cache, not synced: the new pages may still be dirty there
        try (StorageManager buffered = new StorageManager(dir, 16, false)) {
            SmgrRelation w = buffered.open(loc);
            TestPages.fill(w, 40);
            assertTrue(!openedWithODirect(w.fd(0)));
        }
        BufMgrSettings.Builder b = new BufMgrSettings.Builder().sharedBuffers(256).maxSessions(4).segmentBlocks(16);
        b.directIo = true;
        BufMgrSettings settings = b.build();
        Inline m = new Inline(false);
        try (StorageManager smgr = new StorageManager(dir, 16, true);
                AioContext aio = AioContext.create(m, settings.aioConfig())) {
            BufferPool pool = new BufferPool(settings, smgr, aio, new StatIo());
            try (BufferSession s = pool.openSession("client")) {
                SmgrRelation rel = smgr.open(loc);
                assertTrue(openedWithODirect(rel.fd(0)), "segment 0 opened with O_DIRECT");
                assertTrue(openedWithODirect(rel.fd(16)), "segment 1 opened with O_DIRECT");
                try (ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 40), ReadStream.SEQUENTIAL, null)) {
                    for (long blk = 0; blk < 40; blk++) {
                        int buf = stream.next();
                        assertNull(TestPages.check(5001, blk, s.page(buf)));
                        s.releaseBuffer(buf);
                    }
                    assertEquals(-1, stream.next());
                }
            } finally {
                pool.close();
            }
            // settings.directIo: the stream started at full size (16 blocks, the segment size here)
            assertEquals(16L * 8192, m.lengths.get(0), m.lengths.toString());
        }
    }

    @Test
    void aFileSystemRefusingODirectNamesTheFileItsTypeAndTheWayOut() throws Exception {
        // procfs refuses O_DIRECT: a "tablespace" at /proc/self/fd whose relation number is a
        // descriptor of a procfs file makes the storage manager open that file (the magic link)
        int procFd = Posix.open(Path.of("/proc/self/comm"), OpenFlags.O_RDWR, 0);
        try (StorageManager smgr = new StorageManager(dir, 16, true)) {
            smgr.createTablespace("procfs", Path.of("/proc/self/fd"), -1, -1);
            SmgrRelation rel = smgr.open(new RelFileLocator("procfs", procFd));
            PosixException e = assertThrows(PosixException.class, () -> rel.fd(0));
            assertEquals(Errno.EINVAL, e.errno());
            String msg = e.getMessage();
            assertTrue(msg.startsWith("open(/proc/self/fd/" + procFd + ") failed: EINVAL"), msg);
            assertTrue(msg.contains("segment 0 of relation procfs/" + procFd), msg);
            assertTrue(msg.contains("O_DIRECT refused on file system proc (0x9fa0)"), msg);
            assertTrue(msg.contains("use io_method=io_uring, worker or sync"), msg);
            assertEquals(1, msg.lines().count(), msg);
        } finally {
            Posix.close(procFd, null);
        }
    }

    @Test
    void aSequentialStreamOverADirectMethodStartsAtFullSize() throws Exception {
        for (boolean direct : new boolean[] {true, false}) {
            Path d = Files.createDirectories(dir.resolve(direct ? "direct" : "buffered"));
            BufMgrSettings settings = new BufMgrSettings.Builder().sharedBuffers(256).maxSessions(4).build();
            Inline m = new Inline(direct);
            try (StorageManager smgr = new StorageManager(d, settings.segmentBlocks(), false);
                    AioContext aio = AioContext.create(m, settings.aioConfig())) {
                SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 5002));
                TestPages.fill(rel, 64);
                BufferPool pool = new BufferPool(settings, smgr, aio, new StatIo());
                try (BufferSession s = pool.openSession("client");
                        ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 64), ReadStream.SEQUENTIAL, null)) {
                    for (long blk = 0; blk < 64; blk++) {
                        int buf = stream.next();
                        assertNull(TestPages.check(5002, blk, s.page(buf)));
                        s.releaseBuffer(buf);
                    }
                } finally {
                    pool.close();
                }
            }
            // no kernel read-ahead behind a direct method: 128 kB from the first read; buffered ramps up 1, 2, 4, …
            assertEquals(direct ? 16L * 8192 : 8192L, m.lengths.get(0), (direct ? "direct " : "buffered ") + m.lengths);
        }
    }
}
