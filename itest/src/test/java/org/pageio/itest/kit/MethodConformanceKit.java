package org.pageio.itest.kit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.Timeout;
import org.pageio.api.AioConfig;
import org.pageio.api.AioContext;
import org.pageio.api.AioException;
import org.pageio.api.IoCallback;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.api.IoSession;
import org.pageio.api.IoTarget;
import org.pageio.itest.PageioTestBase;
import org.pageio.posix.Errno;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;

/**
 * The method conformance kit: what every {@link IoMethod} must do, ours or a third party's. It
 * runs inside Felix (Pax Exam, {@link PageioTestBase}'s container). A method passes by extending
 * this class, adding its bundle to the container, injecting its service and returning it from
 * {@link #method()}:
 *
 * <pre>
 * public class MyMethodConformanceIT extends MethodConformanceKit {
 *     &#64;Inject &#64;Filter("(io.method=mine)") IoMethod method;
 *     &#64;Override protected Option extraOptions() { return reactorBundle("my-method-bundle"); }
 *     &#64;Override protected IoMethod method() { return method; }
 * }
 * </pre>
 *
 * A bundle built elsewhere is checked with {@code ./pageio tck path/to/jar} ({@code tck/README.md}).
 * Every test reads or writes real files in a fresh temporary directory with known content
 * ({@link BlockPattern}), so a wrong byte anywhere fails. The kit uses only the public SPI.
 */
public abstract class MethodConformanceKit extends PageioTestBase {

    protected static final int BLOCK = BlockPattern.BLOCK;
    private static final int FILE_BLOCKS = 64;

    /** The method under test, as its bundle registered it. */
    protected abstract IoMethod method();

    /** Session slots and handles per session for the kit's context. */
    protected AioConfig config() {
        return new AioConfig(16, 16, 16);
    }

    protected Path dir;
    protected Path alpha;
    protected int alphaFd = -1;
    protected Arena arena;
    protected AioContext ctx;
    private final List<Integer> fds = new ArrayList<>();

    @Before
    public void setUpKit() throws IOException {
        assertTrue("io_method=" + method().name() + " must be available on this machine: " + method().availability().cause(),
                method().availability().available());
        dir = Files.createTempDirectory("pageio-kit-" + method().name() + "-");
        alpha = BlockPattern.write(dir.resolve("alpha"), FILE_BLOCKS);
        alphaFd = open(alpha, OpenFlags.O_RDONLY);
        arena = Arena.ofShared();
        ctx = AioContext.create(method(), config());
    }

    /** No test may hang: a method that never completes an I/O fails here, naming the test. */
    @Rule
    public final Timeout timeout = Timeout.builder().withTimeout(120, TimeUnit.SECONDS).withLookingForStuckThread(true).build();

    @After
    public void tearDownKit() throws IOException {
        long extra = ctx == null ? 0 : ctx.extraCompletions();
        if (ctx != null) {
            ctx.close();
        }
        for (int fd : fds) {
            Posix.close(fd, null);
        }
        if (arena != null) {
            arena.close();
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
        assertEquals("io_method=" + method().name() + " called IoHandle.complete() " + extra + " time(s) on a handle that"
                + " was not submitted (an I/O completed twice, or one it was never given): a method must complete each"
                + " I/O exactly once", 0, extra);
    }

    protected int open(Path p, int flags) throws IOException {
        int fd = Posix.open(p, flags, 0600);
        fds.add(fd);
        return fd;
    }

    protected MemorySegment block() {
        return arena.allocate(BLOCK, 4096);
    }

    /** Reads {@code n} blocks from {@code firstBlock} into {@code bufs} and returns the outcome. */
    protected IoReturn readv(IoSession s, int fd, long firstBlock, MemorySegment... bufs) {
        IoReturn ret = new IoReturn();
        IoHandle h = s.acquire();
        long gen = h.generation();
        for (int i = 0; i < bufs.length; i++) {
            h.setIovec(i, bufs[i]);
        }
        h.setReturn(ret).setTarget(IoTarget.file(alpha), firstBlock);
        h.startReadv(fd, bufs.length, firstBlock * BLOCK);
        s.await(h, gen);
        return ret;
    }

    private static void assertBlock(String name, long block, MemorySegment buf) {
        assertNull(BlockPattern.check(name, block, buf));
    }

    // ------------------------------------------------------------------ reads

    @Test
    public void readsOneBlock() {
        try (IoSession s = ctx.openSession("kit")) {
            MemorySegment buf = block();
            IoReturn ret = readv(s, alphaFd, 17, buf);
            assertEquals(ret.message(), IoResult.OK, ret.status());
            assertEquals(BLOCK, IoResult.result(ret.result()));
            assertBlock("alpha", 17, buf);
        }
    }

    @Test
    public void readsVectorIntoNonAdjacentBuffers() {
        // Four blocks scattered over one region, with sentinel gaps that must stay untouched.
        MemorySegment region = arena.allocate(BLOCK * 9L, 4096);
        region.fill((byte) 0x5A);
        MemorySegment[] bufs = {region.asSlice(6L * BLOCK, BLOCK), region.asSlice(0, BLOCK),
            region.asSlice(8L * BLOCK, BLOCK), region.asSlice(3L * BLOCK, BLOCK)};
        try (IoSession s = ctx.openSession("kit")) {
            IoReturn ret = readv(s, alphaFd, 40, bufs);
            assertEquals(ret.message(), IoResult.OK, ret.status());
            assertEquals(4 * BLOCK, IoResult.result(ret.result()));
        }
        for (int i = 0; i < bufs.length; i++) {
            assertBlock("alpha", 40 + i, bufs[i]);
        }
        for (long gap : new long[] {1, 2, 4, 5, 7}) {
            for (long off = gap * BLOCK; off < (gap + 1) * BLOCK; off += 511) {
                assertEquals("gap block " + gap + " was written", (byte) 0x5A, region.get(ValueLayout.JAVA_BYTE, off));
            }
        }
    }

    @Test
    public void completesManyHandlesInFlight() {
        int n = ctx.config().ioMaxConcurrency();
        MemorySegment[] bufs = new MemorySegment[n];
        IoReturn[] rets = new IoReturn[n];
        IoHandle[] hs = new IoHandle[n];
        long[] gens = new long[n];
        try (IoSession s = ctx.openSession("kit")) {
            s.enterBatchMode();
            for (int i = 0; i < n; i++) {
                bufs[i] = block();
                rets[i] = new IoReturn();
                hs[i] = s.acquire();
                gens[i] = hs[i].generation();
                hs[i].setIovec(0, bufs[i]).setReturn(rets[i]).startReadv(alphaFd, 1, (long) (n - 1 - i) * BLOCK);
            }
            s.exitBatchMode();
            for (int i = n - 1; i >= 0; i--) { // wait newest first: completion order is the method's
                s.await(hs[i], gens[i]);
            }
            assertEquals(0, s.inFlightCount());
        }
        for (int i = 0; i < n; i++) {
            assertEquals(rets[i].message(), IoResult.OK, rets[i].status());
            assertBlock("alpha", n - 1 - i, bufs[i]);
        }
    }

    @Test
    public void servesSeveralSessionsOnSeveralThreads() throws Exception {
        int threads = 4;
        int readsEach = 500;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int seed = t;
                results.add(pool.submit(() -> randomReads(seed, readsEach)));
            }
            for (Future<Integer> f : results) {
                assertEquals(Integer.valueOf(readsEach), f.get(120, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
        assertTrue(ctx.openSessions().isEmpty());
    }

    private int randomReads(int seed, int count) {
        Random rnd = new Random(seed);
        int depth = 8;
        int verified = 0;
        try (Arena a = Arena.ofConfined(); IoSession s = ctx.openSession("kit-" + seed)) {
            MemorySegment[] bufs = new MemorySegment[depth];
            IoReturn[] rets = new IoReturn[depth];
            IoHandle[] hs = new IoHandle[depth];
            long[] gens = new long[depth];
            long[] blocks = new long[depth];
            for (int i = 0; i < depth; i++) {
                bufs[i] = a.allocate(2L * BLOCK, 4096);
                rets[i] = new IoReturn();
            }
            for (int n = 0; n < count + depth; n++) {
                int slot = n % depth;
                if (hs[slot] != null) {
                    s.await(hs[slot], gens[slot]);
                    assertEquals(rets[slot].message(), IoResult.OK, rets[slot].status());
                    assertBlock("alpha", blocks[slot], bufs[slot].asSlice(0, BLOCK));
                    assertBlock("alpha", blocks[slot] + 1, bufs[slot].asSlice(BLOCK, BLOCK));
                    verified++;
                    hs[slot] = null;
                }
                if (n < count) {
                    blocks[slot] = rnd.nextInt(FILE_BLOCKS - 1);
                    IoHandle h = s.acquire();
                    hs[slot] = h;
                    gens[slot] = h.generation();
                    h.setIovec(0, bufs[slot].asSlice(0, BLOCK)).setIovec(1, bufs[slot].asSlice(BLOCK, BLOCK))
                            .setReturn(rets[slot]).startReadv(alphaFd, 2, blocks[slot] * BLOCK);
                }
            }
        }
        return verified;
    }

    @Test
    public void readPastEndOfFileIsPartialWithTheShortLength() {
        try (IoSession s = ctx.openSession("kit")) {
            IoReturn ret = readv(s, alphaFd, FILE_BLOCKS - 1, block(), block(), block());
            assertEquals(ret.message(), IoResult.PARTIAL, ret.status());
            assertEquals(BLOCK, IoResult.result(ret.result()));
            IoReturn beyond = readv(s, alphaFd, FILE_BLOCKS + 5, block());
            assertEquals(beyond.message(), IoResult.PARTIAL, beyond.status());
            assertEquals(0, IoResult.result(beyond.result()));
        }
    }

    @Test
    public void closedOrInvalidDescriptorIsAnErrorWithEbadf() throws IOException {
        int closed = Posix.open(alpha, OpenFlags.O_RDONLY, 0);
        Posix.close(closed, alpha);
        try (IoSession s = ctx.openSession("kit")) {
            for (int fd : new int[] {closed, -1}) {
                IoReturn ret = readv(s, fd, 0, block());
                assertEquals(ret.message(), IoResult.ERROR, ret.status());
                assertEquals(-Errno.EBADF, IoResult.result(ret.result()));
                try {
                    ret.throwIfFailed();
                    fail("no exception for " + ret);
                } catch (AioException e) {
                    assertEquals(Errno.EBADF, e.errno());
                    assertTrue(e.getMessage(), e.getMessage().contains("EBADF") && e.getMessage().contains("alpha"));
                }
            }
        }
    }

    // ------------------------------------------------------------------ writes and fsync

    @Test
    public void writevThenFsyncThenReadBack() throws IOException {
        Path gamma = dir.resolve("gamma");
        int fd = open(gamma, OpenFlags.O_RDWR | OpenFlags.O_CREAT);
        MemorySegment[] out = {block(), block(), block()};
        for (int i = 0; i < out.length; i++) {
            BlockPattern.fill("gamma", 5 + i, out[i]);
        }
        try (IoSession s = ctx.openSession("kit")) {
            IoReturn w = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setIovec(0, out[0]).setIovec(1, out[1]).setIovec(2, out[2]).setReturn(w).setTarget(IoTarget.file(gamma), 5);
            h.startWritev(fd, 3, 5L * BLOCK);
            s.await(h, gen);
            assertEquals(w.message(), IoResult.OK, w.status());
            assertEquals(3 * BLOCK, IoResult.result(w.result()));

            for (boolean dataOnly : new boolean[] {false, true}) {
                IoReturn f = new IoReturn();
                IoHandle fh = s.acquire();
                long fgen = fh.generation();
                fh.setReturn(f).setTarget(IoTarget.file(gamma), 0).startFsync(fd, dataOnly);
                s.await(fh, fgen);
                assertEquals(f.message(), IoResult.OK, f.status());
            }

            MemorySegment[] in = {block(), block(), block()};
            IoReturn r = readv(s, fd, 5, in);
            assertEquals(r.message(), IoResult.OK, r.status());
            for (int i = 0; i < in.length; i++) {
                assertBlock("gamma", 5 + i, in[i]);
            }
        }
        assertEquals(8L * BLOCK, Files.size(gamma));
    }

    @Test
    public void fsyncOfAnInvalidDescriptorIsAnError() {
        try (IoSession s = ctx.openSession("kit")) {
            IoReturn f = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setReturn(f).startFsync(-1, false);
            s.await(h, gen);
            assertEquals(IoResult.ERROR, f.status());
            assertEquals(-Errno.EBADF, IoResult.result(f.result()));
        }
    }

    // ------------------------------------------------------------------ callbacks and wait references

    @Test
    public void callbacksSeeTheResultAndExceptionsBecomeErrors() {
        IoCallback checking = new IoCallback() {
            public String name() {
                return "kit_check";
            }

            public long completeShared(IoHandle h, long r, int data) {
                if (data == 1) {
                    throw new IllegalStateException("kit callback refuses block");
                }
                return IoResult.status(r) == IoResult.OK ? IoResult.withStatus(r, IoResult.WARNING, 42) : r;
            }
        };
        try (IoSession s = ctx.openSession("kit")) {
            for (int data = 0; data <= 1; data++) {
                IoReturn ret = new IoReturn();
                IoHandle h = s.acquire();
                long gen = h.generation();
                h.setIovec(0, block()).setReturn(ret).setTarget(IoTarget.file(alpha), 3).addCallback(checking, data);
                h.startReadv(alphaFd, 1, 3L * BLOCK);
                s.await(h, gen);
                if (data == 0) {
                    assertEquals(IoResult.WARNING, ret.status());
                    assertEquals(42, IoResult.errorData(ret.result()));
                    assertEquals(BLOCK, IoResult.result(ret.result()));
                } else {
                    assertEquals(IoResult.ERROR, ret.status());
                    assertTrue(ret.message(), ret.message().contains("kit callback refuses block"));
                }
            }
        }
    }

    @Test
    public void waitReferenceWorksFromAThreadWithoutASession() throws Exception {
        try (IoSession s = ctx.openSession("kit")) {
            MemorySegment buf = block();
            IoHandle h = s.acquire();
            long gen = h.generation();
            int index = h.index();
            h.setIovec(0, buf).startReadv(alphaFd, 1, 9L * BLOCK);
            Thread other = new Thread(() -> ctx.await(index, gen), "kit waiter");
            other.start();
            other.join(30_000);
            assertTrue("a waiter without a session saw the I/O complete", !other.isAlive());
            assertTrue(ctx.checkDone(index, gen));
            s.await(h, gen);
            assertBlock("alpha", 9, buf);
            assertTrue("a reclaimed I/O stays done for old wait references", ctx.checkDone(index, gen));
        }
    }
}
