package org.pageio.posix;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.pageio.posix.OpenFlags.O_CREAT;
import static org.pageio.posix.OpenFlags.O_DIRECT;
import static org.pageio.posix.OpenFlags.O_RDONLY;
import static org.pageio.posix.OpenFlags.O_RDWR;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Posix against real files in a temporary directory (ext4 in CI). */
class PosixTest {
    private static final boolean AARCH64 = "aarch64".equals(System.getProperty("os.arch"));
    private static final long SYS_GETPID = AARCH64 ? 172 : 39;
    private static final long SYS_FCNTL = AARCH64 ? 25 : 72;
    private static final int F_GETFD = 1;
    private static final int FD_CLOEXEC = 1;
    private static final int PAGE = 4096;

    @TempDir
    Path dir;
    Path file;
    Arena arena;
    CallState cs;

    @BeforeEach
    void setUp() {
        file = dir.resolve("data");
        arena = Arena.ofConfined();
        cs = CallState.allocate(arena);
    }

    @AfterEach
    void tearDown() {
        arena.close();
    }

    @Test
    void pwritevThenPreadvIntoTwoNonAdjacentBuffers() throws IOException {
        MemorySegment memory = arena.allocate(3 * PAGE, PAGE);
        MemorySegment first = memory.asSlice(0, PAGE);
        MemorySegment gap = memory.asSlice(PAGE, PAGE);
        MemorySegment second = memory.asSlice(2 * PAGE, PAGE);
        first.fill((byte) 'a');
        second.fill((byte) 'b');
        MemorySegment iov = Iovec.allocate(arena, 2);
        Iovec.set(iov, 0, first);
        Iovec.set(iov, 1, second);

        int fd = Posix.open(file, O_RDWR | O_CREAT, 0600);
        try {
            assertEquals(2 * PAGE, Posix.pwritev(cs, fd, iov, 2, PAGE));
            first.fill((byte) 0);
            second.fill((byte) 0);
            gap.fill((byte) 'g');
            assertEquals(2 * PAGE, Posix.preadv(cs, fd, iov, 2, PAGE));
        } finally {
            Posix.close(fd, file);
        }
        assertAll(first, 'a');
        assertAll(gap, 'g');
        assertAll(second, 'b');
        assertEquals(3 * PAGE, Files.size(file));
    }

    @Test
    void preadv2NowaitReadsWhatIsCachedAndRefusesWhatIsNot() throws IOException {
        MemorySegment buf = arena.allocate(2 * PAGE, PAGE);
        MemorySegment iov = Iovec.allocate(arena, 1);
        Iovec.set(iov, 0, buf);
        int fd = Posix.open(file, O_RDWR | O_CREAT, 0600);
        try {
            buf.fill((byte) 'c');
            assertEquals(2 * PAGE, Posix.pwritev(cs, fd, iov, 1, 0));
            buf.fill((byte) 0);
            assertEquals(2 * PAGE, Posix.preadv2(cs, fd, iov, 1, 0, Posix.RWF_NOWAIT), "just written: in the page cache");
            assertAll(buf, 'c');
            Posix.fsync(cs, fd); // clean pages can be dropped
            Posix.fadvise(fd, 0, 0, Fadvise.POSIX_FADV_DONTNEED, file);
            assertEquals(-Errno.EAGAIN, Posix.preadv2(cs, fd, iov, 1, 0, Posix.RWF_NOWAIT), "dropped: it would wait");
            assertEquals(2 * PAGE, Posix.preadv2(cs, fd, iov, 1, 0, 0), "without the flag it reads");
        } finally {
            Posix.close(fd, file);
        }
    }

    @Test
    void preadAtAndPastEndOfFile() throws IOException {
        Files.write(file, new byte[100]);
        MemorySegment buf = arena.allocate(PAGE);
        int fd = Posix.open(file, O_RDONLY, 0);
        try {
            assertEquals(100, Posix.pread(cs, fd, buf, PAGE, 0));
            assertEquals(40, Posix.pread(cs, fd, buf, PAGE, 60));
            assertEquals(0, Posix.pread(cs, fd, buf, PAGE, PAGE));
        } finally {
            Posix.close(fd, file);
        }
    }

    @Test
    void rawCallsOnAClosedFdReturnMinusEbadf() throws IOException {
        int fd = Posix.open(file, O_RDWR | O_CREAT, 0600);
        Posix.close(fd, file);
        MemorySegment buf = arena.allocate(PAGE);
        MemorySegment iov = Iovec.allocate(arena, 1);
        Iovec.set(iov, 0, buf);
        assertEquals(-Errno.EBADF, Posix.preadv(cs, fd, iov, 1, 0));
        assertEquals(Errno.EBADF, cs.errno());
        assertEquals(-9, Posix.pwrite(cs, fd, buf, PAGE, 0));
        assertEquals(-9, Posix.fsync(cs, fd));
        assertEquals(-9, Posix.fdatasync(cs, fd));
    }

    @Test
    void rawCallsRefuseBuffersThatDoNotCoverTheCount() throws IOException {
        int fd = Posix.open(file, O_RDWR | O_CREAT, 0600);
        try {
            MemorySegment small = arena.allocate(10);
            assertEquals(-Errno.EFAULT, Posix.pwrite(cs, fd, small, 11, 0));
            assertEquals(-Errno.EFAULT, Posix.pread(cs, fd, MemorySegment.ofArray(new byte[10]), 10, 0));
            assertEquals(-Errno.EFAULT, Posix.preadv(cs, fd, Iovec.allocate(arena, 1), 2, 0));
            assertEquals(0, Posix.fsync(cs, fd));
            assertEquals(0, Posix.fdatasync(cs, fd));
        } finally {
            Posix.close(fd, file);
        }
    }

    @Test
    void openOfAMissingFileNamesCallPathAndErrno() {
        Path missing = dir.resolve("missing");
        PosixException e = assertThrows(PosixException.class, () -> Posix.open(missing, O_RDONLY, 0));
        assertTrue(e.getMessage().contains("open("), e.getMessage());
        assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("ENOENT"), e.getMessage());
        assertEquals("open(" + missing + ") failed: ENOENT (No such file or directory)", e.getMessage());
        assertEquals(Errno.ENOENT, e.errno());
        assertEquals("ENOENT", e.errnoName());
        assertEquals("open", e.call());
        assertEquals(missing, e.file());
    }

    @Test
    void openAlwaysSetsCloseOnExec() throws IOException {
        int fd = Posix.open(file, O_RDWR | O_CREAT, 0600);
        try {
            assertEquals(FD_CLOEXEC, Posix.syscall(cs, SYS_FCNTL, fd, F_GETFD, 0, 0, 0, 0) & FD_CLOEXEC);
        } finally {
            Posix.close(fd, file);
        }
    }

    @Test
    void fstatMatchesTheJdk() throws IOException {
        Files.write(file, new byte[12345]);
        int fd = Posix.open(file, O_RDONLY, 0);
        Stat stat;
        try {
            stat = Posix.fstat(fd, file);
        } finally {
            Posix.close(fd, file);
        }
        assertEquals(12345, stat.size());
        assertEquals(((Number) Files.getAttribute(file, "unix:ino")).longValue(), stat.ino());
        assertEquals(((Number) Files.getAttribute(file, "unix:dev")).longValue(), stat.dev());
        assertEquals(((Number) Files.getAttribute(file, "unix:mode")).intValue(), stat.mode());
        assertTrue(stat.blksize() > 0);
        assertTrue(stat.blocks() * 512 >= 12345);
    }

    @Test
    void closeOfABadFdThrowsEbadf() {
        PosixException e = assertThrows(PosixException.class, () -> Posix.close(-1, file));
        assertEquals(Errno.EBADF, e.errno());
    }

    @Test
    void fallocateGrowsTheFileOrReportsEopnotsupp() throws IOException {
        int fd = Posix.open(file, O_RDWR | O_CREAT, 0600);
        try {
            Posix.fallocate(fd, Fallocate.FALLOC_FL_DEFAULT, 0, 10 * PAGE, file);
            assertEquals(10 * PAGE, Posix.fstat(fd, file).size());
            assertTrue(Posix.fstat(fd, file).blocks() * 512 >= 10 * PAGE);
        } catch (PosixException e) {
            assertEquals(Errno.EOPNOTSUPP, e.errno(), e.getMessage());
        } finally {
            Posix.close(fd, file);
        }
    }

    @Test
    void ftruncateSetsTheSize() throws IOException {
        int fd = Posix.open(file, O_RDWR | O_CREAT, 0600);
        try {
            Posix.ftruncate(fd, 3 * PAGE + 1, file);
            assertEquals(3 * PAGE + 1, Posix.fstat(fd, file).size());
        } finally {
            Posix.close(fd, file);
        }
    }

    @Test
    void dontneedDropsThePagesAndReadingBringsThemBack() throws IOException {
        int pages = 16;
        MemorySegment buf = arena.allocate(pages * PAGE);
        buf.fill((byte) 7);
        int fd = Posix.open(file, O_RDWR | O_CREAT, 0600);
        try {
            assertEquals(pages * PAGE, Posix.pwrite(cs, fd, buf, buf.byteSize(), 0));
            Posix.fdatasyncOrThrow(fd, file);
            Posix.fsyncOrThrow(fd, file);
            Posix.fadvise(fd, 0, 0, Fadvise.POSIX_FADV_DONTNEED, file);
            assertEquals(new Residency(0, pages), Posix.residency(fd, 0, pages * PAGE, file));

            assertEquals(pages * PAGE, Posix.pread(cs, fd, buf, buf.byteSize(), 0));
            Residency all = Posix.residency(fd, 0, pages * PAGE, file);
            assertEquals(new Residency(pages, pages), all);
            assertEquals(1.0, all.fraction());
            // an unaligned range counts every page it touches
            assertEquals(new Residency(2, 2), Posix.residency(fd, PAGE - 1, 2, file));
            assertEquals(new Residency(0, 0), Posix.residency(fd, 0, 0, file));
        } finally {
            Posix.close(fd, file);
        }
    }

    @Test
    void fadviseReportsItsErrorNumber() {
        PosixException e = assertThrows(PosixException.class,
                () -> Posix.fadvise(-1, 0, 0, Fadvise.POSIX_FADV_WILLNEED, file));
        assertEquals(Errno.EBADF, e.errno());
        assertTrue(e.getMessage().startsWith("posix_fadvise(" + file + ") failed: EBADF (Bad file descriptor), offset 0"),
                e.getMessage());
    }

    @Test
    void mmapWritesReachTheFileAndMunmapReleases() throws IOException {
        int fd = Posix.open(file, O_RDWR | O_CREAT, 0600);
        try {
            Posix.ftruncate(fd, 2 * PAGE, file);
            MemorySegment map = Posix.mmap(2 * PAGE, Mman.PROT_READ | Mman.PROT_WRITE, Mman.MAP_SHARED, fd, 0, file);
            assertEquals(2 * PAGE, map.byteSize());
            map.set(ValueLayout.JAVA_LONG, PAGE, 0x1122334455667788L);
            Posix.munmap(map);
            MemorySegment buf = arena.allocate(8);
            assertEquals(8, Posix.pread(cs, fd, buf, 8, PAGE));
            assertEquals(0x1122334455667788L, buf.get(ValueLayout.JAVA_LONG, 0));
        } finally {
            Posix.close(fd, file);
        }
        MemorySegment anonymous = Posix.mmap(PAGE, Mman.PROT_READ | Mman.PROT_WRITE,
                Mman.MAP_PRIVATE | Mman.MAP_ANONYMOUS, -1, 0, null);
        assertEquals(0, anonymous.get(ValueLayout.JAVA_LONG, 0));
        Posix.munmap(anonymous);
    }

    @Test
    void madviseAdvisesAnAnonymousMappingAndNamesTheMemoryWhenRefused() throws IOException {
        MemorySegment map = Posix.mmap(4 * PAGE, Mman.PROT_READ | Mman.PROT_WRITE,
                Mman.MAP_PRIVATE | Mman.MAP_ANONYMOUS, -1, 0, null);
        try {
            Posix.madvise(map, Mman.MADV_NOHUGEPAGE, "a test mapping");
            Posix.madvise(map, Mman.MADV_POPULATE_WRITE, "a test mapping");
            assertEquals(0, map.get(ValueLayout.JAVA_LONG, 3 * PAGE));
            PosixException e = assertThrows(PosixException.class, () -> Posix.madvise(map, 9999, "a test mapping"));
            assertEquals(Errno.EINVAL, e.errno());
            assertEquals("madvise", e.call());
            assertTrue(e.getMessage().contains("advice 9999 of a test mapping"), e.getMessage());
            PosixException unaligned = assertThrows(PosixException.class,
                    () -> Posix.madvise(map.asSlice(1, PAGE), Mman.MADV_HUGEPAGE, "a test mapping"));
            assertTrue(unaligned.getMessage().contains("MADV_HUGEPAGE of a test mapping"), unaligned.getMessage());
        } finally {
            Posix.munmap(map);
        }
    }

    @Test
    void mmapFailureThrows() {
        PosixException e = assertThrows(PosixException.class,
                () -> Posix.mmap(PAGE, Mman.PROT_READ, Mman.MAP_SHARED, -1, 0, file));
        assertEquals(Errno.EBADF, e.errno());
        assertEquals("mmap", e.call());
    }

    @Test
    void syscallGetpid() {
        assertEquals(ProcessHandle.current().pid(), Posix.syscall(cs, SYS_GETPID, 0, 0, 0, 0, 0, 0));
        assertEquals(-Errno.ENOSYS, Posix.syscall(cs, 100_000, 0, 0, 0, 0, 0, 0));
    }

    @Test
    void directIoWithAnAlignedBuffer() throws IOException {
        byte[] data = new byte[PAGE];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) i;
        }
        Files.write(file, data);
        MemorySegment buf = arena.allocate(PAGE, PAGE);
        int fd = Posix.open(file, O_RDWR | O_DIRECT, 0);
        try {
            assertEquals(PAGE, Posix.pread(cs, fd, buf, PAGE, 0));
            assertArrayEquals(data, buf.toArray(ValueLayout.JAVA_BYTE));
            assertEquals(PAGE, Posix.pwrite(cs, fd, buf, PAGE, PAGE));
        } finally {
            Posix.close(fd, file);
        }
        assertEquals(2 * PAGE, Files.size(file));
    }

    @Test
    void pageSizeAndStrerror() {
        assertTrue(Posix.pageSize() >= 4096 && Long.bitCount(Posix.pageSize()) == 1);
        assertEquals("Bad file descriptor", Posix.strerror(Errno.EBADF));
        assertTrue(Posix.strerror(999).contains("999"), Posix.strerror(999));
    }

    @Test
    void residencyRejectsNegativeRanges() {
        assertThrows(IllegalArgumentException.class, () -> Posix.residency(0, -1, 1, file));
    }

    private static void assertAll(MemorySegment seg, char expected) {
        for (long i = 0; i < seg.byteSize(); i++) {
            assertEquals((byte) expected, seg.get(ValueLayout.JAVA_BYTE, i), "byte " + i);
        }
    }
}
