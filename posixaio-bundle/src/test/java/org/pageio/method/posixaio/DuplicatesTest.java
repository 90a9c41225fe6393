package org.pageio.method.posixaio;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.api.AioConfig;
import org.pageio.api.AioContext;
import org.pageio.api.IoHandle;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.api.IoSession;
import org.pageio.posix.CallState;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;
import org.pageio.tck.BlockPattern;

/**
 * {@code posix_aio_fds_per_file}: a file's reads spread over duplicates of its descriptor, on real
 * files, and the duplicates never used for another file once the storage manager's descriptor
 * number names one.
 */
@Timeout(60)
class DuplicatesTest {

    static final int BLOCK = BlockPattern.BLOCK;
    static final int FILE_BLOCKS = 64;
    /** Reads per batch: the session's handles (io_max_concurrency). */
    static final int BATCH = 16;

    static final boolean AARCH64 = System.getProperty("os.arch").toLowerCase(Locale.ROOT).equals("aarch64");
    static final long NR_FCNTL = AARCH64 ? 25 : 72;
    static final long NR_DUP3 = AARCH64 ? 24 : 292;
    static final int F_GETFL = 3;
    static final int F_SETFL = 4;
    static final int O_NONBLOCK = 04000;

    @TempDir
    Path dir;
    Path alpha;
    Path beta;
    Arena arena;
    CallState cs;
    PosixAioIoMethod method;
    AioContext ctx;
    final List<Integer> fds = new ArrayList<>();

    @BeforeEach
    void setUp() throws IOException {
        alpha = BlockPattern.write(dir.resolve("alpha"), FILE_BLOCKS);
        beta = BlockPattern.write(dir.resolve("beta"), FILE_BLOCKS);
        arena = Arena.ofShared();
        cs = CallState.allocate(arena);
        method = new PosixAioIoMethod(PosixAioSettings.DEFAULTS.withFdsPerFile(4));
        ctx = AioContext.create(method, new AioConfig(4, BATCH, 4));
    }

    @AfterEach
    void tearDown() throws IOException {
        if (ctx != null) {
            ctx.close();
        }
        method.deactivate();
        for (int fd : fds) {
            Posix.close(fd, null);
        }
        arena.close();
    }

    int open(Path p, int flags) throws IOException {
        int fd = Posix.open(p, flags, 0600);
        fds.add(fd);
        return fd;
    }

    /**
     * Makes the closed number {@code target} refer to {@code file}, opened with {@code flags}: the
     * kernel gives the lowest free number, usually {@code target}; otherwise {@code dup3} forces it.
     */
    void reopenAs(int target, Path file, int flags) throws IOException {
        int fd = Posix.open(file, flags, 0);
        if (fd != target) {
            assertEquals(target, Posix.syscall(cs, NR_DUP3, fd, target, OpenFlags.O_CLOEXEC, 0, 0, 0), "dup3");
            Posix.close(fd, file);
        }
    }

    static AioSession state(IoSession s) {
        return assertInstanceOf(AioSession.class, s.methodState());
    }

    long ino(int fd) throws IOException {
        return Posix.fstat(fd, null).ino();
    }

    long flags(int fd) {
        long fl = Posix.syscall(cs, NR_FCNTL, fd, F_GETFL, 0, 0, 0, 0);
        assertTrue(fl >= 0, "F_GETFL of " + fd);
        return fl;
    }

    /**
     * Reads {@value #BATCH} blocks of {@code fd} in one batch, checks each against {@code name}'s
     * pattern, and returns the descriptors glibc got the requests on.
     */
    Set<Integer> readBatch(IoSession s, int fd, String name, int firstBlock) {
        MemorySegment[] bufs = new MemorySegment[BATCH];
        IoHandle[] hs = new IoHandle[BATCH];
        long[] gens = new long[BATCH];
        IoReturn[] rets = new IoReturn[BATCH];
        s.enterBatchMode();
        for (int i = 0; i < BATCH; i++) {
            bufs[i] = arena.allocate(BLOCK, 4096);
            rets[i] = new IoReturn();
            hs[i] = s.acquire();
            gens[i] = hs[i].generation();
            long block = (firstBlock + i * 5L) % FILE_BLOCKS;
            hs[i].setIovec(0, bufs[i]).setReturn(rets[i]).startReadv(fd, 1, block * BLOCK);
        }
        s.exitBatchMode();
        AioSession as = state(s);
        Set<Integer> used = new TreeSet<>();
        for (int i = 0; i < BATCH; i++) {
            s.await(hs[i], gens[i]);
            assertEquals(IoResult.OK, rets[i].status(), rets[i].message());
            long block = (firstBlock + i * 5L) % FILE_BLOCKS;
            assertNull(BlockPattern.check(name, block, bufs[i]), "block " + block + " read on descriptor " + fd);
            used.add(as.descriptorOf(hs[i].index() - s.id() * BATCH, 0));
        }
        return used;
    }

    static Set<Integer> setOf(int[] a) {
        Set<Integer> s = new TreeSet<>();
        for (int x : a) {
            s.add(x);
        }
        return s;
    }

    @Test
    void readsThroughDuplicatesReturnTheFilesBlocks() throws IOException {
        int fd = open(alpha, OpenFlags.O_RDONLY);
        Duplicates d = method.duplicates();
        try (IoSession s = ctx.openSession("t")) {
            Set<Integer> used = readBatch(s, fd, "alpha", 3);
            int[] descriptors = d.descriptorsOf(fd);
            assertEquals(4, descriptors.length, "posix_aio_fds_per_file = 4: the file's descriptor and three duplicates");
            assertEquals(fd, descriptors[0]);
            assertEquals(4, setOf(descriptors).size(), Arrays.toString(descriptors));
            for (int dup : descriptors) {
                assertEquals(ino(fd), ino(dup), "descriptor " + dup + " refers to alpha");
                assertEquals(flags(fd), flags(dup), "one open file description");
            }
            for (int i = 1; i < descriptors.length; i++) {
                assertTrue(descriptors[i] >= Duplicates.FIRST_DUPLICATE, "duplicates are numbered from "
                        + Duplicates.FIRST_DUPLICATE + " up, away from the numbers open() hands out: " + descriptors[i]);
            }
            assertEquals(setOf(descriptors), used, "16 reads round robin over the four descriptors");
            assertEquals(3, d.open());
            assertEquals(1, d.made());

            readBatch(s, fd, "alpha", 40);
            assertEquals(1, d.made(), "the entry is reused while the descriptor names the same file");
            assertArrayEquals(descriptors, d.descriptorsOf(fd));
        }
    }

    @Test
    void writesAndTheirFsyncStayOnTheHandlesDescriptor() throws IOException {
        int fd = open(beta, OpenFlags.O_RDWR);
        MemorySegment buf = arena.allocate(BLOCK, 4096);
        BlockPattern.fill("beta", 9, buf);
        try (IoSession s = ctx.openSession("t")) {
            IoReturn ret = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setIovec(0, buf).setReturn(ret).startWritev(fd, 1, 2L * BLOCK);
            s.await(h, gen);
            assertEquals(IoResult.OK, ret.status(), ret.message());
            assertEquals(fd, state(s).descriptorOf(h.index() - s.id() * BATCH, 0), "a write is queued on the handle's descriptor");
            assertEquals(0, method.duplicates().descriptorsOf(fd).length, "writes make no duplicates");
        }
    }

    /**
     * The storage manager closes a descriptor and the kernel gives its number to another file: the
     * old file's duplicates are retired and closed, and every read of the number goes to the new file.
     */
    @Test
    void aNumberReusedForAnotherFileNeverReadsTheOldOne() throws IOException {
        int fd = Posix.open(alpha, OpenFlags.O_RDONLY, 0);
        Duplicates d = method.duplicates();
        try (IoSession s = ctx.openSession("t")) {
            readBatch(s, fd, "alpha", 0);
            int[] old = d.descriptorsOf(fd);
            assertEquals(4, old.length);

            Posix.close(fd, alpha);
            reopenAs(fd, beta, OpenFlags.O_RDONLY);
            fds.add(fd);
            assertEquals(ino(open(beta, OpenFlags.O_RDONLY)), ino(fd), "the number names beta");

            Set<Integer> used = readBatch(s, fd, "beta", 0); // every block checked against beta's pattern
            int[] now = d.descriptorsOf(fd);
            assertEquals(4, now.length);
            for (int dup : now) {
                assertEquals(ino(fd), ino(dup), "descriptor " + dup + " of the new entry refers to beta");
            }
            assertEquals(setOf(now), used, "the reads went to beta's descriptors only");
            assertEquals(2, d.made());
            assertEquals(1, d.retiredCount(), "alpha's entry retired");
            assertEquals(3, d.open(), "alpha's duplicates closed: only beta's are open");
            readBatch(s, fd, "beta", 7);
        }
    }

    /** The same file opened again under the number, with other flags: duplicates of the new description. */
    @Test
    void theSameFileReopenedWithOtherFlagsGetsNewDuplicates() throws IOException {
        int fd = Posix.open(alpha, OpenFlags.O_RDWR, 0);
        Duplicates d = method.duplicates();
        try (IoSession s = ctx.openSession("t")) {
            readBatch(s, fd, "alpha", 1);
            assertEquals(OpenFlags.O_RDWR, flags(d.descriptorsOf(fd)[1]) & 3);

            Posix.close(fd, alpha);
            reopenAs(fd, alpha, OpenFlags.O_RDONLY);
            fds.add(fd);
            readBatch(s, fd, "alpha", 2);
            assertEquals(2, d.made(), "same st_dev and st_ino, other access mode: a new entry");
            for (int dup : d.descriptorsOf(fd)) {
                assertEquals(OpenFlags.O_RDONLY, flags(dup) & 3, "descriptor " + dup + " is read-only as the file's now is");
            }

            // F_SETFL on the file's descriptor changes the one description its duplicates share: the entry stays
            long fl = flags(fd);
            assertEquals(0, Posix.syscall(cs, NR_FCNTL, fd, F_SETFL, fl | O_NONBLOCK, 0, 0, 0));
            readBatch(s, fd, "alpha", 3);
            assertEquals(2, d.made(), "flags changed on the shared description keep the entry");
            assertEquals(1, d.retiredCount());
            assertEquals(flags(fd), flags(d.descriptorsOf(fd)[2]));
        }
    }

    @Test
    void aClosedFilesDuplicatesAreClosedWhenASessionCloses() throws IOException {
        int fd = Posix.open(alpha, OpenFlags.O_RDONLY, 0);
        Duplicates d = method.duplicates();
        try (IoSession s = ctx.openSession("t")) {
            readBatch(s, fd, "alpha", 5);
            assertEquals(3, d.open());
            Posix.close(fd, alpha);
        }
        assertEquals(0, d.open(), "the session's close swept the duplicates of the closed descriptor");
        assertEquals(0, d.descriptorsOf(fd).length);
        assertEquals(1, d.retiredCount());
    }

    @Test
    void oneDescriptorPerFileQueuesEveryReadOnTheHandlesDescriptorAndTheSettingAppliesLive() throws IOException {
        int fd = open(alpha, OpenFlags.O_RDONLY);
        Duplicates d = method.duplicates();
        try (IoSession s = ctx.openSession("t")) {
            method.apply(method.settings().withFdsPerFile(1));
            assertEquals(Set.of(fd), readBatch(s, fd, "alpha", 0));
            assertEquals(0, d.descriptorsOf(fd).length);
            assertEquals(0, d.open());

            method.apply(method.settings().withFdsPerFile(2));
            assertEquals(2, readBatch(s, fd, "alpha", 0).size());
            assertEquals(1, d.open());

            method.apply(method.settings().withFdsPerFile(1));
            assertEquals(0, d.open(), "a changed setting retires the entries; nothing in flight: closed at once");
            assertEquals(Set.of(fd), readBatch(s, fd, "alpha", 9));
        }
    }

    /**
     * Sessions in three threads read one descriptor while the setting changes under them: entries are
     * retired with reads in flight, every block read is the file's, and once the reads are over and
     * the setting is 1 no duplicate stays open.
     */
    @Test
    void sessionsReadOneFileWhileTheSettingChangesUnderThem() throws Exception {
        int fd = open(alpha, OpenFlags.O_RDONLY);
        Duplicates d = method.duplicates();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            int first = r;
            Thread t = new Thread(() -> {
                try (IoSession s = ctx.openSession("reader")) {
                    for (int i = 0; !stop.get() || i < 20; i++) {
                        readBatch(s, fd, "alpha", first + i);
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }, "reader-" + r);
            readers.add(t);
            t.start();
        }
        for (int i = 0; i < 200; i++) {
            method.apply(method.settings().withFdsPerFile(2 + i % 3));
            Thread.onSpinWait();
        }
        stop.set(true);
        for (Thread t : readers) {
            t.join();
        }
        assertEquals(List.of(), failures);
        assertTrue(d.retiredCount() > 0, "entries were retired while sessions read");
        method.apply(method.settings().withFdsPerFile(1));
        assertEquals(0, d.open(), "every duplicate closed once its reads were reaped");
    }

    /** Reads of a closed descriptor fail as they would without duplicates: EBADF, and no entry. */
    @Test
    void aClosedDescriptorGetsNoDuplicates() throws IOException {
        int fd = Posix.open(alpha, OpenFlags.O_RDONLY, 0);
        Posix.close(fd, alpha);
        try (IoSession s = ctx.openSession("t")) {
            IoReturn ret = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setIovec(0, arena.allocate(BLOCK, 4096)).setReturn(ret).startReadv(fd, 1, 0);
            s.await(h, gen);
            assertEquals(IoResult.ERROR, ret.status());
            assertTrue(ret.message().contains("EBADF"), ret.message());
        }
        assertEquals(0, method.duplicates().made());
    }
}
