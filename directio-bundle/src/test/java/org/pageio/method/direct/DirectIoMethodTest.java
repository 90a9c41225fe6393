package org.pageio.method.direct;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.pageio.api.AioConfig;
import org.pageio.api.AioContext;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.api.IoSession;
import org.pageio.api.IoTarget;
import org.pageio.posix.Errno;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;
import org.pageio.uring.IoUringCounters;

@Timeout(30)
class DirectIoMethodTest {

    static final int BLOCK = 8192;

    @TempDir
    Path dir;

    final Arena arena = Arena.ofShared();
    final List<Integer> fds = new ArrayList<>();
    final List<AutoCloseable> closers = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closers.size() - 1; i >= 0; i--) {
            closers.get(i).close();
        }
        for (int fd : fds) {
            Posix.close(fd, null);
        }
        arena.close();
    }

    DirectIoMethod method(String engine) {
        DirectIoMethod m = new DirectIoMethod(new DirectSettings(DirectSettings.EngineChoice.parse(engine), 4));
        closers.add(m::close);
        assertTrue(m.availability().available(), m.availability().cause());
        return m;
    }

    AioContext context(IoMethod m) {
        AioContext ctx = AioContext.create(m, new AioConfig(4, 16, 16));
        closers.add(ctx::close);
        return ctx;
    }

    int open(Path p, int flags) throws Exception {
        int fd = Posix.open(p, flags, 0600);
        fds.add(fd);
        return fd;
    }

    static byte pattern(long block, int i) {
        return (byte) (block * 31 + i * 7 + (i >>> 9));
    }

    Path file(String name, int blocks) throws Exception {
        byte[] b = new byte[blocks * BLOCK];
        for (int blk = 0; blk < blocks; blk++) {
            for (int i = 0; i < BLOCK; i++) {
                b[blk * BLOCK + i] = pattern(blk, i);
            }
        }
        return Files.write(dir.resolve(name), b);
    }

    static IoTarget blocks(Path p) {
        return data -> "file " + p + " block " + data;
    }

    IoReturn read(IoSession s, Path p, int fd, long block, long address, long len, long offset) {
        IoReturn ret = new IoReturn();
        IoHandle h = s.acquire();
        long gen = h.generation();
        h.setIovec(0, address, len).setReturn(ret).setTarget(blocks(p), block).startReadv(fd, 1, offset);
        s.await(h, gen);
        return ret;
    }

    @ParameterizedTest
    @ValueSource(strings = {"io_uring", "threads"})
    void reportsItsEngineAndWhy(String engine) {
        DirectIoMethod m = method(engine);
        assertEquals(engine, m.engine().toString());
        assertTrue(m.availability().cause().startsWith("engine " + engine), m.availability().cause());
        assertTrue(m.toString().contains("engine " + engine + ": " + m.engineReason()), m.toString());
        assertEquals(engine.equals("io_uring"), m.hasWaitOne());
    }

    @Test
    void autoPicksIoUringWhenAvailable() {
        DirectIoMethod m = method("auto");
        assertEquals(DirectIoMethod.Engine.IO_URING, m.engine());
        assertTrue(m.engineReason().contains("io_uring is available here (engine = auto)"), m.engineReason());
    }

    @Test
    void unknownEngineIsUnavailableWithTheCause() {
        DirectIoMethod m = new DirectIoMethod();
        m.activate(null, Map.of("engine", "spdk"));
        assertFalse(m.availability().available());
        assertTrue(m.availability().cause().contains("engine = spdk is not one of auto, io_uring, threads"));
        assertThrows(IllegalArgumentException.class, () -> DirectSettings.EngineChoice.parse("spdk"));
    }

    @Test
    void settingsAreValidatedByName() {
        DirectIoMethod m = new DirectIoMethod();
        m.activate(null, Map.of("engine", "threads", "io_direct_threads", "0"));
        assertFalse(m.availability().available());
        assertEquals("io_method=direct: io_direct_threads = 0 is out of range: valid values are 1..1024",
                m.availability().cause());
        m.activate(null, Map.of("io_direct_threads", "many"));
        assertEquals("io_method=direct: io_direct_threads = many is not an integer: valid values are 1..1024",
                m.availability().cause());
        assertEquals(DirectSettings.EngineChoice.THREADS, DirectSettings.EngineChoice.parse(" Threads "));
        assertEquals(DirectSettings.EngineChoice.AUTO, DirectSettings.EngineChoice.parse(null));
        assertEquals("engine = auto, io_direct_threads = 16", DirectSettings.DEFAULTS.describe());
    }

    @ParameterizedTest
    @ValueSource(strings = {"io_uring", "threads"})
    void misalignedBufferLengthAndOffsetAreRefusedBeforeTheKernel(String engine) throws Exception {
        Path p = file("rel", 8);
        int fd = open(p, OpenFlags.O_RDONLY);
        AioContext ctx = context(method(engine));
        MemorySegment buf = arena.allocate(4L * BLOCK, 4096);
        MemorySegment before = arena.allocate(4L * BLOCK);
        buf.fill((byte) 0x5A);
        before.copyFrom(buf);
        try (IoSession s = ctx.openSession("t")) {
            IoReturn bad = read(s, p, fd, 2, buf.address() + 512, BLOCK, 2L * BLOCK);
            assertRefused(bad, p, 2, "buffer address 0x" + Long.toHexString(buf.address() + 512) + " is not aligned to 4096 bytes");

            bad = read(s, p, fd, 3, buf.address(), BLOCK - 512, 3L * BLOCK);
            assertRefused(bad, p, 3, "transfer length 7680 is not a multiple of 4096 bytes");

            bad = read(s, p, fd, 1, buf.address(), BLOCK, BLOCK + 1024);
            assertRefused(bad, p, 1, "file offset 9216 is not aligned to 4096 bytes");

            assertEquals(-1L, buf.mismatch(before), "a refused read must not touch the buffer");
            assertEquals(3, DirectIoMethod.sessionStats(s)[2]);

            // and the aligned read that follows works
            IoReturn ok = read(s, p, fd, 5, buf.address(), BLOCK, 5L * BLOCK);
            assertEquals(IoResult.OK, ok.status(), ok.message());
            for (int i = 0; i < BLOCK; i++) {
                assertEquals(pattern(5, i), buf.get(ValueLayout.JAVA_BYTE, i));
            }
        }
        assertTrue(DirectFiles.isDirect(fd), "the descriptor was taken into O_DIRECT mode");
    }

    private static void assertRefused(IoReturn r, Path p, long block, String what) {
        assertEquals(IoResult.ERROR, r.status(), r.message());
        assertEquals(-Errno.EINVAL, IoResult.result(r.result()));
        String m = r.message();
        assertTrue(m.startsWith("could not readv "), m);
        assertTrue(m.contains("file " + p + " block " + block), m);
        assertTrue(m.contains("EINVAL"), m);
        assertTrue(m.contains("direct I/O refused before the kernel: " + what), m);
    }

    /** A buffered method (as sync): every I/O inline, through the page cache. */
    static final IoMethod BUFFERED = new IoMethod() {
        public String name() {
            return "buffered";
        }

        public boolean needsSynchronousExecution(IoHandle h) {
            return true;
        }

        public int submit(IoHandle[] handles, int count) {
            throw new AssertionError();
        }
    };

    @ParameterizedTest
    @ValueSource(strings = {"io_uring", "threads"})
    void bufferedWriteThenDirectReadReturnsTheWrittenBytes(String engine) throws Exception {
        Path p = file("switch", 16);
        int bufferedFd = open(p, OpenFlags.O_RDWR);
        MemorySegment out = arena.allocate(2L * BLOCK, 4096);
        for (int i = 0; i < 2 * BLOCK; i++) {
            out.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + 1));
        }
        // write blocks 6..7 through a buffered method: the new bytes are dirty in the page cache only
        try (IoSession s = context(BUFFERED).openSession("buffered")) {
            IoReturn w = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setIovec(0, out).setReturn(w).setTarget(blocks(p), 6).startWritev(bufferedFd, 1, 6L * BLOCK);
            s.await(h, gen);
            assertEquals(IoResult.OK, w.status(), w.message());
        }
        assertFalse(DirectFiles.isDirect(bufferedFd));
        // a direct read, on the storage manager's own descriptor, and one on the same descriptor
        int directFd = open(p, OpenFlags.O_RDONLY | OpenFlags.O_DIRECT);
        AioContext ctx = context(method(engine));
        MemorySegment in = arena.allocate(2L * BLOCK, 4096);
        try (IoSession s = ctx.openSession("direct")) {
            for (int fd : new int[] {directFd, bufferedFd}) {
                in.fill((byte) 0);
                IoReturn r = read(s, p, fd, 6, in.address(), 2L * BLOCK, 6L * BLOCK);
                assertEquals(IoResult.OK, r.status(), r.message());
                assertEquals(-1L, in.mismatch(out), "the direct read returned the bytes written through the page cache");
                read(s, p, fd, 6, in.address(), 2L * BLOCK, 6L * BLOCK); // second read: no second flush
            }
            long[] stats = DirectIoMethod.sessionStats(s);
            assertEquals(2, stats[0], "both descriptors set up once");
            assertEquals(2, stats[1], "one fdatasync before the first direct read of each descriptor");
        }
        assertTrue(DirectFiles.isDirect(bufferedFd));
        DirectIoMethod m = (DirectIoMethod) ctx.method();
        IoUringCounters rings = m.ringCounters(); // what the benchmark prints, added up when the session closed
        if (engine.equals("io_uring")) {
            assertEquals(1, rings.rings(), "one session's ring");
            assertEquals(4, rings.submitted(), "4 reads, each its own submission");
            assertEquals(4, rings.submitSamples(), "4 submissions sampled");
            assertEquals(0, rings.inFlightAtSubmitSum(), "each read waited for before the next: none in flight at a submission");
        } else {
            assertEquals(0, rings.rings(), "the threads engine has no ring");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"io_uring", "threads"})
    void fileSystemRefusingODirectNamesTheFileTheTypeAndTheWayOut(String engine) throws Exception {
        // procfs has no direct I/O: fcntl(F_SETFL, O_DIRECT) answers EINVAL, as open(O_DIRECT) would
        Path p = Path.of("/proc/self/stat");
        int fd = open(p, OpenFlags.O_RDONLY);
        AioContext ctx = context(method(engine));
        MemorySegment buf = arena.allocate(BLOCK, 4096);
        try (IoSession s = ctx.openSession("t")) {
            IoReturn r = read(s, p, fd, 0, buf.address(), BLOCK, 0);
            assertEquals(IoResult.ERROR, r.status(), r.message());
            assertEquals(-Errno.EINVAL, IoResult.result(r.result()));
            String m = r.message();
            assertTrue(m.contains("O_DIRECT refused for /proc/"), m);
            assertTrue(m.contains("on file system proc (0x9fa0)"), m);
            assertTrue(m.contains("use io_method=io_uring, worker or sync"), m);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"io_uring", "threads"})
    void closedDescriptorIsEbadfAndWritesAreDirect(String engine) throws Exception {
        Path p = file("w", 4);
        int closed = Posix.open(p, OpenFlags.O_RDONLY, 0);
        Posix.close(closed, p);
        AioContext ctx = context(method(engine));
        MemorySegment buf = arena.allocate(BLOCK, 4096);
        try (IoSession s = ctx.openSession("t")) {
            IoReturn r = read(s, p, closed, 0, buf.address(), BLOCK, 0);
            assertEquals(-Errno.EBADF, IoResult.result(r.result()), r.message());
        }
    }
}
