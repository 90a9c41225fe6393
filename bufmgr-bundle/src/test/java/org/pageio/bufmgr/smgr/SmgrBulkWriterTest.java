package org.pageio.bufmgr.smgr;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.pageio.posix.DirectIo;
import org.pageio.posix.Errno;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;
import org.pageio.posix.PosixException;

/**
 * The storage manager's bulk writer on real files in the build directory (the machine's disk, not
 * a tmpfs that could refuse O_DIRECT): the bytes read back are the bytes written across segment
 * boundaries, with every combination of flags; O_DIRECT on descriptors of its own; preallocation;
 * errors naming file, block and errno.
 */
class SmgrBulkWriterTest {

    /** Small segments so that a few pages cross several boundaries. */
    static final long SEGMENT_BLOCKS = 8;
    static final int BLCKSZ = StorageManager.BLCKSZ;

    Path dir;

    @BeforeEach
    void makeDirectory() throws IOException {
        Files.createDirectories(Path.of("target"));
        dir = Files.createTempDirectory(Path.of("target").toAbsolutePath(), "smgr-bulk-writer-");
    }

    @AfterEach
    void removeDirectory() throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    /** Block {@code b}'s page: every long holds {@code b} and its index, so a page in the wrong place shows. */
    static void fill(MemorySegment pages, long firstBlock, int n) {
        for (int i = 0; i < n; i++) {
            long b = firstBlock + i;
            for (int w = 0; w < BLCKSZ / 8; w++) {
                pages.set(ValueLayout.JAVA_LONG_UNALIGNED, (long) i * BLCKSZ + w * 8L, b << 20 | w);
            }
        }
    }

    /** Pages {@code first .. first + n - 1}, filled, in memory aligned for O_DIRECT. */
    static MemorySegment pages(Arena a, long first, int n) {
        MemorySegment pages = a.allocate((long) n * BLCKSZ, DirectIo.ALIGNMENT);
        fill(pages, first, n);
        return pages;
    }

    static byte[] expected(long blocks) {
        byte[] out = new byte[(int) (blocks * BLCKSZ)];
        MemorySegment m = MemorySegment.ofArray(out);
        fill(m, 0, (int) blocks);
        return out;
    }

    static byte[] readBack(SmgrRelation rel, long blocks) throws IOException {
        byte[] out = new byte[(int) (blocks * BLCKSZ)];
        int at = 0;
        for (Path p : rel.segmentPaths(blocks)) {
            byte[] b = Files.readAllBytes(p);
            assertTrue(at + b.length <= out.length, p + " holds " + b.length + " bytes, more than written");
            System.arraycopy(b, 0, out, at, b.length);
            at += b.length;
        }
        assertEquals(out.length, at, "bytes in the segment files");
        return out;
    }

    /** Whether a descriptor of this process open on {@code file} has O_DIRECT set. */
    static boolean openWithODirect(Path file) throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : fds.toList()) {
                Path target;
                try {
                    target = Files.readSymbolicLink(fd);
                } catch (IOException gone) {
                    continue; // the descriptor of the listing itself, closed by now
                }
                if (target.equals(file)) {
                    String info = Files.readString(Path.of("/proc/self/fdinfo/" + fd.getFileName()));
                    String flags = info.lines().filter(l -> l.startsWith("flags:")).findFirst().orElseThrow();
                    if ((Long.parseLong(flags.substring("flags:".length()).trim(), 8) & OpenFlags.O_DIRECT) != 0) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    @Test
    void everyFlagCombinationWritesTheSameBytesAcrossSegmentBoundaries() throws Exception {
        long blocks = 21; // segments of 8, 8 and 5 blocks
        int[] flagSets = {0, SmgrBulkWriter.PREALLOCATE, SmgrBulkWriter.START_WRITEBACK,
                SmgrBulkWriter.PREALLOCATE | SmgrBulkWriter.START_WRITEBACK, SmgrBulkWriter.DIRECT,
                SmgrBulkWriter.DIRECT | SmgrBulkWriter.PREALLOCATE,
                SmgrBulkWriter.DIRECT | SmgrBulkWriter.PREALLOCATE | SmgrBulkWriter.START_WRITEBACK};
        try (StorageManager smgr = new StorageManager(dir, SEGMENT_BLOCKS, false); Arena a = Arena.ofConfined()) {
            MemorySegment pages = pages(a, 0, (int) blocks);
            long relNumber = 7000;
            for (int flags : flagSets) {
                boolean direct = (flags & SmgrBulkWriter.DIRECT) != 0;
                SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, relNumber++));
                try (SmgrBulkWriter w = rel.bulkWriter(blocks, flags)) {
                    assertEquals(direct, w.direct(), "flags " + flags + ": O_DIRECT on this machine's disk");
                    assertTrue(Files.exists(rel.segmentPath(0)), "segment 0 created with the writer");
                    // runs that cross the boundaries at 8 and 16, the later one first: writes at offsets
                    w.write(0, pages, 3);
                    w.write(13, pages.asSlice(13L * BLCKSZ), 8);
                    w.write(3, pages.asSlice(3L * BLCKSZ), 10);
                    if (direct) {
                        assertTrue(openWithODirect(rel.segmentPath(8)), "segment 1 written through an O_DIRECT descriptor");
                    }
                    if ((flags & SmgrBulkWriter.PREALLOCATE) != 0 && direct) {
                        assertEquals(5L * BLCKSZ, Files.size(rel.segmentPath(16)), "the last segment at its final size at once");
                    }
                    w.finish();
                }
                assertEquals(blocks, rel.nblocks(), "flags " + flags);
                assertArrayEquals(expected(blocks), readBack(rel, blocks), "flags " + flags + ": bytes read back");
            }
        }
    }

    @Test
    void bufferedPreallocationReservesEachSegmentButKeepsTheSize() throws Exception {
        try (StorageManager smgr = new StorageManager(dir, SEGMENT_BLOCKS, false); Arena a = Arena.ofConfined()) {
            MemorySegment pages = pages(a, 0, 2);
            SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 7100));
            try (SmgrBulkWriter w = rel.bulkWriter(12, SmgrBulkWriter.PREALLOCATE)) {
                w.write(0, pages, 2);
                assertEquals(2L * BLCKSZ, Files.size(rel.segmentPath(0)), "the size follows the writes");
                assertTrue(Posix.fstat(rel.fd(0), rel.segmentPath(0)).blocks() * 512 >= SEGMENT_BLOCKS * BLCKSZ,
                        "the whole segment allocated");
                w.finish();
            }
        }
    }

    @Test
    void aWriteIntoAReadOnlyFileNamesTheFileTheBlockAndTheErrno() throws Exception {
        for (int flags : new int[] {0, SmgrBulkWriter.DIRECT}) {
            try (StorageManager smgr = new StorageManager(dir.resolve("f" + flags), SEGMENT_BLOCKS, false);
                    Arena a = Arena.ofConfined()) {
                MemorySegment pages = pages(a, 0, 4);
                SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 7200));
                Path seg0 = rel.segmentPath(0);
                try (SmgrBulkWriter w = rel.bulkWriter(0, flags)) {
                    w.write(0, pages, 2);
                    // immutable: the kernel refuses writes even on a descriptor already open, even for root
                    chattr("+i", seg0);
                    try {
                        PosixException e = assertThrows(PosixException.class, () -> w.write(2, pages, 4));
                        assertEquals(Errno.EPERM, e.errno());
                        assertEquals(seg0, e.file());
                        String msg = e.getMessage();
                        assertTrue(msg.startsWith("pwrite(" + seg0 + ") failed: EPERM"), msg);
                        assertTrue(msg.contains("blocks 2..5 of relation pg_default/7200"), msg);
                    } finally {
                        chattr("-i", seg0);
                    }
                }
            }
        }
    }

    @Test
    void aReadOnlySegmentTheRunReachesIsNamedWithTheBlockThatNeededIt() throws Exception {
        try (StorageManager smgr = new StorageManager(dir, SEGMENT_BLOCKS, false); Arena a = Arena.ofConfined()) {
            MemorySegment pages = pages(a, 6, 4);
            SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 7300));
            Path seg1 = rel.segmentPath(SEGMENT_BLOCKS);
            Files.createFile(seg1, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("r--r--r--")));
            chattr("+i", seg1); // root ignores the mode
            try (SmgrBulkWriter w = rel.bulkWriter(10, SmgrBulkWriter.DIRECT | SmgrBulkWriter.PREALLOCATE)) {
                PosixException e = assertThrows(PosixException.class, () -> w.write(6, pages, 4));
                assertEquals(seg1, e.file());
                String msg = e.getMessage();
                assertTrue(msg.startsWith("open(" + seg1 + ") failed: EPERM") || msg.startsWith("open(" + seg1 + ") failed: EACCES"),
                        msg);
                assertTrue(msg.contains("segment 1 of relation pg_default/7300, needed for block 8"), msg);
                byte[] seg0 = Files.readAllBytes(rel.segmentPath(0));
                assertEquals(6L << 20, MemorySegment.ofArray(seg0).get(ValueLayout.JAVA_LONG_UNALIGNED, 6L * BLCKSZ),
                        "block 6 was written before the run reached segment 1");
            } finally {
                chattr("-i", seg1);
            }
        }
    }

    @Test
    void directWhereTheFileSystemRefusesItWritesBuffered() throws Exception {
        // procfs refuses O_DIRECT: a tablespace at /proc/self/fd whose relation number is a
        // descriptor of a procfs file makes the writer open that file (the magic link)
        int procFd = Posix.open(Path.of("/proc/self/comm"), OpenFlags.O_RDWR, 0);
        try (StorageManager smgr = new StorageManager(dir, SEGMENT_BLOCKS, false)) {
            smgr.createTablespace("procfs", Path.of("/proc/self/fd"), -1, -1);
            SmgrRelation rel = smgr.open(new RelFileLocator("procfs", procFd));
            try (SmgrBulkWriter w = rel.bulkWriter(1, SmgrBulkWriter.DIRECT)) {
                assertFalse(w.direct(), "EINVAL from the O_DIRECT open: buffered writes");
            }
        } finally {
            Posix.close(procFd, null);
        }
    }

    @Test
    void unalignedMemoryAndUnknownFlagsAreRefused() throws Exception {
        try (StorageManager smgr = new StorageManager(dir, SEGMENT_BLOCKS, false); Arena a = Arena.ofConfined()) {
            SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 7400));
            assertThrows(IllegalArgumentException.class, () -> rel.bulkWriter(1, 8));
            MemorySegment pages = a.allocate(2L * BLCKSZ, DirectIo.ALIGNMENT).asSlice(512, BLCKSZ);
            try (SmgrBulkWriter w = rel.bulkWriter(1, SmgrBulkWriter.DIRECT)) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> w.write(0, pages, 1));
                assertTrue(e.getMessage().contains("not aligned to 4096"), e.getMessage());
            }
        }
    }

    /** {@code chattr FLAGS file}; the immutable attribute needs root (CAP_LINUX_IMMUTABLE), as the tests run here. */
    static void chattr(String flags, Path file) throws Exception {
        Process p = new ProcessBuilder("chattr", flags, file.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor(), "chattr " + flags + " " + file + ": " + out);
    }
}
