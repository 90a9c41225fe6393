package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.pageio.api.AioException;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.page.PageVerifier;
import org.pageio.bufmgr.smgr.ForkNumber;
import org.pageio.bufmgr.smgr.ReadVerification;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.posix.Errno;
import org.pageio.posix.PosixException;

/**
 * A read-only storage manager over files pageio did not write ({@link StorageManager#readOnly}),
 * read through a pool of its own as a PostgreSQL cluster is; and {@link ReadStream#STRICT}, a read
 * that sees damage whatever {@code zero_damaged_pages} and {@code ignore_checksum_failure} say.
 */
class ReadOnlyStorageTest extends PoolTestBase {

    @Test
    void aReadOnlyStorageReadsPagesAsStoredAndChangesNothing() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation written = relation(60001, 20);
        TestPages.corrupt(written, 7, 0x10);
        Path location = written.tablespace().directory();
        core.close();
        core = null;
        long filesBefore = count(dir);

        try (StorageManager ro = StorageManager.readOnly(dir, StorageManager.DEFAULT_SEGMENT_BLOCKS, ReadVerification.NONE);
                BufferManagerCore reader = BufferManagerCore.on(ro, small().zeroDamagedPages(true).build(), new SyncIoMethod())) {
            assertTrue(ro.readOnly());
            ro.createTablespace("db_one", location, -1, -1);
            SmgrRelation rel = ro.open(new RelFileLocator("db_one", 60001));
            assertEquals(20, rel.nblocks());
            int damaged = 0;
            try (BufferSession s = reader.pool().openSession("client");
                    ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 20), ReadStream.SEQUENTIAL, null)) {
                for (long b = 0; b < 20; b++) {
                    int buf = stream.next();
                    MemorySegment page = s.page(buf);
                    // NONE: no page zeroed or refused by the completion; the reader sees the damage
                    assertFalse(PageVerifier.isAllZero(page), "block " + b + " zeroed");
                    if (PageVerifier.verify(page, b, true) == PageVerifier.BAD_CHECKSUM) {
                        damaged++;
                        assertEquals(7, b);
                    }
                    s.releaseBuffer(buf);
                }
            }
            assertEquals(1, damaged);

            // every change is refused naming the file; nothing is created
            PosixException write = assertThrows(PosixException.class, () -> rel.fdForWrite(0));
            assertEquals(Errno.EROFS, write.errno());
            assertTrue(write.getMessage().contains("60001") && write.getMessage().contains("opened read-only"), write.getMessage());
            try (Arena a = Arena.ofConfined()) {
                MemorySegment page = a.allocate(Page.SIZE, 4096);
                assertThrows(PosixException.class, () -> rel.write(20, page, 1));
            }
            assertThrows(PosixException.class, () -> ro.open(new RelFileLocator("db_one", 60002)).create());
            assertThrows(PosixException.class, () -> rel.fork(ForkNumber.VISIBILITYMAP_FORKNUM).extend(0, 1));
            assertThrows(IOException.class, rel::unlink);
            IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                    () -> ro.createTablespace("nowhere", dir.resolve("nowhere"), -1, -1));
            assertTrue(missing.getMessage().contains("does not exist"), missing.getMessage());
        }
        assertEquals(filesBefore, count(dir), "the read-only storage created nothing");
        assertTrue(Files.exists(written.segmentPath(0)));
    }

    @Test
    void aReadOnlyStorageRefusesADirectoryThatIsNotThere() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> StorageManager.readOnly(dir.resolve("none"), StorageManager.DEFAULT_SEGMENT_BLOCKS, ReadVerification.NONE));
        assertEquals("directory \"" + dir.resolve("none") + "\" does not exist", e.getMessage());
        assertFalse(Files.exists(dir.resolve("none")));
    }

    /** With zero_damaged_pages on, a STRICT stream fails on the damaged page; an ordinary one zeroes it. */
    @Test
    void aStrictStreamSeesDamageThatZeroDamagedPagesWouldHide() throws Exception {
        pool(new SyncIoMethod(), small().zeroDamagedPages(true).ignoreChecksumFailure(true).build());
        SmgrRelation rel = relation(60003, 10);
        TestPages.corrupt(rel, 4, 0x10);
        try (BufferSession s = pool.openSession("client")) {
            try (ReadStream strict = new ReadStream(s, rel, ReadStream.blockRange(0, 10), ReadStream.STRICT, null)) {
                // the read that holds block 4 fails (it may hold blocks before it: combined)
                AioException e = assertThrows(AioException.class, () -> {
                    for (int b = 0; b < 10; b++) {
                        s.releaseBuffer(strict.next());
                    }
                });
                assertTrue(e.getMessage().startsWith("invalid page in block 4 of relation pg_default/60003"), e.getMessage());
            }
            AioException single = assertThrows(AioException.class, () -> s.readBuffer(rel, 4, null, ReadBuffersOperation.STRICT));
            assertTrue(single.getMessage().contains("page checksum mismatch"), single.getMessage());
            // the same read without STRICT: ignore_checksum_failure lets the damaged page in
            int buf = s.readBuffer(rel, 4, null);
            assertEquals(PageVerifier.BAD_CHECKSUM, PageVerifier.verify(s.page(buf), 4, true));
            s.releaseBuffer(buf);
        }
    }

    private static long count(Path root) throws IOException {
        try (Stream<Path> all = Files.walk(root)) {
            return all.count();
        }
    }
}
