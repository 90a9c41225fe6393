package org.pageio.method.posixaio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
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
import org.pageio.api.IoTarget;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.posix.Errno;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.PageCache;
import org.pageio.posix.Posix;
import org.pageio.posix.Residency;
import org.pageio.tck.BlockPattern;

/** io_method=posix_aio on real files, outside OSGi: what the conformance kit cannot see from outside. */
@Timeout(60)
class PosixAioIoMethodTest {

    static final int BLOCK = BlockPattern.BLOCK;
    static final int FILE_BLOCKS = 64;

    @TempDir
    Path dir;
    Path alpha;
    int alphaFd = -1;
    Arena arena;
    PosixAioIoMethod method;
    AioContext ctx;
    final List<Integer> fds = new ArrayList<>();

    @BeforeEach
    void setUp() throws IOException {
        alpha = BlockPattern.write(dir.resolve("alpha"), FILE_BLOCKS);
        alphaFd = open(alpha, OpenFlags.O_RDONLY);
        arena = Arena.ofShared();
        method = new PosixAioIoMethod(PosixAioSettings.DEFAULTS);
        ctx = AioContext.create(method, new AioConfig(8, 16, 16));
    }

    @AfterEach
    void tearDown() throws IOException {
        if (ctx != null) {
            ctx.close();
        }
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

    MemorySegment block() {
        return arena.allocate(BLOCK, 4096);
    }

    static void assertBlock(String name, long block, MemorySegment buf) {
        assertNull(BlockPattern.check(name, block, buf), "block " + block + " of " + name);
    }

    static AioSession state(IoSession s) {
        return assertInstanceOf(AioSession.class, s.methodState());
    }

    /** A target naming the file and the first block, as the storage manager's does for a relation. */
    static IoTarget blocksOf(Path file) {
        return data -> "block " + data + " of file " + file;
    }

    IoReturn io(IoSession s, boolean write, int fd, Path file, long firstBlock, MemorySegment... bufs) {
        IoReturn ret = new IoReturn();
        IoHandle h = s.acquire();
        long gen = h.generation();
        for (int i = 0; i < bufs.length; i++) {
            h.setIovec(i, bufs[i]);
        }
        h.setReturn(ret).setTarget(blocksOf(file), firstBlock);
        if (write) {
            h.startWritev(fd, bufs.length, firstBlock * BLOCK);
        } else {
            h.startReadv(fd, bufs.length, firstBlock * BLOCK);
        }
        s.await(h, gen);
        return ret;
    }

    IoReturn fsync(IoSession s, int fd, Path file, boolean dataOnly) {
        IoReturn ret = new IoReturn();
        IoHandle h = s.acquire();
        long gen = h.generation();
        h.setReturn(ret).setTarget(IoTarget.file(file), 0).startFsync(fd, dataOnly);
        s.await(h, gen);
        return ret;
    }

    @Test
    void isAvailableAndEverySessionGetsItsOwnControlBlocks() {
        assertEquals("posix_aio", method.name());
        assertTrue(method.availability().available(), method.availability().cause());
        assertNull(method.availability().cause());
        assertTrue(method.hasWaitOne());
        assertTrue(method.waitOnFdBeforeClose());
        assertFalse(method.bypassesPageCache());
        AioSession first;
        try (IoSession a = ctx.openSession("a"); IoSession b = ctx.openSession("b")) {
            first = state(a);
            assertNotSame(first, state(b));
            assertFalse(first.isClosed());
        }
        assertTrue(first.isClosed(), "the control blocks are freed with their session");
    }

    /** A read of {@code bufs} from {@code firstBlock} of alpha, on a descriptor opened buffered (as the storage manager flags it). */
    IoReturn bufferedRead(IoSession s, long firstBlock, MemorySegment... bufs) {
        IoReturn ret = new IoReturn();
        IoHandle h = s.acquire();
        long gen = h.generation();
        for (int i = 0; i < bufs.length; i++) {
            h.setIovec(i, bufs[i]);
        }
        h.setReturn(ret).setTarget(blocksOf(alpha), firstBlock).setFlags(IoHandle.FLAG_BUFFERED);
        h.startReadv(alphaFd, bufs.length, firstBlock * BLOCK);
        s.await(h, gen);
        return ret;
    }

    /**
     * Drops alpha from the page cache and proves it with {@code mincore}: {@code POSIX_FADV_DONTNEED}
     * is advice, and a page still on another CPU's LRU list at that moment survives it, so it is
     * asked again until no page is resident (a second at most).
     */
    private void dropFromPageCache() throws IOException {
        for (int tries = 0; ; tries++) {
            Residency left = PageCache.evict(alphaFd, Files.size(alpha), alpha);
            if (left.residentPages() == 0) {
                return;
            }
            if (tries == 100) {
                throw new AssertionError("alpha stays in the page cache after 100 evictions: " + left);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while evicting alpha", e);
            }
        }
    }

    /**
     * {@link CachedReadsInline}: a buffered read whose pages are in the page cache completes at
     * submission without a request to glibc; once they are dropped it goes to glibc; a read not
     * flagged buffered always does; and with the policy off every read does.
     */
    @Test
    void aBufferedReadOfCachedPagesCompletesWithoutGlibc() throws IOException {
        try (IoSession s = ctx.openSession("t")) {
            AioSession as = state(s);
            MemorySegment[] two = {block(), block()};
            IoReturn hot = bufferedRead(s, 40, two[1], two[0]); // alpha was just written: cached
            assertEquals(IoResult.OK, hot.status(), hot.message());
            assertEquals(2 * BLOCK, IoResult.result(hot.result()));
            assertBlock("alpha", 40, two[1]);
            assertBlock("alpha", 41, two[0]);
            assertEquals(1, as.cachedCompletions());
            assertEquals(0, as.singleCalls() + as.listioCalls(), "nothing went to glibc");

            dropFromPageCache();
            MemorySegment cold = block();
            IoReturn r = bufferedRead(s, 50, cold);
            assertEquals(IoResult.OK, r.status(), r.message());
            assertBlock("alpha", 50, cold);
            assertEquals(1, as.cachedCompletions(), "not cached: queued");
            assertEquals(1, as.cachedMisses());
            assertEquals(1, as.singleCalls(), "aio_read");

            MemorySegment plain = block();
            assertEquals(IoResult.OK, io(s, false, alphaFd, alpha, 50, plain).status()); // cached now, but not flagged buffered
            assertEquals(2, as.singleCalls());

            // after a miss the session backs off: the next read is queued untried, the one after is tried
            MemorySegment skipped = block();
            assertEquals(IoResult.OK, bufferedRead(s, 50, skipped).status());
            assertBlock("alpha", 50, skipped);
            assertEquals(3, as.singleCalls(), "skipped after the miss: glibc reads it although it is cached");
            assertEquals(1, as.cachedMisses(), "not tried, so not missed");
            MemorySegment again = block();
            assertEquals(IoResult.OK, bufferedRead(s, 50, again).status());
            assertEquals(2, as.cachedCompletions(), "tried again, and the page cache held it");
            assertEquals(3, as.singleCalls());

            method.cachedReads.enabled = false;
            MemorySegment off = block();
            assertEquals(IoResult.OK, bufferedRead(s, 40, off).status());
            assertBlock("alpha", 40, off);
            assertEquals(2, as.cachedCompletions(), "policy off: glibc reads it");
            assertEquals(4, as.singleCalls());
        } finally {
            method.cachedReads.enabled = true;
        }
    }

    @Test
    void readsOneBlockAndAVectorOfNonAdjacentBuffersOneRequestPerBuffer() {
        try (IoSession s = ctx.openSession("t")) {
            AioSession as = state(s);
            MemorySegment one = block();
            IoReturn r1 = io(s, false, alphaFd, alpha, 17, one);
            assertEquals(IoResult.OK, r1.status(), r1.message());
            assertEquals(BLOCK, IoResult.result(r1.result()));
            assertBlock("alpha", 17, one);
            assertEquals(1, as.singleCalls(), "one block: aio_read");
            assertEquals(0, as.listioCalls());

            MemorySegment[] bufs = {block(), block(), block()};
            IoReturn r3 = io(s, false, alphaFd, alpha, 30, bufs[2], bufs[0], bufs[1]);
            assertEquals(IoResult.OK, r3.status(), r3.message());
            assertEquals(3 * BLOCK, IoResult.result(r3.result()));
            assertBlock("alpha", 30, bufs[2]);
            assertBlock("alpha", 31, bufs[0]);
            assertBlock("alpha", 32, bufs[1]);
            assertEquals(1, as.listioCalls(), "three non-adjacent buffers: three blocks in one lio_listio");
            assertEquals(2, as.reaped());
        }
    }

    @Test
    void iovecsThatContinueEachOtherInMemoryAreOneRequest() {
        MemorySegment run = arena.allocate(4L * BLOCK, 4096);
        try (IoSession s = ctx.openSession("t")) {
            AioSession as = state(s);
            IoReturn r = io(s, false, alphaFd, alpha, 8, run.asSlice(0, BLOCK), run.asSlice(BLOCK, BLOCK),
                    run.asSlice(2L * BLOCK, BLOCK), run.asSlice(3L * BLOCK, BLOCK));
            assertEquals(IoResult.OK, r.status(), r.message());
            for (int i = 0; i < 4; i++) {
                assertBlock("alpha", 8 + i, run.asSlice((long) i * BLOCK, BLOCK));
            }
            assertEquals(1, as.singleCalls(), "four adjacent iovecs: one aio_read of 32 kB");
            assertEquals(0, as.listioCalls());
        }
    }

    @Test
    void aBatchIsOneLioListio() {
        int n = 16;
        MemorySegment[] bufs = new MemorySegment[n];
        IoHandle[] hs = new IoHandle[n];
        long[] gens = new long[n];
        IoReturn[] rets = new IoReturn[n];
        try (IoSession s = ctx.openSession("t")) {
            AioSession as = state(s);
            s.enterBatchMode();
            for (int i = 0; i < n; i++) {
                bufs[i] = block();
                rets[i] = new IoReturn();
                hs[i] = s.acquire();
                gens[i] = hs[i].generation();
                hs[i].setIovec(0, bufs[i]).setReturn(rets[i]).startReadv(alphaFd, 1, (long) i * 3 % FILE_BLOCKS * BLOCK);
            }
            assertEquals(0, as.listioCalls() + as.singleCalls(), "nothing is queued while batching");
            s.exitBatchMode();
            assertEquals(1, as.listioCalls(), "16 requests, one lio_listio");
            assertEquals(0, as.singleCalls());
            for (int i = 0; i < n; i++) {
                s.await(hs[i], gens[i]);
                assertEquals(IoResult.OK, rets[i].status(), rets[i].message());
                assertBlock("alpha", (long) i * 3 % FILE_BLOCKS, bufs[i]);
            }
            assertEquals(n, as.reaped());
            assertEquals(0, as.published(), "no handle's blocks are still glibc's");
        }
    }

    @Test
    void writesThenFsyncAndFdatasyncThenReadBack() throws IOException {
        Path beta = dir.resolve("beta");
        int fd = open(beta, OpenFlags.O_RDWR | OpenFlags.O_CREAT);
        MemorySegment[] out = {block(), block(), block()};
        for (int i = 0; i < 3; i++) {
            BlockPattern.fill("beta", 4 + i, out[i]);
        }
        try (IoSession s = ctx.openSession("t")) {
            AioSession as = state(s);
            IoReturn w = io(s, true, fd, beta, 4, out);
            assertEquals(IoResult.OK, w.status(), w.message());
            assertEquals(3 * BLOCK, IoResult.result(w.result()));
            for (boolean dataOnly : new boolean[] {false, true}) {
                IoReturn f = fsync(s, fd, beta, dataOnly);
                assertEquals(IoResult.OK, f.status(), f.message());
                assertEquals(0, IoResult.result(f.result()));
            }
            assertEquals(2, as.fsyncCalls());
            assertEquals(7L * BLOCK, Files.size(beta));
            MemorySegment[] in = {block(), block(), block()};
            IoReturn r = io(s, false, fd, beta, 4, in);
            assertEquals(IoResult.OK, r.status(), r.message());
            for (int i = 0; i < 3; i++) {
                assertBlock("beta", 4 + i, in[i]);
            }
        }
    }

    /**
     * A write and the fsync after it in one batch: the fsync is queued after the write's requests
     * (which it covers), as its own aio_fsync; both succeed and the bytes are in the file.
     */
    @Test
    void anFsyncInABatchIsQueuedAfterTheWritesBeforeIt() throws IOException {
        Path beta = dir.resolve("beta");
        int fd = open(beta, OpenFlags.O_RDWR | OpenFlags.O_CREAT);
        MemorySegment a = block();
        MemorySegment b = block();
        BlockPattern.fill("beta", 0, a);
        BlockPattern.fill("beta", 2, b);
        IoReturn w = new IoReturn();
        IoReturn f = new IoReturn();
        try (IoSession s = ctx.openSession("t")) {
            AioSession as = state(s);
            s.enterBatchMode();
            IoHandle hw = s.acquire();
            long gw = hw.generation();
            hw.setIovec(0, a).setIovec(1, b).setReturn(w).startWritev(fd, 2, 0); // blocks 0 and 1 of the file
            IoHandle hf = s.acquire();
            long gf = hf.generation();
            hf.setReturn(f).startFsync(fd, false);
            s.exitBatchMode();
            s.await(hw, gw);
            s.await(hf, gf);
            assertEquals(IoResult.OK, w.status(), w.message());
            assertEquals(IoResult.OK, f.status(), f.message());
            assertEquals(1, as.listioCalls(), "the write's two blocks, then");
            assertEquals(1, as.fsyncCalls(), "the fsync");
        }
        byte[] bytes = Files.readAllBytes(beta);
        assertEquals(2 * BLOCK, bytes.length);
        assertBlock("beta", 0, MemorySegment.ofArray(bytes).asSlice(0, BLOCK));
        // the second iovec landed right after the first: block 1 of the file holds pattern block 2
        assertBlock("beta", 2, MemorySegment.ofArray(bytes).asSlice(BLOCK, BLOCK));
    }

    /**
     * Short transfers as preadv has them: the bytes up to the first short request, never the length
     * asked for; the buffers after a short request stay untouched.
     */
    @Test
    void aShortRequestEndsTheTransferWithTheBytesDone() throws IOException {
        Path gamma = dir.resolve("gamma");
        BlockPattern.write(gamma, 3);
        try (FileChannel ch = FileChannel.open(gamma, StandardOpenOption.WRITE)) {
            ch.truncate(2L * BLOCK + 100); // block 2 has 100 bytes
        }
        int fd = open(gamma, OpenFlags.O_RDONLY);
        try (IoSession s = ctx.openSession("t")) {
            MemorySegment[] bufs = {block(), block(), block(), block()};
            bufs[3].fill((byte) 0x5A);
            IoReturn r = io(s, false, fd, gamma, 1, bufs[0], bufs[1], bufs[2], bufs[3]);
            assertEquals(IoResult.PARTIAL, r.status(), r.message());
            assertEquals(BLOCK + 100, IoResult.result(r.result()), "block 1 whole, 100 bytes of block 2, nothing after");
            assertBlock("gamma", 1, bufs[0]);
            for (int i = 0; i < BLOCK; i++) {
                if (bufs[3].get(java.lang.foreign.ValueLayout.JAVA_BYTE, i) != 0x5A) {
                    throw new AssertionError("byte " + i + " of the buffer past the end of the file was written");
                }
            }
            assertTrue(r.message().contains("only " + (BLOCK + 100) + " of " + 4 * BLOCK + " bytes"), r.message());

            IoReturn past = io(s, false, fd, gamma, 9, block());
            assertEquals(IoResult.PARTIAL, past.status(), past.message());
            assertEquals(0, IoResult.result(past.result()));
        }
    }

    /** Errors are results with the errno, and the message names the operation, the file, the block and the errno. */
    @Test
    void errorsNameTheFileTheBlockAndTheErrno() throws IOException {
        Path closedFile = dir.resolve("closed");
        BlockPattern.write(closedFile, 2);
        int closed = Posix.open(closedFile, OpenFlags.O_RDONLY, 0);
        Posix.close(closed, closedFile);
        try (IoSession s = ctx.openSession("t")) {
            AioSession as = state(s);
            IoReturn r = io(s, false, closed, closedFile, 1, block());
            assertEquals(IoResult.ERROR, r.status(), r.message());
            assertEquals(-Errno.EBADF, IoResult.result(r.result()));
            assertTrue(r.message().startsWith("could not readv 8192 bytes at offset 8192 of block 1 of file " + closedFile
                    + ": EBADF"), r.message());

            IoReturn w = io(s, true, alphaFd, alpha, 3, block()); // alpha is open read-only
            assertEquals(-Errno.EBADF, IoResult.result(w.result()), w.message());
            assertTrue(w.message().contains("block 3 of file " + alpha) && w.message().contains("EBADF"), w.message());

            long refusedBefore = as.refusedBlocks();
            IoReturn f = fsync(s, closed, closedFile, false);
            assertEquals(-Errno.EBADF, IoResult.result(f.result()), f.message());
            assertTrue(f.message().contains("fsync") && f.message().contains(closedFile.toString())
                    && f.message().contains("EBADF"), f.message());
            assertEquals(refusedBefore + 1, as.refusedBlocks(), "aio_fsync refuses a bad descriptor before queueing");

            int devNull = open(Path.of("/dev/null"), OpenFlags.O_RDWR);
            IoReturn n = fsync(s, devNull, Path.of("/dev/null"), true);
            assertEquals(-Errno.EINVAL, IoResult.result(n.result()), n.message());
        }
    }

    /** The buffer manager over posix_aio: pages read and verified, and a short block named by relation and block. */
    @Test
    void theBufferManagerReadsThroughItAndNamesAShortBlock() throws Exception {
        BufMgrSettings settings = new BufMgrSettings.Builder().sharedBuffers(256).build();
        try (BufferManagerCore core = BufferManagerCore.open(dir.resolve("data"), settings, method)) {
            StorageManager smgr = core.storage();
            BufferPool pool = core.pool();
            RelFileLocator loc = new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 7100);
            SmgrRelation rel = smgr.open(loc);
            rel.create();
            int blocks = 8;
            MemorySegment pages = arena.allocate((long) blocks * BLOCK, 4096);
            for (int b = 0; b < blocks; b++) {
                MemorySegment page = pages.asSlice((long) b * BLOCK, BLOCK);
                org.pageio.bufmgr.page.Page.init(page, 0);
                page.set(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, 4096, b * 1000 + 7);
                org.pageio.bufmgr.page.Page.setChecksum(page, b);
            }
            rel.write(0, pages, blocks);
            rel.sync();
            try (FileChannel ch = FileChannel.open(rel.segmentPath(0), StandardOpenOption.WRITE)) {
                ch.truncate(7L * BLOCK + 4096); // block 7 is cut in half
            }
            try (BufferSession s = pool.openSession("client")) {
                for (int b = 0; b < 7; b++) {
                    int buf = s.readBuffer(rel, b, null);
                    assertEquals(b * 1000 + 7, s.page(buf).get(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, 4096));
                    s.releaseBuffer(buf);
                }
                IOException e = assertThrows(IOException.class, () -> s.readBuffer(rel, 7, null));
                assertTrue(e.getMessage().contains("block 7") && e.getMessage().contains("read only 4096 of 8192 bytes"),
                        e.getMessage());
            } finally {
                pool.close();
            }
        }
    }

    /** A thread without a session waits for a session's read: it reaps it (the shared callbacks run there). */
    @Test
    void aThreadWithoutASessionCompletesTheRead() throws Exception {
        Path fifo = dir.resolve("fifo");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor(), "mkfifo " + fifo);
        int pipeFd = open(fifo, OpenFlags.O_RDWR); // a reader and a writer: the read waits for bytes
        AtomicReference<Thread> completer = new AtomicReference<>();
        org.pageio.api.IoCallback who = new org.pageio.api.IoCallback() {
            @Override
            public String name() {
                return "who";
            }

            @Override
            public long completeShared(IoHandle h, long result, int data) {
                completer.set(Thread.currentThread());
                return result;
            }
        };
        try (IoSession s = ctx.openSession("t")) {
            MemorySegment buf = block();
            IoReturn ret = new IoReturn();
            IoHandle h = s.acquire();
            long ref = h.waitRef();
            h.setIovec(0, buf.address(), 5).addCallback(who, 0).setReturn(ret).startReadv(pipeFd, 1, 0);
            Thread waiter = new Thread(() -> ctx.awaitRef(ref), "waiter");
            waiter.start();
            while (state(s).suspends() == 0) {
                Thread.onSpinWait(); // the waiter sleeps in aio_suspend on the read
            }
            assertTrue(waiter.isAlive());
            try (FileChannel w = FileChannel.open(fifo, StandardOpenOption.WRITE)) {
                w.write(java.nio.ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5}));
            }
            waiter.join();
            assertEquals(waiter, completer.get(), "the waiter reaped the read and ran its shared callback");
            s.awaitRef(ref);
            assertEquals(IoResult.OK, ret.status(), ret.message());
            assertEquals(5, IoResult.result(ret.result()));
        }
    }

    /**
     * House rule: no allocation per I/O on the submit and reap paths, once the JIT compiled them
     * (interpreted and C1 code allocate where C2's escape analysis does not, so passes repeat until
     * one is clean, at most {@value #ALLOCATION_PASSES}).
     */
    @Test
    void steadyStateReadsAllocateNothing() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        MemorySegment one = block();
        MemorySegment[] two = {block(), block()};
        try (IoSession s = ctx.openSession("t")) {
            IoReturn ret = new IoReturn();
            IoTarget target = IoTarget.file(alpha);
            int rounds = 10_000;
            List<Long> passes = new ArrayList<>();
            for (int pass = 0; pass < ALLOCATION_PASSES; pass++) {
                long before = mx.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < rounds; i++) {
                    IoHandle h = s.acquire();
                    long gen = h.generation();
                    if ((i & 1) == 0) {
                        h.setIovec(0, one.address(), BLOCK); // aio_read
                    } else {
                        h.setIovec(0, two[0].address(), BLOCK).setIovec(1, two[1].address(), BLOCK); // lio_listio
                    }
                    h.setReturn(ret).setTarget(target, i);
                    h.startReadv(alphaFd, 1 + (i & 1), (long) (i % (FILE_BLOCKS - 1)) * BLOCK);
                    s.await(h, gen);
                    if (IoResult.status(ret.result()) != IoResult.OK) {
                        throw new AssertionError(ret.message());
                    }
                }
                long allocated = mx.getCurrentThreadAllocatedBytes() - before;
                passes.add(allocated);
                if (pass > 0 && allocated < rounds) {
                    assertTrue(state(s).listioCalls() >= rounds / 2, "half the reads went through lio_listio");
                    return; // less than one byte per read: nothing is allocated per I/O
                }
            }
            throw new AssertionError("every pass of " + rounds + " reads allocated: " + passes + " bytes");
        }
    }

    static final int ALLOCATION_PASSES = 40;

    @Test
    void settingsAreRefusedOutsideTheirRangesNamingIt() {
        assertEquals("posix_aio_threads = 0 is out of range: valid values are 1..1024",
                assertThrows(IllegalArgumentException.class, () -> new PosixAioSettings(0, 64, 1, 8)).getMessage());
        assertEquals("posix_aio_num = 16 is out of range: valid values are 32..65536",
                assertThrows(IllegalArgumentException.class, () -> new PosixAioSettings(20, 16, 1, 8)).getMessage());
        assertEquals("posix_aio_idle_time = 0 is out of range: valid values are 1..3600",
                assertThrows(IllegalArgumentException.class, () -> new PosixAioSettings(20, 64, 0, 8)).getMessage());
        assertEquals("posix_aio_fds_per_file = 0 is out of range: valid values are 1..64",
                assertThrows(IllegalArgumentException.class, () -> new PosixAioSettings(20, 64, 1, 0)).getMessage());
        assertEquals("posix_aio_fds_per_file = 65 is out of range: valid values are 1..64",
                assertThrows(IllegalArgumentException.class,
                        () -> PosixAioSettings.from(Map.of("posix_aio_fds_per_file", "65"))).getMessage());
        assertEquals("posix_aio_threads = many is not an integer",
                assertThrows(IllegalArgumentException.class, () -> PosixAioSettings.from(Map.of("posix_aio_threads", "many")))
                        .getMessage());
        assertEquals(new PosixAioSettings(4, 64, 1, 8), PosixAioSettings.from(Map.of("posix_aio_threads", " 4 ")));
        assertEquals(new PosixAioSettings(20, 64, 1, 1), PosixAioSettings.from(Map.of("posix_aio_fds_per_file", "1")));
        assertEquals("posix_aio_threads = 20, posix_aio_num = 64, posix_aio_idle_time = 1 s, posix_aio_fds_per_file = 8",
                PosixAioSettings.DEFAULTS.describe());
    }

    /** A configuration out of range is rejected in one line; the values in force stay and availability shows why. */
    @Test
    void aRejectedConfigurationKeepsTheSettingsInForceAndSaysWhy() {
        PosixAioIoMethod m = new PosixAioIoMethod();
        m.activate(config(8, 64, 2));
        assertEquals(new PosixAioSettings(8, 64, 2, 8), m.settings());
        assertNull(m.availability().cause());
        m.modified(config(8, 64, 0));
        assertEquals(new PosixAioSettings(8, 64, 2, 8), m.settings(), "the values in force stay");
        assertTrue(m.availability().available());
        assertEquals("io_method=posix_aio: rejected configuration: posix_aio_idle_time = 0 is out of range: valid values"
                + " are 1..3600; keeping posix_aio_threads = 8, posix_aio_num = 64, posix_aio_idle_time = 2 s, posix_aio_fds_per_file = 8",
                m.availability().cause());
        m.modified(config(8, 64, 3));
        assertEquals(new PosixAioSettings(8, 64, 3, 8), m.settings());
        assertNull(m.availability().cause(), "a valid configuration clears the rejection");
    }

    static PosixAioConfig config(int threads, int num, int idle) {
        return new PosixAioConfig() {
            @Override
            public Class<? extends java.lang.annotation.Annotation> annotationType() {
                return PosixAioConfig.class;
            }

            @Override
            public int posix__aio__threads() {
                return threads;
            }

            @Override
            public int posix__aio__num() {
                return num;
            }

            @Override
            public int posix__aio__idle__time() {
                return idle;
            }

            @Override
            public int posix__aio__fds__per__file() {
                return PosixAioSettings.DEFAULT_FDS_PER_FILE;
            }
        };
    }
}
