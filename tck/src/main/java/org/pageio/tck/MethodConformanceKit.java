package org.pageio.tck;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntUnaryOperator;
import java.util.stream.Stream;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.Timeout;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceEvent;
import org.osgi.framework.ServiceListener;
import org.osgi.framework.ServiceReference;
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
import org.pageio.api.MethodSwap;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.method.fault.FaultPlan;
import org.pageio.posix.Errno;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;

/**
 * The method conformance kit: what every {@link IoMethod} must do, ours or a third party's. It
 * runs inside Felix (Pax Exam, {@link KitContainer}'s container). A method passes by extending
 * this class, adding its bundle to the container, injecting its service and returning it from
 * {@link #method()}:
 *
 * <pre>
 * public class MyMethodConformanceIT extends MethodConformanceKit {
 *     &#64;Inject &#64;Filter("(io.method=mine)") IoMethod method;
 *     &#64;Override protected Option extraOptions() { return classpathBundle("org.example.mine"); }
 *     &#64;Override protected IoMethod method() { return method; }
 * }
 * </pre>
 *
 * or, simpler, by extending {@link MethodBundleKit}, which finds the service the bundle registers.
 * {@link InProcessMethodKit} runs the same tests in process on JUnit 5, for unit-test speed,
 * through the hooks {@link #registeredName()} and {@link #lifeCycle}; a test that only a container
 * can check is marked {@link NeedsContainer} (none is).
 * A bundle built elsewhere is checked with {@code ./pageio tck path/to/jar} ({@code tck/README.md}).
 * Every test reads or writes real files in a fresh temporary directory with known content
 * ({@link BlockPattern}), so a wrong byte anywhere fails. The kit uses only the public SPI.
 *
 * <p>The tests are grouped by area — reads, short transfers, writes and fsync, errors, handles and
 * completion, callbacks, waits, sessions and descriptors, under the buffer manager, stress, the
 * method's life cycle — and each one's name is the rule it checks ({@code tck/README.md} lists
 * them). A failure says what the method did and what it must do. Rules that depend on the page
 * cache follow {@link IoMethod#bypassesPageCache()}. One test stops and starts the method's bundle.
 */
public abstract class MethodConformanceKit extends KitContainer {

    protected static final int BLOCK = BlockPattern.BLOCK;
    private static final int FILE_BLOCKS = 64;
    /** Longest any wait of the kit may take before it counts as a hang: a hang guard, not a speed test. */
    private static final long HANG_SECONDS = 60;

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
    private ExecutorService threads;

    @Before
    public void setUpKit() throws IOException {
        IoMethod.Availability a = method().availability();
        if (!a.available()) {
            assertReadable(a.cause(), "availability().cause() of a method that is not available");
        }
        assertTrue("io_method=" + method().name() + " must be available on this machine: " + a.cause(), a.available());
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
        if (threads != null) {
            threads.shutdownNow();
        }
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
        if (dir != null) { // null when setUpKit failed first (an unavailable method): that failure is the test's
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
        assertCompletedOnce(extra);
    }

    /** {@code extra} ({@link AioContext#extraCompletions()}) is 0. */
    private void assertCompletedOnce(long extra) {
        assertEquals("io_method=" + method().name() + " called IoHandle.complete() " + extra + " time(s) on a handle that"
                + " was not submitted (an I/O completed twice, or one it was never given): a method must complete each"
                + " I/O exactly once", 0, extra);
    }

    // ------------------------------------------------------------------ helpers

    /** {@code io_method=NAME}, the start of every failure message. */
    protected final String io() {
        return "io_method=" + method().name();
    }

    protected int open(Path p, int flags) throws IOException {
        int fd = Posix.open(p, flags, 0600);
        fds.add(fd);
        return fd;
    }

    protected MemorySegment block() {
        return arena.allocate(BLOCK, 4096);
    }

    /** {@code bytes} of buffer, 4096-aligned, filled with {@code sentinel}. */
    private MemorySegment region(long bytes, byte sentinel) {
        MemorySegment r = arena.allocate(bytes, 4096);
        r.fill(sentinel);
        return r;
    }

    /** Threads for tests that wait or issue from several threads; stopped after each test. */
    private ExecutorService threads() {
        if (threads == null) {
            threads = Executors.newCachedThreadPool(r -> {
                Thread t = new Thread(r, "pageio kit " + method().name());
                t.setDaemon(true);
                return t;
            });
        }
        return threads;
    }

    /** Runs {@code task} in another thread and waits for it, failing with {@code hang} if it does not end. */
    private <T> T inAnotherThread(String hang, Callable<T> task) throws Exception {
        Future<T> f = threads().submit(task);
        try {
            return f.get(HANG_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            throw new AssertionError(hang + " (still waiting after " + HANG_SECONDS + " s)");
        } catch (ExecutionException e) {
            throw cause(e);
        }
    }

    /** What a task of another thread threw: an assertion failure as itself, so its message stays the failure's. */
    private static Exception cause(ExecutionException e) {
        if (e.getCause() instanceof Error err) {
            throw err;
        }
        return e.getCause() instanceof Exception x ? x : e;
    }

    /** An I/O started and not waited for yet: its handle, generation, wait reference and return. */
    protected record Pending(IoHandle handle, long generation, long ref, IoReturn ret, String what) {
    }

    /**
     * Starts a vectored read ({@code write} false) or write of {@code bufs} at byte {@code offset}
     * of {@code file} through {@code fd}, with {@code flags} and an optional callback.
     */
    protected Pending start(IoSession s, boolean write, int fd, Path file, long offset, int flags, IoCallback callback,
            MemorySegment... bufs) {
        IoReturn ret = new IoReturn();
        IoHandle h = s.acquire();
        long gen = h.generation();
        long ref = h.waitRef();
        long length = 0;
        for (int i = 0; i < bufs.length; i++) {
            h.setIovec(i, bufs[i]);
            length += bufs[i].byteSize();
        }
        h.setReturn(ret).setTarget(IoTarget.file(file), offset / BLOCK);
        if (flags != 0) {
            h.setFlags(flags);
        }
        if (callback != null) {
            h.addCallback(callback, 0);
        }
        String what = (write ? "a writev" : "a readv") + " of " + length + " bytes in " + bufs.length + " iovec(s) at offset "
                + offset + " of " + file.getFileName();
        if (write) {
            h.startWritev(fd, bufs.length, offset);
        } else {
            h.startReadv(fd, bufs.length, offset);
        }
        return new Pending(h, gen, ref, ret, what);
    }

    protected Pending startRead(IoSession s, int fd, Path file, long offset, MemorySegment... bufs) {
        return start(s, false, fd, file, offset, 0, null, bufs);
    }

    protected Pending startFsync(IoSession s, int fd, Path file, boolean dataOnly) {
        IoReturn ret = new IoReturn();
        IoHandle h = s.acquire();
        long gen = h.generation();
        long ref = h.waitRef();
        h.setReturn(ret).setTarget(IoTarget.file(file), 0).startFsync(fd, dataOnly);
        return new Pending(h, gen, ref, ret, (dataOnly ? "an fdatasync" : "an fsync") + " of " + file.getFileName());
    }

    /** Waits for {@code p} in its owner and returns its outcome. */
    protected static IoReturn finish(IoSession s, Pending p) {
        s.await(p.handle(), p.generation());
        return p.ret();
    }

    /** Reads {@code n} blocks from {@code firstBlock} into {@code bufs} and returns the outcome. */
    protected IoReturn readv(IoSession s, int fd, long firstBlock, MemorySegment... bufs) {
        return finish(s, startRead(s, fd, alpha, firstBlock * BLOCK, bufs));
    }

    /**
     * Starts one-block reads of alpha through {@code fd} into new buffers {@code bufs[i]}, block
     * {@code blockOf(i)}, staged in batch mode, and submits them by leaving it unless
     * {@code stayInBatch}.
     */
    private List<Pending> readBlocks(IoSession s, int fd, MemorySegment[] bufs, IntUnaryOperator blockOf, boolean stayInBatch) {
        List<Pending> io = new ArrayList<>();
        s.enterBatchMode();
        for (int i = 0; i < bufs.length; i++) {
            bufs[i] = block();
            io.add(startRead(s, fd, alpha, (long) blockOf.applyAsInt(i) * BLOCK, bufs[i]));
        }
        if (!stayInBatch) {
            s.exitBatchMode();
        }
        return io;
    }

    private List<Pending> readBlocks(IoSession s, MemorySegment[] bufs, IntUnaryOperator blockOf) {
        return readBlocks(s, alphaFd, bufs, blockOf, false);
    }

    /** Waits for each of {@code io} in turn; each must have read block {@code blockOf(i)} of alpha into {@code bufs[i]}. */
    private void finishBlocks(IoSession s, List<Pending> io, MemorySegment[] bufs, IntUnaryOperator blockOf, String when) {
        for (int i = 0; i < io.size(); i++) {
            assertOk(finish(s, io.get(i)), BLOCK, io.get(i).what() + when);
            assertBlock("alpha", blockOf.applyAsInt(i), bufs[i]);
        }
    }

    private void assertBlock(String name, long block, MemorySegment buf) {
        assertBytes("read block " + block + " of " + name, name, block * BLOCK, buf);
    }

    /** {@code buf} holds the bytes of pattern file {@code name} from {@code offset} on. */
    private void assertBytes(String what, String name, long offset, MemorySegment buf) {
        String wrong = BlockPattern.checkAt(name, offset, buf);
        if (wrong != null) {
            fail(io() + " " + what + ": " + wrong + "; a method must transfer exactly the bytes at the I/O's offset, in"
                    + " iovec order");
        }
    }

    /** {@code p} completed OK with {@code bytes}. */
    private void assertOk(Pending p, long bytes) {
        assertOk(p.ret(), bytes, p.what());
    }

    private void assertOk(IoReturn r, long bytes, String what) {
        if (r.status() != IoResult.OK || IoResult.result(r.result()) != bytes) {
            fail(io() + " returned " + IoResult.toString(r.result()) + " (" + r.message() + ") for " + what
                    + "; a method must complete it OK with " + bytes + " bytes");
        }
    }

    /** {@code r} is an ERROR carrying {@code -errno}, and its message names the errno. */
    private void assertErrno(IoReturn r, int errno, String what) {
        if (r.status() != IoResult.ERROR || IoResult.result(r.result()) != -errno) {
            fail(io() + " returned " + IoResult.toString(r.result()) + " (" + r.message() + ") for " + what
                    + "; a method must pass the kernel's error to IoHandle.complete as -" + Errno.name(errno));
        }
        assertTrue(io() + ": the message for " + what + " does not name " + Errno.name(errno) + ": " + r.message(),
                r.message().contains(Errno.name(errno)));
    }

    /** Every byte of {@code seg} is still {@code sentinel}. */
    private void assertUntouched(MemorySegment seg, byte sentinel, String what) {
        long i = firstOther(seg, sentinel);
        if (i >= 0) {
            fail(io() + " wrote byte " + i + " of " + what + ", which the I/O did not transfer ("
                    + seg.get(ValueLayout.JAVA_BYTE, i) + " instead of the sentinel " + sentinel + "); a method must touch only"
                    + " the bytes it reports");
        }
    }

    /** The index of the first byte of {@code seg} that is not {@code value}, or -1. */
    private static long firstOther(MemorySegment seg, byte value) {
        for (long i = 0; i < seg.byteSize(); i++) {
            if (seg.get(ValueLayout.JAVA_BYTE, i) != value) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Every byte of {@code seg}, which lies past the end of the file, is still {@code sentinel}. Not
     * asserted for a method that bypasses the page cache: an O_DIRECT read past the end of a file
     * may zero the buffer there (the kernel reads it as a hole) while it reports only the bytes
     * before the end.
     */
    private void assertUntouchedPastEof(MemorySegment seg, byte sentinel, String what) {
        if (!method().bypassesPageCache()) {
            assertUntouched(seg, sentinel, what);
        }
    }

    /** The I/O is done: its handle reached COMPLETED_SHARED for that generation, or was reused since. */
    private static boolean done(Pending p) {
        IoHandle h = p.handle();
        int state = h.state();
        return h.generation() != p.generation() || state >= IoHandle.COMPLETED_SHARED;
    }

    /** A sentence a person can act on: not blank, one line, several words, not a bare exception. */
    private void assertReadable(String text, String what) {
        assertNotNull(io() + ": " + what + " is null; it must say why in a sentence", text);
        String t = text.strip();
        assertTrue(io() + ": " + what + " is not a readable sentence: \"" + text + "\"; it must say what a person can do",
                t.length() >= 12 && t.indexOf(' ') > 0 && !t.contains("\n") && !t.matches("^[\\w.$]+(Exception|Error)(:.*)?$")
                        && !t.equals("null"));
    }

    /** A descriptor number just closed: EBADF for every call until something reuses the number. */
    private int closedDescriptor() throws IOException {
        int fd = Posix.open(alpha, OpenFlags.O_RDONLY, 0);
        Posix.close(fd, alpha);
        return fd;
    }

    private static Path pattern(Path dir, String name, int blocks) throws IOException {
        return BlockPattern.write(dir.resolve(name), blocks);
    }

    // ------------------------------------------------------------------ reads

    @Test
    public void readsOneBlock() {
        try (IoSession s = ctx.openSession("kit")) {
            MemorySegment buf = block();
            IoReturn ret = readv(s, alphaFd, 17, buf);
            assertOk(ret, BLOCK, "a readv of block 17 of alpha");
            assertBlock("alpha", 17, buf);
        }
    }

    @Test
    public void readsVectorIntoNonAdjacentBuffers() {
        // Four blocks scattered over one region, with sentinel gaps that must stay untouched.
        MemorySegment region = region(BLOCK * 9L, (byte) 0x5A);
        MemorySegment[] bufs = {region.asSlice(6L * BLOCK, BLOCK), region.asSlice(0, BLOCK),
            region.asSlice(8L * BLOCK, BLOCK), region.asSlice(3L * BLOCK, BLOCK)};
        try (IoSession s = ctx.openSession("kit")) {
            assertOk(readv(s, alphaFd, 40, bufs), 4 * BLOCK, "a readv of blocks 40-43 of alpha into 4 scattered iovecs");
        }
        for (int i = 0; i < bufs.length; i++) {
            assertBlock("alpha", 40 + i, bufs[i]);
        }
        for (long gap : new long[] {1, 2, 4, 5, 7}) {
            assertUntouched(region.asSlice(gap * BLOCK, BLOCK), (byte) 0x5A, "the gap block " + gap + " between iovecs");
        }
    }

    @Test
    public void readsAsManyIovecsAsTheCombineLimitInOneIo() {
        int n = ctx.config().ioMaxCombineLimit();
        MemorySegment[] bufs = new MemorySegment[n];
        for (int i = 0; i < n; i++) {
            bufs[i] = block();
        }
        try (IoSession s = ctx.openSession("kit")) {
            assertOk(readv(s, alphaFd, 20, bufs), (long) n * BLOCK, "a readv of " + n + " iovecs (io_max_combine_limit)");
        }
        for (int i = 0; i < n; i++) {
            assertBlock("alpha", 20 + i, bufs[i]);
        }
    }

    @Test
    public void readsIovecsOfUnequalLengthsBackToBack() {
        long[] lengths = {4096, 3 * 4096, 4096, 2 * 4096, 4096};
        MemorySegment[] bufs = new MemorySegment[lengths.length];
        long total = 0;
        for (int i = 0; i < bufs.length; i++) {
            bufs[i] = arena.allocate(lengths[i], 4096);
            total += lengths[i];
        }
        long offset = 3 * 4096;
        try (IoSession s = ctx.openSession("kit")) {
            assertOk(finish(s, startRead(s, alphaFd, alpha, offset, bufs)), total, "a readv of iovecs of 4, 12, 4, 8 and 4 KiB");
        }
        long at = offset;
        for (int i = 0; i < bufs.length; i++) {
            assertBytes("read iovec " + i + " of a readv of unequal iovecs", "alpha", at, bufs[i]);
            at += lengths[i];
        }
    }

    @Test
    public void readsEachIoOfABatchFromItsOwnDescriptor() throws IOException {
        String[] names = {"north", "south", "east", "west"};
        Path[] files = new Path[names.length];
        int[] fd = new int[names.length];
        for (int f = 0; f < names.length; f++) {
            files[f] = pattern(dir, names[f], 8);
            fd[f] = open(files[f], OpenFlags.O_RDONLY);
        }
        List<Pending> io = new ArrayList<>();
        List<MemorySegment> bufs = new ArrayList<>();
        try (IoSession s = ctx.openSession("kit")) {
            s.enterBatchMode();
            for (int i = 0; i < 16; i++) {
                int f = i % names.length;
                MemorySegment b = block();
                bufs.add(b);
                io.add(startRead(s, fd[f], files[f], (long) (i / names.length) * BLOCK, b));
            }
            s.exitBatchMode();
            for (int i = 0; i < io.size(); i++) {
                assertOk(finish(s, io.get(i)), BLOCK, io.get(i).what());
                assertBytes(io.get(i).what() + " (one batch over " + names.length + " descriptors)", names[i % names.length],
                        (long) (i / names.length) * BLOCK, bufs.get(i));
            }
        }
    }

    @Test
    public void offsetsBeyondFourGibAreNotTruncated() throws IOException {
        Path sparse = dir.resolve("sparse");
        long block = (5L << 30) / BLOCK + 3; // a 64-bit offset: an int would wrap
        try (FileChannel ch = FileChannel.open(sparse, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(BLOCK);
            for (int i = 0; i < BLOCK; i++) {
                b.put(BlockPattern.expected("sparse", block, i));
            }
            b.flip();
            while (b.hasRemaining()) {
                ch.write(b, block * BLOCK + b.position());
            }
        }
        int fd = open(sparse, OpenFlags.O_RDONLY);
        MemorySegment hole = region(BLOCK, (byte) 0x77);
        MemorySegment data = block();
        try (IoSession s = ctx.openSession("kit")) {
            IoReturn h = finish(s, startRead(s, fd, sparse, (block - 1) * BLOCK, hole));
            assertOk(h, BLOCK, "a readv of the hole before block " + block + " of a sparse file");
            IoReturn d = finish(s, startRead(s, fd, sparse, block * BLOCK, data));
            assertOk(d, BLOCK, "a readv at offset " + block * BLOCK + " (beyond 4 GiB)");
        }
        assertBlock("sparse", block, data);
        long nonZero = firstOther(hole, (byte) 0);
        assertEquals(io() + " read a non-zero byte at " + nonZero + " of a hole of a sparse file; a method must return the"
                + " file's bytes", -1, nonZero);
    }

    @Test
    public void misalignedIoIsEinvalOnlyWhenThePageCacheIsBypassed() {
        MemorySegment shifted = arena.allocate(2L * BLOCK, 4096).asSlice(512, BLOCK);
        record Case(String what, long offset, MemorySegment buf) {
        }
        List<Case> cases = List.of(new Case("a buffer 512 bytes past a 4096-byte boundary", 4L * BLOCK, shifted),
                new Case("a length of 1000 bytes", 4L * BLOCK, arena.allocate(1000, 4096)),
                new Case("a file offset 100 bytes past a block boundary", 4L * BLOCK + 100, block()));
        try (IoSession s = ctx.openSession("kit")) {
            for (Case c : cases) {
                IoReturn r = finish(s, startRead(s, alphaFd, alpha, c.offset(), c.buf()));
                if (method().bypassesPageCache()) {
                    assertErrno(r, Errno.EINVAL, "a readv with " + c.what() + " (bypassesPageCache() is true)");
                } else {
                    assertOk(r, c.buf().byteSize(), "a readv with " + c.what() + " (bypassesPageCache() is false: buffered"
                            + " I/O has no alignment rule)");
                    assertBytes("readv with " + c.what(), "alpha", c.offset(), c.buf());
                }
            }
        }
    }

    @Test
    public void synchronousIoIsCompleteWhenStartReturns() {
        int[] flags = {IoHandle.FLAG_SYNCHRONOUS, IoHandle.FLAG_REFERENCES_LOCAL,
            IoHandle.FLAG_SYNCHRONOUS | IoHandle.FLAG_REFERENCES_LOCAL};
        try (IoSession s = ctx.openSession("kit")) {
            for (int i = 0; i < flags.length; i++) {
                MemorySegment buf = block();
                Pending p = start(s, false, alphaFd, alpha, (10L + i) * BLOCK, flags[i], null, buf);
                if ((flags[i] & IoHandle.FLAG_SYNCHRONOUS) != 0) {
                    assertTrue(io() + " left " + p.what() + " flagged FLAG_SYNCHRONOUS in state "
                            + IoHandle.stateName(p.handle().state()) + " after start returned: performSynchronously must"
                            + " complete the handle before it returns", s.peekRefDone(p.ref()));
                }
                assertOk(finish(s, p), BLOCK, p.what() + " with flags " + flags[i]);
                assertBlock("alpha", 10 + i, buf);
            }
        }
    }

    // ------------------------------------------------------------------ short transfers

    @Test
    public void readPastEndOfFileIsPartialWithTheShortLength() {
        try (IoSession s = ctx.openSession("kit")) {
            IoReturn ret = readv(s, alphaFd, FILE_BLOCKS - 1, block(), block(), block());
            assertPartial(ret, BLOCK, "a readv of 3 blocks from the last block of alpha");
            IoReturn beyond = readv(s, alphaFd, FILE_BLOCKS + 5, block());
            assertPartial(beyond, 0, "a readv starting 5 blocks past the end of alpha");
        }
    }

    private void assertPartial(IoReturn r, long bytes, String what) {
        if (r.status() != IoResult.PARTIAL || IoResult.result(r.result()) != bytes) {
            fail(io() + " returned " + IoResult.toString(r.result()) + " (" + r.message() + ") for " + what
                    + "; a method must report a short transfer as the " + bytes + " bytes done (PARTIAL), not as an error"
                    + " and not as the length asked for");
        }
    }

    @Test
    public void shortReadReportsBytesDoneNotError() throws IOException {
        Path tail = dir.resolve("tail");
        long size = 2L * BLOCK + 1000;
        try (FileChannel ch = FileChannel.open(tail, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate((int) size);
            for (long o = 0; o < size; o++) {
                b.put(BlockPattern.at("tail", o));
            }
            b.flip();
            while (b.hasRemaining()) {
                ch.write(b);
            }
        }
        int fd = open(tail, OpenFlags.O_RDONLY);
        MemorySegment buf = region(3L * BLOCK, (byte) 0x3C);
        try (IoSession s = ctx.openSession("kit")) {
            assertPartial(finish(s, startRead(s, fd, tail, 0, buf)), size, "a readv of 3 blocks of a file of " + size + " bytes");
        }
        assertBytes("short read", "tail", 0, buf.asSlice(0, size));
        assertUntouchedPastEof(buf.asSlice(size), (byte) 0x3C, "the buffer past the end of the file");
    }

    @Test
    public void partialVectoredReadFillsWholeIovecsAndLeavesTheRestUntouched() {
        MemorySegment[] bufs = {block(), block(), region(BLOCK, (byte) 0x2B), region(BLOCK, (byte) 0x2B)};
        try (IoSession s = ctx.openSession("kit")) {
            assertPartial(readv(s, alphaFd, FILE_BLOCKS - 2, bufs), 2L * BLOCK, "a readv of 4 iovecs from block "
                    + (FILE_BLOCKS - 2) + " of a " + FILE_BLOCKS + "-block file");
        }
        assertBlock("alpha", FILE_BLOCKS - 2, bufs[0]);
        assertBlock("alpha", FILE_BLOCKS - 1, bufs[1]);
        assertUntouchedPastEof(bufs[2], (byte) 0x2B, "iovec 2, past the end of the file");
        assertUntouchedPastEof(bufs[3], (byte) 0x2B, "iovec 3, past the end of the file");
    }

    @Test
    public void readOfAnEmptyFileIsPartialWithZeroBytes() throws IOException {
        Path empty = Files.createFile(dir.resolve("empty"));
        int fd = open(empty, OpenFlags.O_RDONLY);
        MemorySegment buf = region(BLOCK, (byte) 0x11);
        try (IoSession s = ctx.openSession("kit")) {
            assertPartial(finish(s, startRead(s, fd, empty, 0, buf)), 0, "a readv of an empty file");
        }
        assertUntouchedPastEof(buf, (byte) 0x11, "the buffer of a read of an empty file");
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
            Pending w = start(s, true, fd, gamma, 5L * BLOCK, 0, null, out);
            assertOk(finish(s, w), 3 * BLOCK, w.what());
            for (boolean dataOnly : new boolean[] {false, true}) {
                Pending f = startFsync(s, fd, gamma, dataOnly);
                assertOk(finish(s, f), 0, f.what());
            }
            MemorySegment[] in = {block(), block(), block()};
            IoReturn r = finish(s, startRead(s, fd, gamma, 5L * BLOCK, in));
            assertOk(r, 3 * BLOCK, "a readv of the 3 blocks just written");
            for (int i = 0; i < in.length; i++) {
                assertBlock("gamma", 5 + i, in[i]);
            }
        }
        assertEquals(io() + ": a 3-block write at block 5 of an empty file must make it 8 blocks long", 8L * BLOCK,
                Files.size(gamma));
    }

    @Test
    public void writesFromNonAdjacentBuffersLandInIovecOrder() throws IOException {
        Path delta = dir.resolve("delta");
        int fd = open(delta, OpenFlags.O_RDWR | OpenFlags.O_CREAT);
        MemorySegment region = arena.allocate(6L * BLOCK, 4096);
        MemorySegment[] out = {region.asSlice(4L * BLOCK, BLOCK), region.asSlice(0, BLOCK),
            region.asSlice(2L * BLOCK, 2L * BLOCK)};
        BlockPattern.fillAt("delta", 0, out[0]);
        BlockPattern.fillAt("delta", BLOCK, out[1]);
        BlockPattern.fillAt("delta", 2L * BLOCK, out[2]);
        try (IoSession s = ctx.openSession("kit")) {
            Pending w = start(s, true, fd, delta, 0, 0, null, out);
            assertOk(finish(s, w), 4L * BLOCK, w.what());
        }
        assertFileHolds(delta, "delta", 0, 4L * BLOCK);
    }

    /** The file, read with plain Java I/O, holds pattern {@code name} in {@code [from, to)}. */
    private void assertFileHolds(Path file, String name, long from, long to) throws IOException {
        byte[] all = Files.readAllBytes(file);
        assertTrue(io() + ": " + file.getFileName() + " is " + all.length + " bytes long; the writes made it at least " + to,
                all.length >= to);
        for (long o = from; o < to; o++) {
            if (all[(int) o] != BlockPattern.at(name, o)) {
                fail(io() + ": byte " + o + " of " + file.getFileName() + " read back with plain file I/O is " + all[(int) o]
                        + ", expected " + BlockPattern.at(name, o) + "; a method must write the iovecs' bytes, in order, at"
                        + " the I/O's offset");
            }
        }
    }

    @Test
    public void overwriteChangesOnlyTheBlocksWritten() throws IOException {
        Path copy = pattern(dir, "copy", 16);
        int fd = open(copy, OpenFlags.O_RDWR);
        MemorySegment[] out = {block(), block()};
        BlockPattern.fill("other", 6, out[0]);
        BlockPattern.fill("other", 7, out[1]);
        try (IoSession s = ctx.openSession("kit")) {
            Pending w = start(s, true, fd, copy, 6L * BLOCK, 0, null, out);
            assertOk(finish(s, w), 2L * BLOCK, w.what());
            Pending f = startFsync(s, fd, copy, true);
            assertOk(finish(s, f), 0, f.what());
        }
        assertFileHolds(copy, "copy", 0, 6L * BLOCK);
        assertFileHolds(copy, "copy", 8L * BLOCK, 16L * BLOCK);
        byte[] all = Files.readAllBytes(copy);
        for (int b = 6; b <= 7; b++) {
            for (int i = 0; i < BLOCK; i++) {
                assertEquals(io() + ": byte " + i + " of overwritten block " + b, BlockPattern.expected("other", b, i),
                        all[b * BLOCK + i]);
            }
        }
        assertEquals(io() + ": an overwrite inside a file must not change its size", 16L * BLOCK, all.length);
    }

    @Test
    public void manyWritesInFlightAllLandAndReadBack() throws IOException {
        Path eps = dir.resolve("epsilon");
        int fd = open(eps, OpenFlags.O_RDWR | OpenFlags.O_CREAT);
        int n = ctx.config().ioMaxConcurrency();
        List<Pending> io = new ArrayList<>();
        try (IoSession s = ctx.openSession("kit")) {
            s.enterBatchMode();
            for (int i = 0; i < n; i++) {
                long b = (7L * i) % n; // every block once, out of order
                MemorySegment buf = block();
                BlockPattern.fill("epsilon", b, buf);
                io.add(start(s, true, fd, eps, b * BLOCK, 0, null, buf));
            }
            s.exitBatchMode();
            for (Pending p : io) {
                assertOk(finish(s, p), BLOCK, p.what());
            }
            for (int b = 0; b < n; b++) {
                MemorySegment in = block();
                assertOk(finish(s, startRead(s, fd, eps, (long) b * BLOCK, in)), BLOCK, "a readv of written block " + b);
                assertBlock("epsilon", b, in);
            }
        }
        assertFileHolds(eps, "epsilon", 0, (long) n * BLOCK);
    }

    @Test
    public void mixedOperationsInOneBatchEachGetTheirOwnResult() throws IOException {
        Path zeta = dir.resolve("zeta");
        int wfd = open(zeta, OpenFlags.O_RDWR | OpenFlags.O_CREAT);
        MemorySegment one = block();
        MemorySegment three = arena.allocate(3L * BLOCK, 4096);
        MemorySegment out = arena.allocate(2L * BLOCK, 4096);
        BlockPattern.fillAt("zeta", 0, out);
        MemorySegment pastEnd = region(2L * BLOCK, (byte) 0x44);
        try (IoSession s = ctx.openSession("kit")) {
            s.enterBatchMode();
            Pending readOne = startRead(s, alphaFd, alpha, 2L * BLOCK, one);
            Pending write = start(s, true, wfd, zeta, 0, 0, null, out);
            Pending fsync = startFsync(s, alphaFd, alpha, false);
            Pending readThree = startRead(s, alphaFd, alpha, 30L * BLOCK, three);
            Pending fdatasync = startFsync(s, wfd, zeta, true);
            Pending partial = startRead(s, alphaFd, alpha, (FILE_BLOCKS - 1L) * BLOCK, pastEnd);
            Pending bad = startFsync(s, -1, zeta, false);
            s.exitBatchMode();
            assertPartial(finish(s, partial), BLOCK, partial.what());
            assertOk(finish(s, readThree), 3L * BLOCK, readThree.what());
            assertErrno(finish(s, bad), Errno.EBADF, bad.what() + " of descriptor -1");
            assertOk(finish(s, fdatasync), 0, fdatasync.what());
            assertOk(finish(s, fsync), 0, fsync.what());
            assertOk(finish(s, write), 2L * BLOCK, write.what());
            assertOk(finish(s, readOne), BLOCK, readOne.what());
            int[] ops = {IoHandle.OP_READV, IoHandle.OP_WRITEV, IoHandle.OP_FSYNC, IoHandle.OP_READV, IoHandle.OP_FDATASYNC};
            Pending[] all = {readOne, write, fsync, readThree, fdatasync};
            for (int i = 0; i < all.length; i++) {
                assertEquals(io() + ": the return of " + all[i].what() + " names another operation", IoHandle.opName(ops[i]),
                        IoHandle.opName(all[i].ret().op()));
            }
        }
        assertBlock("alpha", 2, one);
        assertBytes("read 3 blocks in a mixed batch", "alpha", 30L * BLOCK, three);
        assertBlock("alpha", FILE_BLOCKS - 1, pastEnd.asSlice(0, BLOCK));
        assertUntouchedPastEof(pastEnd.asSlice(BLOCK), (byte) 0x44, "the buffer past the end of alpha");
        assertFileHolds(zeta, "zeta", 0, 2L * BLOCK);
    }

    // ------------------------------------------------------------------ errors

    @Test
    public void fsyncOfAnInvalidDescriptorIsAnError() {
        try (IoSession s = ctx.openSession("kit")) {
            Pending f = startFsync(s, -1, alpha, false);
            assertErrno(finish(s, f), Errno.EBADF, f.what() + " of descriptor -1");
        }
    }

    @Test
    public void fdatasyncOfAClosedDescriptorIsEbadf() throws IOException {
        int closed = closedDescriptor();
        try (IoSession s = ctx.openSession("kit")) {
            Pending f = startFsync(s, closed, alpha, true);
            assertErrno(finish(s, f), Errno.EBADF, f.what() + " of a closed descriptor");
        }
    }

    @Test
    public void writeToAReadOnlyDescriptorIsEbadf() {
        MemorySegment buf = block();
        BlockPattern.fill("alpha", 3, buf);
        try (IoSession s = ctx.openSession("kit")) {
            Pending w = start(s, true, alphaFd, alpha, 3L * BLOCK, 0, null, buf);
            assertErrno(finish(s, w), Errno.EBADF, w.what() + " through a descriptor opened read-only");
        }
    }

    @Test
    public void closedOrInvalidDescriptorIsAnErrorWithEbadf() throws IOException {
        int closed = closedDescriptor();
        try (IoSession s = ctx.openSession("kit")) {
            for (int fd : new int[] {closed, -1}) {
                IoReturn ret = readv(s, fd, 0, block());
                assertErrno(ret, Errno.EBADF, "a readv of descriptor " + fd + (fd == closed ? " (closed)" : ""));
                try {
                    ret.throwIfFailed();
                    fail("no exception for " + ret);
                } catch (AioException e) {
                    assertEquals(io() + ": the exception for a read of a bad descriptor carries errno " + e.errno(),
                            Errno.EBADF, e.errno());
                    assertTrue(e.getMessage(), e.getMessage().contains("EBADF") && e.getMessage().contains("alpha"));
                }
            }
        }
    }

    /**
     * A write at 16 TiB is past ext4's largest file (EFBIG); a file system that allows it (xfs,
     * btrfs, tmpfs) must get the bytes. Which one applies here is asked of the kernel first, with a
     * plain write to another file.
     */
    @Test
    public void writePastTheFileSizeLimitIsEfbig() throws IOException {
        long offset = (1L << 44) + 16L * 4096;
        boolean limited;
        try (FileChannel probe = FileChannel.open(dir.resolve("probe"), StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE)) {
            probe.write(ByteBuffer.allocate(BLOCK), offset);
            limited = false;
        } catch (IOException e) {
            limited = true; // "File too large"
        }
        Path big = dir.resolve("big");
        int fd = open(big, OpenFlags.O_RDWR | OpenFlags.O_CREAT);
        MemorySegment buf = block();
        BlockPattern.fillAt("big", offset, buf);
        try (IoSession s = ctx.openSession("kit")) {
            Pending w = start(s, true, fd, big, offset, 0, null, buf);
            if (limited) {
                assertErrno(finish(s, w), Errno.EFBIG, w.what() + " (past the file system's largest file)");
                assertEquals(io() + ": a refused write changed the file's size", 0, Files.size(big));
            } else {
                assertOk(finish(s, w), BLOCK, w.what() + " (the file system here allows files that large)");
                MemorySegment in = block();
                assertOk(finish(s, startRead(s, fd, big, offset, in)), BLOCK, "a readv of the block written at " + offset);
                assertBytes("read back a block written at " + offset, "big", offset, in);
            }
        }
    }

    /**
     * {@code /dev/null} has no fsync: the kernel answers EINVAL (a method that bypasses the page
     * cache may refuse the descriptor first: also EINVAL).
     */
    @Test
    public void fsyncOfAFileThatCannotBeSyncedIsEinval() throws IOException {
        Path devNull = Path.of("/dev/null");
        int fd = open(devNull, OpenFlags.O_RDWR);
        try (IoSession s = ctx.openSession("kit")) {
            for (boolean dataOnly : new boolean[] {false, true}) {
                Pending f = startFsync(s, fd, devNull, dataOnly);
                assertErrno(finish(s, f), Errno.EINVAL, f.what());
            }
        }
    }

    /**
     * A real EIO from the kernel: reading {@code /proc/self/mem} at address 0, which is never mapped.
     * A method that bypasses the page cache may refuse that file before the kernel reads (it cannot
     * be put in O_DIRECT mode): then EINVAL.
     */
    @Test
    public void kernelIoErrorReachesTheIssuerWithItsErrno() throws IOException {
        Path mem = Path.of("/proc/self/mem");
        int fd = open(mem, OpenFlags.O_RDONLY);
        try (IoSession s = ctx.openSession("kit")) {
            Pending p = startRead(s, fd, mem, 0, block());
            IoReturn r = finish(s, p);
            int errno = -IoResult.result(r.result());
            if (method().bypassesPageCache() && errno == Errno.EINVAL) {
                assertErrno(r, Errno.EINVAL, p.what() + " (a file that cannot be opened for direct I/O)");
            } else {
                assertErrno(r, Errno.EIO, p.what() + " (address 0, unmapped: the kernel answers EIO)");
            }
        }
    }

    @Test
    public void oneFailingIoInABatchLeavesTheOthersIntact() throws IOException {
        int closed = closedDescriptor();
        int n = ctx.config().ioMaxConcurrency();
        List<Pending> io = new ArrayList<>();
        List<MemorySegment> bufs = new ArrayList<>();
        try (IoSession s = ctx.openSession("kit")) {
            s.enterBatchMode();
            for (int i = 0; i < n; i++) {
                MemorySegment b = block();
                bufs.add(b);
                io.add(startRead(s, i % 5 == 2 ? closed : alphaFd, alpha, (long) i * BLOCK, b));
            }
            s.exitBatchMode();
            for (int i = 0; i < n; i++) {
                IoReturn r = finish(s, io.get(i));
                if (i % 5 == 2) {
                    assertErrno(r, Errno.EBADF, io.get(i).what() + " of a closed descriptor, in a batch with good reads");
                } else {
                    assertOk(r, BLOCK, io.get(i).what() + ", in a batch with failing reads");
                    assertBlock("alpha", i, bufs.get(i));
                }
            }
        }
    }

    // ------------------------------------------------------------------ handles and completion

    @Test
    public void completesManyHandlesInFlight() {
        int n = ctx.config().ioMaxConcurrency();
        MemorySegment[] bufs = new MemorySegment[n];
        List<Pending> io;
        try (IoSession s = ctx.openSession("kit")) {
            io = readBlocks(s, bufs, i -> n - 1 - i);
            for (int i = n - 1; i >= 0; i--) { // wait newest first: completion order is the method's
                finish(s, io.get(i));
            }
            assertEquals(io() + ": I/Os still in flight after every one was waited for", 0, s.inFlightCount());
        }
        for (int i = 0; i < n; i++) {
            assertOk(io.get(i), BLOCK);
            assertBlock("alpha", n - 1 - i, bufs[i]);
        }
    }

    /**
     * A handle is reused as soon as its I/O is reclaimed (the idle stack is LIFO). A completion
     * that lands on a reused handle (a second one for an old I/O, or one the method was never
     * given) would complete the new I/O with the old result, before its bytes are there: each reuse
     * here asks for a different length, and the shared callback checks length and bytes.
     */
    @Test
    public void completionAfterHandleReuseBelongsToTheNewIo() {
        List<String> wrong = new CopyOnWriteArrayList<>();
        MemorySegment region = arena.allocate(4L * BLOCK, 4096);
        long[] firstBlock = new long[1];
        IoCallback check = new IoCallback() {
            public String name() {
                return "kit_reuse";
            }

            public long completeShared(IoHandle h, long r, int data) {
                if (IoResult.result(r) != h.length()) {
                    wrong.add("handle " + h.index() + " generation " + h.generation() + " completed with " + IoResult.toString(r)
                            + " for an I/O of " + h.length() + " bytes");
                } else {
                    String b = BlockPattern.checkAt("alpha", firstBlock[0] * BLOCK, region.asSlice(0, h.length()));
                    if (b != null) {
                        wrong.add("handle " + h.index() + " completed before its bytes were in the buffer: " + b);
                    }
                }
                return r;
            }
        };
        try (IoSession s = ctx.openSession("kit")) {
            int index = -1;
            for (int i = 0; i < 200; i++) {
                int n = 1 + (i * 3) % 4;
                firstBlock[0] = (i * 7L) % (FILE_BLOCKS - 4);
                region.fill((byte) 0);
                MemorySegment[] bufs = new MemorySegment[n];
                for (int k = 0; k < n; k++) {
                    bufs[k] = region.asSlice((long) k * BLOCK, BLOCK);
                }
                Pending p = start(s, false, alphaFd, alpha, firstBlock[0] * BLOCK, 0, check, bufs);
                if (index >= 0) {
                    assertEquals("the kit expects the core to hand out the handle it reclaimed last", index, p.handle().index());
                }
                index = p.handle().index();
                assertOk(finish(s, p), (long) n * BLOCK, p.what() + " on handle " + index + ", reused " + i + " times");
                assertBytes(p.what(), "alpha", firstBlock[0] * BLOCK, region.asSlice(0, (long) n * BLOCK));
            }
        }
        assertTrue(io() + " completed a reused handle with a result that was not its I/O's: " + wrong
                + "; a method must complete each I/O it was given, once, and no other", wrong.isEmpty());
    }

    @Test
    public void sharedCallbackSeesTheBytesAndTheResultOfItsOwnIo() throws IOException {
        int closed = closedDescriptor();
        Map<Integer, String> seen = new ConcurrentHashMap<>();
        MemorySegment[] bufs = new MemorySegment[12];
        IoCallback record = new IoCallback() {
            public String name() {
                return "kit_record";
            }

            public long completeShared(IoHandle h, long r, int data) {
                String bytes = IoResult.result(r) == BLOCK ? BlockPattern.check("alpha", data, bufs[data]) : null;
                seen.put(data, IoResult.statusName(IoResult.status(r)) + " " + IoResult.result(r) + " raw " + h.rawResult()
                        + (bytes == null ? "" : " " + bytes));
                return r;
            }
        };
        List<Pending> io = new ArrayList<>();
        try (IoSession s = ctx.openSession("kit")) {
            s.enterBatchMode();
            for (int i = 0; i < bufs.length; i++) {
                bufs[i] = block();
                int fd = i == 5 ? closed : alphaFd;
                long block = i == 9 ? FILE_BLOCKS : i;
                IoReturn ret = new IoReturn();
                IoHandle h = s.acquire();
                long gen = h.generation();
                h.setIovec(0, bufs[i]).setReturn(ret).setTarget(IoTarget.file(alpha), block).addCallback(record, i);
                h.startReadv(fd, 1, block * BLOCK);
                io.add(new Pending(h, gen, h.waitRef(), ret, "a readv of block " + block));
            }
            s.exitBatchMode();
            for (Pending p : io) {
                finish(s, p);
            }
        }
        for (int i = 0; i < bufs.length; i++) {
            String want = i == 5 ? "ERROR " + -Errno.EBADF + " raw " + -Errno.EBADF
                    : i == 9 ? "PARTIAL 0 raw 0" : "OK " + BLOCK + " raw " + BLOCK;
            assertEquals(io() + ": the shared callback of " + io.get(i).what() + (i == 5 ? " of a closed descriptor" : "")
                    + " saw another result, or ran before the bytes were in the buffer; a method must call"
                    + " IoHandle.complete with the I/O's own result after its bytes are in place", want, seen.get(i));
        }
    }

    // ------------------------------------------------------------------ callbacks

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
                    assertEquals(ret.message(), IoResult.WARNING, ret.status());
                    assertEquals(ret.message(), 42, IoResult.errorData(ret.result()));
                    assertEquals(ret.message(), BLOCK, IoResult.result(ret.result()));
                } else {
                    assertEquals(ret.message(), IoResult.ERROR, ret.status());
                    assertTrue(ret.message(), ret.message().contains("kit callback refuses block"));
                }
            }
        }
    }

    @Test
    public void throwingCallbacksFailOnlyTheirOwnIoAndTheMethodGoesOn() {
        IoCallback throwing = new IoCallback() {
            public String name() {
                return "kit_throw";
            }

            public long completeShared(IoHandle h, long r, int data) {
                switch (data % 3) {
                    case 1 -> throw new IllegalStateException("kit callback throws for I/O " + data);
                    case 2 -> throw new AssertionError("kit callback throws an Error for I/O " + data);
                    default -> {
                        return r;
                    }
                }
            }
        };
        int n = ctx.config().ioMaxConcurrency();
        try (IoSession s = ctx.openSession("kit")) {
            for (int round = 0; round < 3; round++) {
                MemorySegment[] bufs = new MemorySegment[n];
                List<Pending> io = new ArrayList<>();
                s.enterBatchMode();
                for (int i = 0; i < n; i++) {
                    bufs[i] = block();
                    IoReturn ret = new IoReturn();
                    IoHandle h = s.acquire();
                    long gen = h.generation();
                    h.setIovec(0, bufs[i]).setReturn(ret).setTarget(IoTarget.file(alpha), i)
                            .addCallback(throwing, round == 2 ? 0 : i);
                    h.startReadv(alphaFd, 1, (long) i * BLOCK);
                    io.add(new Pending(h, gen, h.waitRef(), ret, "a readv of block " + i + " (round " + round + ")"));
                }
                s.exitBatchMode();
                for (int i = 0; i < n; i++) {
                    IoReturn r = finish(s, io.get(i));
                    if (round < 2 && i % 3 != 0) {
                        assertEquals(io() + ": " + io.get(i).what() + " whose callback threw: " + r.message(), IoResult.ERROR,
                                r.status());
                        assertTrue(io() + ": the issuer did not get the exception of " + io.get(i).what() + ": " + r.failure(),
                                r.failure() != null && r.failure().getMessage().contains("for I/O " + i));
                    } else {
                        assertOk(r, BLOCK, io.get(i).what() + (round < 2 ? ", in a batch whose other callbacks threw"
                                : ", after callbacks threw in earlier batches"));
                        assertBlock("alpha", i, bufs[i]);
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------------ waits and wait references

    @Test
    public void waitReferenceWorksFromAThreadWithoutASession() throws Exception {
        try (IoSession s = ctx.openSession("kit")) {
            MemorySegment buf = block();
            Pending p = startRead(s, alphaFd, alpha, 9L * BLOCK, buf);
            int index = p.handle().index();
            long gen = p.generation();
            inAnotherThread(io() + ": AioContext.await from a thread without a session did not see " + p.what() + " complete",
                    () -> {
                        ctx.await(index, gen);
                        return null;
                    });
            assertTrue(io() + ": " + p.what() + " is not done after a waiter without a session returned",
                    ctx.checkDone(index, gen));
            assertOk(finish(s, p), BLOCK, p.what());
            assertBlock("alpha", 9, buf);
            assertTrue("a reclaimed I/O stays done for old wait references", ctx.checkDone(index, gen));
        }
    }

    /**
     * Once a handle was reclaimed, a wait reference to its old I/O refers to something over: every
     * wait on it returns at once, even while the handle carries a new I/O that nobody submitted yet
     * (it is staged in batch mode), and whichever thread waits.
     */
    @Test
    public void staleWaitReferenceReturnsAtOnceWhileTheHandleIsReused() throws Exception {
        MemorySegment a = block();
        MemorySegment b = block();
        try (IoSession s = ctx.openSession("kit")) {
            Pending old = startRead(s, alphaFd, alpha, 5L * BLOCK, a);
            assertOk(finish(s, old), BLOCK, old.what());
            s.enterBatchMode();
            Pending now = startRead(s, alphaFd, alpha, 6L * BLOCK, b);
            assertEquals("the kit expects the core to hand out the handle it reclaimed last", old.handle().index(),
                    now.handle().index());
            IoHandle h = old.handle();
            long gen = old.generation();
            inAnotherThread(io() + ": a wait on a stale wait reference (handle " + h.index() + ", generation " + gen
                    + ", now " + h.generation() + ") did not return; a method's waitOne, waitProgress and checkOne must"
                    + " return at once when the handle's generation moved on", () -> {
                        ctx.await(h.index(), gen);
                        ctx.awaitRef(old.ref());
                        method().waitOne(h, gen);
                        method().waitProgress(h, gen, 0);
                        method().checkOne(h, gen);
                        assertTrue(io() + ": checkDone of a stale wait reference is false", ctx.checkDone(h.index(), gen));
                        assertTrue(io() + ": checkRefDone of a stale wait reference is false", ctx.checkRefDone(old.ref()));
                        return null;
                    });
            assertTrue(io() + ": peekRefDone of a stale wait reference is false", s.peekRefDone(old.ref()));
            assertTrue(io() + ": checkDone of a stale wait reference is false", s.checkDone(h, gen));
            s.exitBatchMode();
            assertOk(finish(s, now), BLOCK, now.what() + " on the reused handle");
        }
        assertBlock("alpha", 6, b);
        assertBlock("alpha", 5, a);
    }

    /**
     * Another session's thread waits for the I/O of a session whose owner is blocked elsewhere:
     * the method must complete it without the owner's help (io_uring: the waiter reaps the owner's
     * ring), and the waiter sees the bytes.
     */
    @Test
    public void waitFromAnotherSessionCompletesTheIoWithoutItsOwner() throws Exception {
        int n = ctx.config().ioMaxConcurrency();
        MemorySegment[] bufs = new MemorySegment[n];
        try (IoSession s = ctx.openSession("kit")) {
            List<Pending> io = readBlocks(s, bufs, i -> 20 + i);
            inAnotherThread(io() + ": a session in another thread waited for I/O of a session whose owner did not help, and"
                    + " it never completed; a method must complete I/O for any waiter", () -> {
                        try (IoSession other = ctx.openSession("kit-waiter")) {
                            for (int i = n - 1; i >= 0; i--) {
                                Pending p = io.get(i);
                                other.await(p.handle(), p.generation());
                                assertTrue(io() + ": " + p.what() + " not done after another session's await returned", done(p));
                                assertBlock("alpha", 20 + i, bufs[i]);
                            }
                        }
                        return null;
                    });
            finishBlocks(s, io, bufs, i -> 20 + i, ", after another session waited for it");
            assertEquals(0, s.inFlightCount());
        }
    }

    @Test
    public void checkDoneFromAThreadWithoutASessionSeesCompletion() throws Exception {
        int n = 8;
        MemorySegment[] bufs = new MemorySegment[n];
        try (IoSession s = ctx.openSession("kit")) {
            List<Pending> io = readBlocks(s, bufs, i -> 40 + i);
            inAnotherThread(io() + ": AioContext.checkDone polled from a thread without a session never saw the I/O complete;"
                    + " a method's checkOne must process ready completions for any thread", () -> {
                        for (int i = 0; i < n; i++) {
                            Pending p = io.get(i);
                            while (!ctx.checkDone(p.handle().index(), p.generation())) {
                                Thread.yield();
                            }
                            assertBlock("alpha", 40 + i, bufs[i]);
                        }
                        return null;
                    });
            finishBlocks(s, io, bufs, i -> 40 + i, ", after another thread polled it");
        }
    }

    /**
     * {@code awaitRefProgress(ref, max)} returns when the I/O is done or a completion is ready, and
     * then processes up to {@code max} of them: with {@code max ≥ 1} every return leaves the I/O
     * done or some more I/O of the session done, and {@code readyCompletions()} never counts more
     * than is in flight.
     */
    @Test
    public void progressWaitsEndWithEveryIoDoneAndNothingLost() {
        int n = ctx.config().ioMaxConcurrency();
        MemorySegment[] bufs = new MemorySegment[n];
        List<Pending> io = new ArrayList<>();
        try (IoSession s = ctx.openSession("kit")) {
            s.enterBatchMode();
            for (int i = 0; i < n; i++) {
                bufs[i] = arena.allocate(2L * BLOCK, 4096);
                io.add(startRead(s, alphaFd, alpha, 2L * i * BLOCK, bufs[i]));
            }
            s.exitBatchMode();
            int idle = 0;
            for (Pending p : io) {
                while (!s.peekRefDone(p.ref())) {
                    int ready = s.readyCompletions();
                    assertTrue(io() + ": readyCompletions() is " + ready + " with " + s.inFlightCount() + " I/Os in flight",
                            ready >= 0 && ready <= s.inFlightCount());
                    long doneBefore = io.stream().filter(x -> s.peekRefDone(x.ref())).count();
                    s.awaitRefProgress(p.ref(), 4);
                    long doneAfter = io.stream().filter(x -> s.peekRefDone(x.ref())).count();
                    idle = doneAfter > doneBefore ? 0 : idle + 1;
                    assertTrue(io() + ": waitProgress returned " + idle + " times in a row with no I/O of the session"
                            + " done and none processed; it must wait until the I/O is done or a completion is ready,"
                            + " and process up to max of them", idle < 1000);
                }
            }
            for (int i = 0; i < n; i++) {
                assertOk(finish(s, io.get(i)), 2L * BLOCK, io.get(i).what());
                assertBytes(io.get(i).what(), "alpha", 2L * i * BLOCK, bufs[i]);
            }
        }
    }

    // ------------------------------------------------------------------ sessions and descriptors

    @Test
    public void servesSeveralSessionsOnSeveralThreads() throws Exception {
        int threadCount = 4;
        int readsEach = 500;
        List<Future<Integer>> results = new ArrayList<>();
        for (int t = 0; t < threadCount; t++) {
            int seed = t;
            results.add(threads().submit(() -> randomReads(seed, readsEach)));
        }
        for (Future<Integer> f : results) {
            assertEquals(Integer.valueOf(readsEach), f.get(120, TimeUnit.SECONDS));
        }
        assertTrue(ctx.openSessions().isEmpty());
    }

    private int randomReads(int seed, int count) {
        Random rnd = new Random(seed);
        int depth = 8;
        int verified = 0;
        try (Arena a = Arena.ofConfined(); IoSession s = ctx.openSession("kit-" + seed)) {
            MemorySegment[] bufs = new MemorySegment[depth];
            Pending[] io = new Pending[depth];
            long[] blocks = new long[depth];
            for (int i = 0; i < depth; i++) {
                bufs[i] = a.allocate(2L * BLOCK, 4096);
            }
            for (int n = 0; n < count + depth; n++) {
                int slot = n % depth;
                if (io[slot] != null) {
                    assertOk(finish(s, io[slot]), 2L * BLOCK, io[slot].what());
                    assertBytes(io[slot].what(), "alpha", blocks[slot] * BLOCK, bufs[slot]);
                    verified++;
                    io[slot] = null;
                }
                if (n < count) {
                    blocks[slot] = rnd.nextInt(FILE_BLOCKS - 1);
                    io[slot] = startRead(s, alphaFd, alpha, blocks[slot] * BLOCK, bufs[slot].asSlice(0, BLOCK),
                            bufs[slot].asSlice(BLOCK, BLOCK));
                }
            }
        }
        return verified;
    }

    /** Closing a session waits for its I/O in flight: the method completes every one, and nothing is left busy. */
    @Test
    public void closingASessionWithIoInFlightCompletesEveryIo() {
        int n = ctx.config().ioMaxConcurrency();
        for (boolean inBatch : new boolean[] {false, true}) {
            MemorySegment[] bufs = new MemorySegment[n];
            List<Pending> io;
            try (IoSession s = ctx.openSession("kit")) {
                io = readBlocks(s, alphaFd, bufs, i -> i * 3 % FILE_BLOCKS, inBatch); // in batch mode: close() submits them
            }
            String how = inBatch ? " (staged in batch mode when the session closed)" : " (in flight when the session closed)";
            for (int i = 0; i < n; i++) {
                assertOk(io.get(i).ret(), BLOCK, io.get(i).what() + how);
                assertBlock("alpha", i * 3 % FILE_BLOCKS, bufs[i]);
            }
            assertTrue(io() + ": handles still busy after their session closed" + how + ": " + ctx.snapshot(),
                    ctx.snapshot().isEmpty());
        }
        try (IoSession again = ctx.openSession("kit")) {
            MemorySegment buf = block();
            assertOk(readv(again, alphaFd, 33, buf), BLOCK, "a readv in a session opened after closing one with I/O in flight");
            assertBlock("alpha", 33, buf);
        }
    }

    @Test
    public void closeSessionReleasesWhatOpenSessionTook() throws Exception {
        int cycles = 64;
        long before = openDescriptors();
        for (int i = 0; i < cycles; i++) {
            try (IoSession s = ctx.openSession("kit")) {
                MemorySegment buf = block();
                s.enterBatchMode();
                Pending p = startRead(s, alphaFd, alpha, (long) (i % FILE_BLOCKS) * BLOCK, buf);
                s.exitBatchMode();
                assertOk(finish(s, p), BLOCK, p.what());
                assertBlock("alpha", i % FILE_BLOCKS, buf);
            }
        }
        long grown = openDescriptors() - before;
        assertTrue(io() + ": the process has " + grown + " more open descriptors after " + cycles + " sessions were opened,"
                + " used and closed; closeSession must release what openSession took (a ring, a descriptor)", grown < cycles / 2);
    }

    private static long openDescriptors() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    /**
     * {@code IoSession.closingFd(fd)} is what an issuer calls before it closes a descriptor; when it
     * returns, no I/O of the session may still use that descriptor (a method that needs to wait
     * says {@code waitOnFdBeforeClose()}). The descriptor is then closed and its number reopened
     * for another file, and every I/O must still return the first file's bytes.
     */
    @Test
    public void closingFdLeavesNoIoInFlightOnThatDescriptor() throws IOException {
        Path beta = pattern(dir, "beta", 8);
        int n = ctx.config().ioMaxConcurrency();
        for (int round = 0; round < 4; round++) {
            int fd = Posix.open(alpha, OpenFlags.O_RDONLY, 0);
            int reopened = -1;
            MemorySegment[] bufs = new MemorySegment[n];
            int first = round * n;
            try (IoSession s = ctx.openSession("kit")) {
                List<Pending> io = readBlocks(s, fd, bufs, i -> (first + i) % FILE_BLOCKS, false);
                s.closingFd(fd);
                if (method().waitOnFdBeforeClose()) {
                    for (Pending p : io) {
                        assertTrue(io() + " says waitOnFdBeforeClose(), but " + p.what() + " was still in flight after"
                                + " IoSession.closingFd(" + fd + ") returned", done(p));
                    }
                }
                Posix.close(fd, alpha);
                reopened = Posix.open(beta, OpenFlags.O_RDONLY, 0);
                for (int i = 0; i < n; i++) {
                    Pending p = io.get(i);
                    IoReturn r = finish(s, p);
                    String after = " — it used descriptor " + fd + " after IoSession.closingFd returned and the issuer"
                            + " closed it" + (reopened == fd ? " and reopened the number for another file" : "") + "; a method"
                            + " whose I/O can still use a descriptor after submit returns must say waitOnFdBeforeClose()";
                    if (r.status() != IoResult.OK || IoResult.result(r.result()) != BLOCK) {
                        fail(io() + " returned " + IoResult.toString(r.result()) + " (" + r.message() + ") for " + p.what()
                                + after);
                    }
                    String wrong = BlockPattern.checkAt("alpha", (long) (first + i) % FILE_BLOCKS * BLOCK, bufs[i]);
                    if (wrong != null) {
                        fail(io() + " " + p.what() + ": " + wrong + after);
                    }
                }
            } finally {
                if (reopened >= 0) {
                    Posix.close(reopened, beta);
                }
            }
        }
    }

    /**
     * The context offers registered buffers ({@code AioContext.registerBuffers}); a method that
     * uses them (io_uring's fixed buffers) must still move the right bytes for I/O inside the
     * region, outside it, across its end, in several iovecs, and after the offer is withdrawn.
     */
    @Test
    public void ioInsideOutsideAndAcrossRegisteredBuffersLandsRight() throws IOException {
        MemorySegment backing = arena.allocate(40L * BLOCK, 4096);
        MemorySegment region = backing.asSlice(0, 32L * BLOCK);
        Path eta = dir.resolve("eta");
        int fd = open(eta, OpenFlags.O_RDWR | OpenFlags.O_CREAT);
        ctx.registerBuffers(region);
        try (IoSession s = ctx.openSession("kit")) {
            for (int i = 0; i < 8; i++) {
                MemorySegment in = region.asSlice((long) i * BLOCK, BLOCK);
                Pending p = startRead(s, alphaFd, alpha, (50L + i) * BLOCK, in);
                assertOk(finish(s, p), BLOCK, p.what() + " into registered buffers");
                assertBlock("alpha", 50 + i, in);
            }
            MemorySegment across = backing.asSlice(30L * BLOCK, 4L * BLOCK);
            Pending a = startRead(s, alphaFd, alpha, 8L * BLOCK, across);
            assertOk(finish(s, a), 4L * BLOCK, a.what() + " into a buffer that starts inside the registered region and ends"
                    + " outside it");
            assertBytes(a.what() + " across the end of the registered region", "alpha", 8L * BLOCK, across);
            MemorySegment[] scattered = {region.asSlice(20L * BLOCK, BLOCK), block(), region.asSlice(10L * BLOCK, BLOCK)};
            Pending v = startRead(s, alphaFd, alpha, 12L * BLOCK, scattered);
            assertOk(finish(s, v), 3L * BLOCK, v.what() + " into iovecs inside and outside the registered region");
            for (int i = 0; i < scattered.length; i++) {
                assertBlock("alpha", 12 + i, scattered[i]);
            }
            MemorySegment out = region.asSlice(25L * BLOCK, 2L * BLOCK);
            BlockPattern.fillAt("eta", 0, out);
            Pending w = start(s, true, fd, eta, 0, 0, null, out);
            assertOk(finish(s, w), 2L * BLOCK, w.what() + " from registered buffers");
            ctx.unregisterBuffers(region);
            MemorySegment after = region.asSlice(0, BLOCK);
            Pending r = startRead(s, alphaFd, alpha, 60L * BLOCK, after);
            assertOk(finish(s, r), BLOCK, r.what() + " into memory whose registration was withdrawn");
            assertBlock("alpha", 60, after);
        } finally {
            ctx.unregisterBuffers(region);
        }
        assertFileHolds(eta, "eta", 0, 2L * BLOCK);
    }

    // ------------------------------------------------------------------ under the buffer manager

    /**
     * The buffer manager over the method, behind the fault decorator ({@link FaultRig}), as the
     * console's soak runs any method: a read stream over a relation of checksummed pages; an EIO
     * injected on one block (the decorator completes that I/O itself) reaches the reader naming
     * relation, block and errno, while the method runs the rest of the stream's reads; the next
     * stream reads every page right through the method; no pin, session or handle is left.
     */
    @Test
    public void bufferManagerStreamsThroughTheMethodAndAnInjectedEioReachesTheReader() throws IOException {
        long relNumber = 63000;
        int blocks = 100;
        FaultPlan plan = FaultPlan.parse("eio read file=pg_default/" + relNumber + " blocks=40 times=1");
        try (FaultRig rig = new FaultRig(method(), plan, FaultRig.small().build())) {
            SmgrRelation rel = rig.relation(relNumber, blocks);
            try (BufferSession s = rig.pool.openSession("kit")) {
                try (ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, blocks), ReadStream.FULL, null)) {
                    IOException e = null;
                    try {
                        for (long b = 0; b < blocks; b++) {
                            int buf = stream.next();
                            assertPage(relNumber, b, s.page(buf), "before the injected EIO");
                            s.releaseBuffer(buf);
                        }
                    } catch (IOException x) {
                        e = x;
                    }
                    assertNotNull(io() + ": a read stream over a relation with an EIO injected at block 40 ended without"
                            + " an error", e);
                    assertTrue(io() + ": the reader's error does not name EIO, relation and block: " + e.getMessage(),
                            e.getMessage().contains("EIO") && e.getMessage().contains("pg_default/" + relNumber)
                                    && e.getMessage().contains("block"));
                }
                s.io().drain();
                try (ReadStream again = new ReadStream(s, rel, ReadStream.blockRange(0, blocks), ReadStream.FULL, null)) {
                    for (long b = 0; b < blocks; b++) {
                        int buf = again.next();
                        assertPage(relNumber, b, s.page(buf), "in a stream after the injected EIO");
                        s.releaseBuffer(buf);
                    }
                    assertEquals(io() + ": a read stream returned a buffer past the relation's end", -1, again.next());
                }
            }
            assertEquals(io() + ": the fault decorator injected " + rig.method.injected() + " errors, not 1", 1,
                    rig.method.injected());
            rig.assertNothingLeaked();
            assertCompletedOnce(rig.aio.extraCompletions());
        }
    }

    private void assertPage(long rel, long block, MemorySegment page, String when) {
        int wrong = PatternRelation.wrongBytes(rel, block, page);
        assertEquals(io() + ": the buffer manager read " + wrong + " wrong bytes in block " + block + " of relation " + rel
                + " " + when + "; a method must transfer exactly the bytes asked for", 0, wrong);
    }

    // ------------------------------------------------------------------ stress

    /**
     * Thousands of I/Os of random sizes, offsets and iovec splits, reads and writes, from eight
     * threads with two sessions each (every slot of the context), each keeping a random number of
     * I/Os in flight and waiting for them in random order, some through its other session. Writes
     * put back the bytes a file already holds, so every read, whenever it runs, has one right
     * answer. The seed is in every failure; {@code -Dpageio.kit.seed=N} replays one.
     */
    @Test
    public void thousandsOfRandomIosOnManySessionsAndThreadsAllLandRight() {
        long seed = Long.getLong("pageio.kit.seed", System.nanoTime());
        String replay = "seed " + seed + " (replay with -Dpageio.kit.seed=" + seed + ")";
        int threadCount = Math.min(8, ctx.config().maxSessions() / 2);
        int iosPerSession = 640;
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < threadCount; t++) {
                Path own = pattern(dir, "stress" + t, 32);
                long threadSeed = seed + t;
                results.add(threads().submit(() -> stress(threadSeed, own, iosPerSession)));
            }
            int total = 0;
            Throwable first = null; // every thread is waited for, so that none still holds a session at the end
            for (Future<Integer> f : results) {
                try {
                    total += f.get(HANG_SECONDS, TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    first = first != null ? first : new AssertionError(io() + ": a stress thread did not end within "
                            + HANG_SECONDS + " s");
                } catch (ExecutionException e) {
                    first = first != null ? first : e.getCause();
                }
            }
            if (first instanceof Error err) {
                throw err;
            } else if (first != null) {
                throw (Exception) first;
            }
            assertEquals(io() + ": I/Os verified in the stress run", threadCount * 2 * iosPerSession, total);
            for (int t = 0; t < threadCount; t++) {
                assertFileHolds(dir.resolve("stress" + t), "stress" + t, 0, 32L * BLOCK);
            }
        } catch (AssertionError | Exception e) {
            // no cause: the test runner would report the cause's message, without the seed
            AssertionError withSeed = new AssertionError(e.getMessage() + " [stress " + replay + "]");
            withSeed.setStackTrace(e.getStackTrace());
            throw withSeed;
        }
    }

    /** One stress thread: two sessions, {@code count} I/Os each; returns the number verified. */
    private int stress(long seed, Path own, int count) throws IOException {
        Random rnd = new Random(seed);
        String ownName = own.getFileName().toString();
        long ownSize = Files.size(own);
        long alphaSize = (long) FILE_BLOCKS * BLOCK;
        int unit = method().bypassesPageCache() ? 4096 : 1;
        int depthMax = ctx.config().ioMaxConcurrency();
        int ownFd = Posix.open(own, OpenFlags.O_RDWR, 0);
        int verified = 0;
        try (Arena a = Arena.ofConfined(); IoSession s0 = ctx.openSession("kit-stress");
                IoSession s1 = ctx.openSession("kit-stress")) {
            IoSession[] sessions = {s0, s1};
            List<List<StressIo>> inFlight = List.of(new ArrayList<>(), new ArrayList<>());
            int[] issued = new int[2];
            while (issued[0] < count || issued[1] < count || !inFlight.get(0).isEmpty() || !inFlight.get(1).isEmpty()) {
                int si = rnd.nextInt(2);
                IoSession s = sessions[si];
                List<StressIo> mine = inFlight.get(si);
                int depth = 1 + rnd.nextInt(depthMax);
                boolean batch = rnd.nextInt(4) == 0 && issued[si] < count;
                if (batch) {
                    s.enterBatchMode();
                }
                while (issued[si] < count && mine.size() < depth) {
                    boolean write = rnd.nextInt(5) == 0;
                    boolean onOwn = write || rnd.nextBoolean();
                    long size = onOwn ? ownSize : alphaSize;
                    long length = Math.max(unit, (1 + rnd.nextInt(4 * BLOCK)) / unit * unit);
                    long offset = rnd.nextLong(size - length + 1) / unit * unit;
                    MemorySegment buf = a.allocate(length, 4096);
                    int iovecs = (int) Math.min(1 + rnd.nextInt(4), length / unit);
                    MemorySegment[] parts = split(buf, iovecs, unit, rnd);
                    String name = onOwn ? ownName : "alpha";
                    if (write) {
                        BlockPattern.fillAt(name, offset, buf);
                    } else {
                        buf.fill((byte) 0x6E);
                    }
                    Pending p = start(s, write, onOwn ? ownFd : alphaFd, onOwn ? own : alpha, offset, 0, null, parts);
                    mine.add(new StressIo(p, name, offset, buf, write));
                    issued[si]++;
                }
                if (batch) {
                    s.exitBatchMode();
                }
                int waits = 1 + rnd.nextInt(Math.max(1, mine.size()));
                for (int w = 0; w < waits && !mine.isEmpty(); w++) {
                    StressIo x = mine.remove(rnd.nextInt(mine.size()));
                    if (rnd.nextInt(4) == 0) {
                        sessions[1 - si].await(x.io().handle(), x.io().generation()); // a waiter that did not issue
                    }
                    finish(s, x.io());
                    assertOk(x.io(), x.buf().byteSize());
                    if (!x.write()) {
                        assertBytes(x.io().what(), x.name(), x.offset(), x.buf());
                    }
                    verified++;
                }
            }
        } finally {
            Posix.close(ownFd, own);
        }
        return verified;
    }

    private record StressIo(Pending io, String name, long offset, MemorySegment buf, boolean write) {
    }

    /** {@code buf} cut into {@code n} consecutive slices at random multiples of {@code unit}. */
    private static MemorySegment[] split(MemorySegment buf, int n, int unit, Random rnd) {
        long units = buf.byteSize() / unit;
        long[] cuts = new long[n + 1];
        cuts[n] = buf.byteSize();
        for (int i = 1; i < n; i++) {
            cuts[i] = cuts[i - 1] + unit * (1 + rnd.nextLong(units - (n - i) - cuts[i - 1] / unit));
        }
        MemorySegment[] parts = new MemorySegment[n];
        for (int i = 0; i < n; i++) {
            parts[i] = buf.asSlice(cuts[i], cuts[i + 1] - cuts[i]);
        }
        return parts;
    }

    // ------------------------------------------------------------------ the method's life cycle

    /**
     * Reads 16 blocks in one batch on a session of another thread, runs {@code away} while they are
     * in flight (it must drain them), checks every byte, reads once through the method bound then,
     * runs {@code back}, and reads once more.
     */
    private void ioInFlightAcross(String how, Runnable away, Runnable back) throws Exception {
        CountDownLatch inFlight = new CountDownLatch(1);
        CountDownLatch switched = new CountDownLatch(1);
        CountDownLatch readOnce = new CountDownLatch(1);
        CountDownLatch switchedBack = new CountDownLatch(1);
        List<Pending> io = new CopyOnWriteArrayList<>();
        int n = ctx.config().ioMaxConcurrency();
        Future<Void> issuer = threads().submit(() -> {
            MemorySegment[] bufs = new MemorySegment[n];
            try (IoSession s = ctx.openSession("kit")) {
                io.addAll(readBlocks(s, bufs, i -> 30 + i));
                inFlight.countDown();
                assertTrue(switched.await(HANG_SECONDS, TimeUnit.SECONDS));
                finishBlocks(s, io, bufs, i -> 30 + i, ", in flight when " + how);
                MemorySegment b = block();
                assertOk(readv(s, alphaFd, 3, b), BLOCK, "a readv after " + how);
                assertBlock("alpha", 3, b);
                readOnce.countDown();
                assertTrue(switchedBack.await(HANG_SECONDS, TimeUnit.SECONDS));
                MemorySegment c = block();
                assertOk(readv(s, alphaFd, 4, c), BLOCK, "a readv after switching back to the method");
                assertBlock("alpha", 4, c);
            }
            return null;
        });
        try {
            assertTrue(inFlight.await(HANG_SECONDS, TimeUnit.SECONDS));
            away.run();
            for (Pending p : io) {
                assertTrue(io() + ": " + p.what() + " was still in flight after " + how + " drained the method (state "
                        + IoHandle.stateName(p.handle().state()) + "); a method must complete its I/O when waited for or polled",
                        done(p));
            }
            switched.countDown();
            assertTrue(readOnce.await(HANG_SECONDS, TimeUnit.SECONDS));
            back.run();
            switchedBack.countDown();
            issuer.get(HANG_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw cause(e);
        } finally {
            switched.countDown();
            switchedBack.countDown();
        }
    }

    /**
     * {@code AioContext.swapMethod} away from the method with I/O in flight drains it with the
     * method's own waits and polls; every I/O completes with its bytes, the session rebinds
     * ({@code closeSession}, then the next method's {@code openSession}), and swapping back works.
     */
    @Test
    public void hotSwapWithIoInFlightDrainsItAndLosesNothing() throws Exception {
        IoMethod inline = new InlineMethod();
        ioInFlightAcross("AioContext.swapMethod switched to " + InlineMethod.NAME, () -> {
            MethodSwap swap = ctx.swapMethod(inline, TimeUnit.SECONDS.toNanos(HANG_SECONDS));
            assertEquals(io() + ": " + swap, InlineMethod.NAME, swap.to());
        }, () -> {
            MethodSwap swap = ctx.swapMethod(method(), TimeUnit.SECONDS.toNanos(HANG_SECONDS));
            assertEquals(io() + ": " + swap, method().name(), swap.to());
        });
    }

    /**
     * The method's life cycle as the kit drives it, made by {@link #lifeCycle}: in the container,
     * its bundle. Used by one test, in the test's thread.
     */
    protected interface MethodLifeCycle extends AutoCloseable {

        /** What stops, for messages: {@code the bundle org.example.mine}. */
        String what();

        /**
         * Stops the method. The {@code unregistering} action given to {@link #lifeCycle} has run
         * once when this returns, while the method was still active (its service unregistering).
         */
        void stop();

        /** Starts the method again and returns the new instance, as it is once registered again. */
        IoMethod start();

        /** Puts back what the test changed (in the container, a bundle left stopped is started again). */
        @Override
        void close() throws Exception;
    }

    /**
     * The method's life cycle: in the container its bundle, whose service's unregistration runs
     * {@code unregistering} (a service listener, as the buffer manager has).
     */
    protected MethodLifeCycle lifeCycle(Runnable unregistering) throws Exception {
        return new BundleLifeCycle(unregistering);
    }

    /** The method's bundle stopped and started in the container; {@code unregistering} runs from a service listener. */
    private final class BundleLifeCycle implements MethodLifeCycle {

        private final BundleContext bc = FrameworkUtil.getBundle(MethodConformanceKit.class).getBundleContext();
        private final String name = method().name();
        private final ServiceReference<IoMethod> ref;
        private final Bundle bundle;
        private final ServiceListener listener;

        BundleLifeCycle(Runnable unregistering) throws InvalidSyntaxException {
            ref = reference(bc, method());
            bundle = ref.getBundle();
            String filter = "(&(" + Constants.OBJECTCLASS + "=" + IoMethod.class.getName() + ")(" + IoMethod.PROPERTY + "="
                    + name + "))";
            listener = e -> {
                if (e.getType() == ServiceEvent.UNREGISTERING && e.getServiceReference().equals(ref)) {
                    unregistering.run();
                }
            };
            bc.addServiceListener(listener, filter);
        }

        @Override
        public String what() {
            return "the bundle " + bundle.getSymbolicName();
        }

        @Override
        public void stop() {
            try {
                bundle.stop();
            } catch (BundleException e) {
                throw new AssertionError("could not stop " + bundle.getSymbolicName() + ": " + e, e);
            }
        }

        @Override
        public IoMethod start() {
            try {
                bundle.start();
                return awaitNonNull(io() + " to register again after its bundle started", 10_000, () -> {
                    try {
                        Collection<ServiceReference<IoMethod>> refs = bc.getServiceReferences(IoMethod.class,
                                "(" + IoMethod.PROPERTY + "=" + name + ")");
                        return refs.isEmpty() ? null : bc.getService(refs.iterator().next());
                    } catch (InvalidSyntaxException e) {
                        throw new IllegalStateException(e);
                    }
                });
            } catch (BundleException | InterruptedException e) {
                throw new AssertionError("could not start " + bundle.getSymbolicName() + " again: " + e, e);
            }
        }

        @Override
        public void close() throws BundleException {
            bc.removeServiceListener(listener);
            if (bundle.getState() != Bundle.ACTIVE) {
                bundle.start();
            }
        }
    }

    /**
     * The method stops with I/O in flight (in the container: its bundle): as the buffer manager
     * does, the kit retires the method from its context when the service unregisters (before the
     * component deactivates), which drains its I/O; nothing is lost, then the method starts again
     * and the new instance is swapped in. A method that says unavailable once stopped must say why
     * in a sentence.
     */
    @Test
    public void stoppedWithIoInFlightItsIoIsDrainedAndNothingLost() throws Exception {
        IoMethod stopped = method();
        List<Object> retired = new CopyOnWriteArrayList<>();
        IoMethod[] restarted = new IoMethod[1];
        try (MethodLifeCycle life = lifeCycle(() -> {
            try {
                retired.add(ctx.retireMethod(new InlineMethod(), TimeUnit.SECONDS.toNanos(HANG_SECONDS),
                        io() + " is stopping"));
            } catch (RuntimeException x) {
                retired.add(x);
            }
        })) {
            ioInFlightAcross(life.what() + " stopped", () -> {
                life.stop();
                assertEquals(io() + ": the service did not unregister when " + life.what() + " stopped (" + retired + ")", 1,
                        retired.size());
                assertTrue(io() + ": retiring the method failed: " + retired.get(0), retired.get(0) instanceof MethodSwap);
                MethodSwap swap = (MethodSwap) retired.get(0);
                assertNull(io() + ": I/O still in flight when " + life.what() + " stopped: " + swap, swap.stuck());
            }, () -> {
                restarted[0] = life.start();
                assertTrue(io() + " is not available after " + life.what() + " started again: "
                        + restarted[0].availability().cause(), restarted[0].availability().available());
                ctx.swapMethod(restarted[0], TimeUnit.SECONDS.toNanos(HANG_SECONDS));
            });
        }
        IoMethod.Availability after;
        try {
            after = stopped.availability();
        } catch (RuntimeException e) {
            after = null; // a deactivated component need not answer
        }
        if (after != null && !after.available()) {
            assertReadable(after.cause(), "availability().cause() once it was stopped");
        }
    }

    /** The service reference under which {@code m} is registered. */
    private ServiceReference<IoMethod> reference(BundleContext bc, IoMethod m) throws InvalidSyntaxException {
        String filter = "(" + IoMethod.PROPERTY + "=" + m.name() + ")";
        for (ServiceReference<IoMethod> r : bc.getServiceReferences(IoMethod.class, filter)) {
            IoMethod candidate = bc.getService(r);
            bc.ungetService(r);
            if (candidate == m) {
                return r;
            }
        }
        throw new AssertionError(io() + " is not registered as an " + IoMethod.class.getName() + " service");
    }

    /**
     * The {@value IoMethod#PROPERTY} property the method is registered with: in the container, that
     * of its service registration ({@link InProcessMethodKit}: of its component description).
     */
    protected Object registeredName() throws Exception {
        BundleContext bc = FrameworkUtil.getBundle(MethodConformanceKit.class).getBundleContext();
        return reference(bc, method()).getProperty(IoMethod.PROPERTY);
    }

    @Test
    public void nameIsItsServicePropertyIoMethod() throws Exception {
        Object registered = registeredName();
        assertEquals(io() + " is registered with the service property " + IoMethod.PROPERTY + "=" + registered
                + "; name() must equal it (users select it by that name)", method().name(), registered);
        assertTrue(io() + ": name() must be a word users can type in io_method = NAME", method().name().matches("\\S+"));
    }

    @Test
    public void availabilityOfAnAvailableMethodHasNoCauseOrAReadableOne() {
        IoMethod.Availability a = method().availability();
        assertTrue(io() + ": availability() says unavailable: " + a.cause(), a.available());
        if (a.cause() != null) {
            assertReadable(a.cause(), "availability().cause()");
        }
        assertEquals(io() + ": availability() changed between two calls with nothing in between", a, method().availability());
    }
}
