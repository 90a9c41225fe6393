package org.pageio.method.uring;

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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.api.AioConfig;
import org.pageio.api.AioContext;
import org.pageio.api.IoCallback;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.api.IoSession;
import org.pageio.api.IoTarget;
import org.pageio.posix.Errno;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;
import org.pageio.uring.IoUring;
import org.pageio.uring.IoUringCounters;
import org.pageio.uring.Pattern;
import org.pageio.uring.Seccomp;

/** io_method=io_uring on real files, outside OSGi: what the conformance kit cannot see from outside. */
@Timeout(60)
class UringIoMethodTest {

    static final int BLOCK = Pattern.BLOCK;
    static final int FILE_BLOCKS = 64;

    @TempDir
    Path dir;
    Path alpha;
    int alphaFd = -1;
    Arena arena;
    UringIoMethod method;
    AioContext ctx;
    final List<Integer> fds = new ArrayList<>();

    @BeforeEach
    void setUp() throws IOException {
        alpha = Pattern.write(dir.resolve("alpha"), FILE_BLOCKS);
        alphaFd = open(alpha, OpenFlags.O_RDONLY);
        arena = Arena.ofShared();
        method = new UringIoMethod();
        method.activate(config("large"));
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
        assertEquals(0, Pattern.wrongBytes(name, block, buf), "wrong bytes in block " + block + " of " + name);
    }

    record Batch(IoHandle[] hs, long[] gens, IoReturn[] rets, MemorySegment[] bufs) {
    }

    /** Reads blocks {@code first .. first + n - 1} of alpha, one handle each, in one batch (one submission). */
    Batch readBatch(IoSession s, int n, long first) {
        Batch b = new Batch(new IoHandle[n], new long[n], new IoReturn[n], new MemorySegment[n]);
        s.enterBatchMode();
        for (int i = 0; i < n; i++) {
            b.bufs()[i] = block();
            b.rets()[i] = new IoReturn();
            b.hs()[i] = s.acquire();
            b.gens()[i] = b.hs()[i].generation();
            b.hs()[i].setIovec(0, b.bufs()[i]).setReturn(b.rets()[i]).startReadv(alphaFd, 1, (first + i) * BLOCK);
        }
        s.exitBatchMode();
        return b;
    }

    IoReturn read(IoSession s, int fd, long firstBlock, int flags, MemorySegment... bufs) {
        IoReturn ret = new IoReturn();
        IoHandle h = s.acquire();
        long gen = h.generation();
        for (int i = 0; i < bufs.length; i++) {
            h.setIovec(i, bufs[i]);
        }
        h.setFlags(flags).setReturn(ret).setTarget(IoTarget.file(alpha), firstBlock);
        h.startReadv(fd, bufs.length, firstBlock * BLOCK);
        s.await(h, gen);
        return ret;
    }

    @Test
    void isAvailableAndEverySessionGetsItsOwnRingSizedByIoMaxConcurrency() {
        assertEquals("io_uring", method.name());
        assertTrue(method.availability().available(), method.availability().cause());
        assertTrue(method.hasWaitOne());
        assertTrue(method.waitOnFdBeforeClose());
        IoUring first;
        try (IoSession a = ctx.openSession("a"); IoSession b = ctx.openSession("b")) {
            first = assertInstanceOf(UringSession.class, a.methodState()).get();
            IoUring second = assertInstanceOf(UringSession.class, b.methodState()).get();
            assertNotSame(first, second);
            assertEquals(16, first.sqEntries());
            assertEquals(32, first.cqEntries());
        }
        assertEquals(-1, first.cqOverflow(), "the ring is closed with its session");
    }

    @Test
    void readsOneBlockAndAVectorOfNonAdjacentBuffers() {
        try (IoSession s = ctx.openSession("t")) {
            MemorySegment one = block();
            IoReturn r1 = read(s, alphaFd, 17, 0, one);
            assertEquals(IoResult.OK, r1.status(), r1.message());
            assertEquals(BLOCK, IoResult.result(r1.result()));
            assertBlock("alpha", 17, one);

            MemorySegment[] bufs = {block(), block(), block()};
            IoReturn r3 = read(s, alphaFd, 30, 0, bufs[2], bufs[0], bufs[1]);
            assertEquals(IoResult.OK, r3.status(), r3.message());
            assertEquals(3 * BLOCK, IoResult.result(r3.result()));
            assertBlock("alpha", 30, bufs[2]);
            assertBlock("alpha", 31, bufs[0]);
            assertBlock("alpha", 32, bufs[1]);
        }
    }

    @Test
    void aBatchIsOneSystemCall() {
        int n = 16;
        MemorySegment[] bufs = new MemorySegment[n];
        IoHandle[] hs = new IoHandle[n];
        long[] gens = new long[n];
        IoReturn[] rets = new IoReturn[n];
        try (IoSession s = ctx.openSession("t")) {
            IoUring ring = ((UringSession) s.methodState()).get();
            long before = ring.submitCalls();
            s.enterBatchMode();
            for (int i = 0; i < n; i++) {
                bufs[i] = block();
                rets[i] = new IoReturn();
                hs[i] = s.acquire();
                gens[i] = hs[i].generation();
                hs[i].setIovec(0, bufs[i]).setReturn(rets[i]).startReadv(alphaFd, 1, (long) i * 3 * BLOCK % (FILE_BLOCKS * BLOCK));
            }
            assertEquals(before, ring.submitCalls(), "nothing is entered while batching");
            s.exitBatchMode();
            assertEquals(before + 1, ring.submitCalls(), "16 SQEs, one io_uring_enter");
            for (int i = 0; i < n; i++) {
                s.await(hs[i], gens[i]);
                assertEquals(IoResult.OK, rets[i].status(), rets[i].message());
                assertBlock("alpha", (long) i * 3 % FILE_BLOCKS, bufs[i]);
            }
            assertEquals(n, ring.reaped());
        }
    }

    /**
     * The ring's counters that say how a submitter uses it (what the direct-vs-fio bench prints): the reads the
     * kernel still had in flight before each submission, the blocking waits and the polls. A read
     * of an empty FIFO stays in flight in the kernel until a writer comes, which makes the counts
     * exact.
     */
    @Test
    void theRingCountsReadsInFlightAtEachSubmissionBlockingWaitsAndPolls() throws Exception {
        Path fifo = dir.resolve("fifo");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor(), "mkfifo " + fifo);
        int pipeFd = open(fifo, OpenFlags.O_RDWR); // a reader and a writer: neither open nor read fails
        try (IoSession s = ctx.openSession("t")) {
            IoUring ring = ((UringSession) s.methodState()).get();
            assertTrue(Double.isNaN(ring.averageInFlightAtSubmit()), "no submission yet");
            MemorySegment pipeBuf = block();
            IoReturn pipeRet = new IoReturn();
            IoHandle pipe = s.acquire();
            long pipeGen = pipe.generation();
            pipe.setIovec(0, pipeBuf).setReturn(pipeRet).startReadv(pipeFd, 1, 0);
            assertEquals(1, ring.submitSamples());
            assertEquals(0, ring.inFlightAtSubmitSum(), "nothing was in flight before the first submission");
            long[] reap = ring.reapStats();
            assertFalse(s.checkDone(pipe, pipeGen), "the FIFO is empty: the read stays in flight");
            assertEquals(reap[1] + 1, ring.reapStats()[1], "checkDone polled the ring once");
            assertEquals(reap[2], ring.reapStats()[2], "and found nothing");

            int n = 4;
            Batch b = readBatch(s, n, 0);
            IoHandle[] hs = b.hs();
            long[] gens = b.gens();
            IoReturn[] rets = b.rets();
            MemorySegment[] bufs = b.bufs();
            assertEquals(2, ring.submitSamples());
            assertEquals(1, ring.inFlightAtSubmitSum(), "the FIFO read was in flight when the batch went in");
            for (int i = 0; i < n; i++) {
                s.await(hs[i], gens[i]);
                assertEquals(IoResult.OK, rets[i].status(), rets[i].message());
                assertBlock("alpha", i, bufs[i]);
            }
            assertEquals(1.0 / 2, ring.averageInFlightAtSubmit(), 1e-9);

            long waits = ring.reapStats()[0];
            Thread writer = new Thread(() -> {
                try {
                    Thread.sleep(300); // the owner blocks in io_uring_enter meanwhile
                    Files.write(fifo, new byte[] {42});
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, "fifo writer");
            writer.start();
            s.await(pipe, pipeGen);
            writer.join();
            assertEquals(IoResult.PARTIAL, pipeRet.status(), pipeRet.message());
            assertEquals(42, pipeBuf.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0));
            assertTrue(ring.reapStats()[0] > waits, "the owner blocked in io_uring_enter for the FIFO read");
            IoUringCounters c = ring.counters();
            long[] r = ring.reapStats();
            assertEquals(new IoUringCounters(1, ring.submitCalls(), 5, r[0], r[1], r[2], 1, 2, ring.fixedIos()), c);
            assertEquals(1.0 / 2, c.averageInFlightAtSubmit(), 1e-9);
            IoUringCounters two = c.plus(c);
            assertEquals(2, two.rings());
            assertEquals(10, two.submitted());
            assertEquals(1.0 / 2, two.averageInFlightAtSubmit(), 1e-9);
        }
    }

    @Test
    void writeAndWritevThenFsyncAndFdatasyncThenReadBack() throws IOException {
        Path gamma = dir.resolve("gamma");
        int fd = open(gamma, OpenFlags.O_RDWR | OpenFlags.O_CREAT);
        MemorySegment[] out = {block(), block(), block()};
        for (int i = 0; i < out.length; i++) {
            Pattern.fill("gamma", i, out[i]);
        }
        try (IoSession s = ctx.openSession("t")) {
            IoReturn w1 = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setIovec(0, out[0]).setReturn(w1).startWritev(fd, 1, 0); // one iovec: IORING_OP_WRITE
            s.await(h, gen);
            assertEquals(IoResult.OK, w1.status(), w1.message());
            IoReturn w2 = new IoReturn();
            h = s.acquire();
            gen = h.generation();
            h.setIovec(0, out[1]).setIovec(1, out[2]).setReturn(w2).startWritev(fd, 2, BLOCK); // IORING_OP_WRITEV
            s.await(h, gen);
            assertEquals(IoResult.OK, w2.status(), w2.message());
            assertEquals(2 * BLOCK, IoResult.result(w2.result()));
            for (boolean dataOnly : new boolean[] {false, true}) {
                IoReturn f = new IoReturn();
                h = s.acquire();
                gen = h.generation();
                h.setReturn(f).startFsync(fd, dataOnly);
                s.await(h, gen);
                assertEquals(IoResult.OK, f.status(), f.message());
            }
            MemorySegment[] in = {block(), block(), block()};
            IoReturn r = new IoReturn();
            h = s.acquire();
            gen = h.generation();
            h.setIovec(0, in[0]).setIovec(1, in[1]).setIovec(2, in[2]).setReturn(r).startReadv(fd, 3, 0);
            s.await(h, gen);
            assertEquals(IoResult.OK, r.status(), r.message());
            for (int i = 0; i < 3; i++) {
                assertBlock("gamma", i, in[i]);
            }
        }
        assertEquals(3L * BLOCK, Files.size(gamma));
    }

    @Test
    void errorsAreResultsWithTheErrnoAndShortReadsArePartial() throws IOException {
        int closed = Posix.open(alpha, OpenFlags.O_RDONLY, 0);
        Posix.close(closed, alpha);
        try (IoSession s = ctx.openSession("t")) {
            for (int fd : new int[] {closed, -1}) {
                IoReturn r = read(s, fd, 0, 0, block());
                assertEquals(IoResult.ERROR, r.status());
                assertEquals(-Errno.EBADF, IoResult.result(r.result()));
                assertTrue(r.message().contains("EBADF"), r.message());
            }
            IoReturn partial = read(s, alphaFd, FILE_BLOCKS - 1, 0, block(), block());
            assertEquals(IoResult.PARTIAL, partial.status());
            assertEquals(BLOCK, IoResult.result(partial.result()));
            IoReturn f = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setReturn(f).startFsync(-1, true);
            s.await(h, gen);
            assertEquals(-Errno.EBADF, IoResult.result(f.result()));
        }
    }

    /**
     * A descriptor closed by its user may be reused by the next ring (the conformance kit does
     * exactly that: close a file, then open a session). I/O on it must fail like I/O on a closed
     * descriptor, not poll the ring for readability forever.
     */
    @Test
    void aStaleDescriptorThatIsNowARingFailsWithEbadf() {
        try (IoSession s = ctx.openSession("t"); IoSession other = ctx.openSession("u")) {
            for (IoSession owner : new IoSession[] {s, other}) {
                int ringFd = ((UringSession) owner.methodState()).get().fd();
                assertTrue(IoUring.isRingFd(ringFd));
                IoReturn r = read(s, ringFd, 0, 0, block());
                assertEquals(-Errno.EBADF, IoResult.result(r.result()), r.message());
            }
        }
    }

    @Test
    void aFailingSqeDoesNotHoldBackTheRestOfItsBatch() {
        int n = 6;
        IoHandle[] hs = new IoHandle[n];
        long[] gens = new long[n];
        IoReturn[] rets = new IoReturn[n];
        MemorySegment[] bufs = new MemorySegment[n];
        try (IoSession s = ctx.openSession("t")) {
            s.enterBatchMode();
            for (int i = 0; i < n; i++) {
                bufs[i] = block();
                rets[i] = new IoReturn();
                hs[i] = s.acquire();
                gens[i] = hs[i].generation();
                hs[i].setIovec(0, bufs[i]).setReturn(rets[i]).startReadv(i % 2 == 0 ? -1 : alphaFd, 1, (long) i * BLOCK);
            }
            s.exitBatchMode();
            for (int i = 0; i < n; i++) {
                s.await(hs[i], gens[i]);
                if (i % 2 == 0) {
                    assertEquals(-Errno.EBADF, IoResult.result(rets[i].result()), rets[i].message());
                } else {
                    assertEquals(IoResult.OK, rets[i].status(), rets[i].message());
                    assertBlock("alpha", i, bufs[i]);
                }
            }
        }
    }

    /** The shared callbacks run in whichever thread reaps: here a thread without a session. */
    @Test
    void aThreadWithoutASessionReapsTheOwnersRing() throws Exception {
        AtomicReference<Thread> completer = new AtomicReference<>();
        IoCallback who = new IoCallback() {
            public String name() {
                return "who";
            }

            public long completeShared(IoHandle h, long r, int data) {
                completer.set(Thread.currentThread());
                return r;
            }
        };
        try (IoSession s = ctx.openSession("t")) {
            MemorySegment buf = block();
            IoHandle h = s.acquire();
            long gen = h.generation();
            int index = h.index();
            h.setIovec(0, buf).addCallback(who, 0).startReadv(alphaFd, 1, 9L * BLOCK);
            Thread waiter = new Thread(() -> ctx.await(index, gen), "uring-waiter");
            waiter.start();
            waiter.join(30_000);
            assertFalse(waiter.isAlive());
            assertTrue(ctx.checkDone(index, gen));
            assertEquals(waiter, completer.get(), "the waiter reaped the CQE and ran the shared callback");
            s.await(h, gen);
            assertBlock("alpha", 9, buf);
        }
    }

    /**
     * A waiter for the oldest of many I/Os can learn that others completed before it pays for
     * their completions (a read stream starts replacements first): {@code waitProgress} with max 0
     * returns once a CQE is ready and processes none, with max k it processes at most k, and
     * {@code readyCompletions} counts what waits in the CQ. The oldest I/O is a read of an empty
     * FIFO, in flight until a writer comes, so the counts are exact.
     */
    @Test
    void waitProgressReturnsOnReadyCompletionsAndProcessesAtMostTheNumberAsked() throws Exception {
        Path fifo = dir.resolve("fifo-progress");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor(), "mkfifo " + fifo);
        int pipeFd = open(fifo, OpenFlags.O_RDWR);
        boolean written = false;
        try (IoSession s = ctx.openSession("t")) {
          try {
            IoUring ring = ((UringSession) s.methodState()).get();
            MemorySegment pipeBuf = block();
            IoReturn pipeRet = new IoReturn();
            IoHandle pipe = s.acquire();
            long pipeGen = pipe.generation();
            long pipeRef = pipe.waitRef();
            pipe.setIovec(0, pipeBuf).setReturn(pipeRet).startReadv(pipeFd, 1, 0);
            int n = 4;
            Batch b = readBatch(s, n, 5);
            IoHandle[] hs = b.hs();
            long[] gens = b.gens();
            IoReturn[] rets = b.rets();
            MemorySegment[] bufs = b.bufs();
            long reaped = ring.reaped();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (s.readyCompletions() < n && System.nanoTime() < deadline) {
                s.awaitRefProgress(pipeRef, 0); // returns at once while a CQE is ready: processes nothing
            }
            assertEquals(n, s.readyCompletions(), "the four file reads wait in the CQ");
            assertEquals(reaped, ring.reaped(), "max 0: nothing processed");
            for (IoHandle h : hs) {
                assertEquals(IoHandle.SUBMITTED, h.state(), "completed in the kernel, not processed yet");
            }
            assertFalse(s.peekRefDone(pipeRef), "the FIFO read is in flight");

            s.awaitRefProgress(pipeRef, 3);
            assertEquals(reaped + 3, ring.reaped(), "max 3: three processed");
            assertEquals(1, s.readyCompletions());
            int processed = 0;
            for (IoHandle h : hs) {
                processed += h.state() >= IoHandle.COMPLETED_IO ? 1 : 0;
            }
            assertEquals(3, processed);
            s.awaitRefProgress(pipeRef, 8);
            assertEquals(reaped + 4, ring.reaped(), "the last one, and nothing else was ready");
            assertEquals(0, s.readyCompletions());
            for (int i = 0; i < n; i++) {
                s.await(hs[i], gens[i]); // reclaims: the owner's part of the completion fills the IoReturn
                assertEquals(IoResult.OK, rets[i].status(), rets[i].message());
                assertBlock("alpha", 5 + i, bufs[i]);
            }
            assertEquals(reaped + 4, ring.reaped(), "awaiting processed completions reaps nothing more");

            Thread writer = new Thread(() -> {
                try {
                    Thread.sleep(200); // the owner blocks in io_uring_enter for a ready CQE meanwhile
                    Files.write(fifo, new byte[] {7});
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, "fifo writer");
            writer.start();
            written = true;
            while (!s.peekRefDone(pipeRef)) {
                s.awaitRefProgress(pipeRef, 1);
            }
            writer.join();
            assertEquals(reaped + 5, ring.reaped());
            assertEquals(7, pipeBuf.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0));
            s.await(pipe, pipeGen);
          } finally {
            if (!written) {
                Files.write(fifo, new byte[] {7}); // a failed assertion must not leave close() waiting for the FIFO
            }
          }
        }
    }

    /** A method that records which IOSQE flags the real one picks, then lets it submit. */
    static final class Recording implements IoMethod {
        final UringIoMethod real;
        final List<Integer> flags = new ArrayList<>();

        Recording(UringIoMethod real) {
            this.real = real;
        }

        public String name() {
            return real.name();
        }

        public Object openSession(IoSession s) {
            return real.openSession(s);
        }

        public void closeSession(IoSession s, Object state) {
            real.closeSession(s, state);
        }

        public int submit(IoHandle[] handles, int count) {
            int before = handles[0].session().inFlightCount() - count;
            for (int i = 0; i < count; i++) {
                flags.add(real.sqeFlags(handles[i], before + i));
            }
            return real.submit(handles, count);
        }

        public boolean hasWaitOne() {
            return true;
        }

        public void waitOne(IoHandle h, long gen) {
            real.waitOne(h, gen);
        }

        public void checkOne(IoHandle h, long gen) {
            real.checkOne(h, gen);
        }
    }

    /** Eight buffered reads in one batch (1 block, except the last of 4 blocks), then one write. */
    private List<Integer> flagsFor(UringIoMethod.ForceAsync policy, int handleFlags) {
        return flagsFor(new UringIoMethod(policy), handleFlags);
    }

    private List<Integer> flagsFor(UringIoMethod method, int handleFlags) {
        UringIoMethod.ForceAsync policy = method.forceAsync();
        Recording rec = new Recording(method);
        try (AioContext c = AioContext.create(rec, new AioConfig(1, 16, 16)); IoSession s = c.openSession("t")) {
            int n = 8;
            IoHandle[] hs = new IoHandle[n];
            long[] gens = new long[n];
            MemorySegment[][] bufs = new MemorySegment[n][];
            s.enterBatchMode();
            for (int i = 0; i < n; i++) {
                int blocks = i == n - 1 ? 4 : 1;
                bufs[i] = new MemorySegment[blocks];
                hs[i] = s.acquire();
                gens[i] = hs[i].generation();
                for (int b = 0; b < blocks; b++) {
                    bufs[i][b] = block();
                    hs[i].setIovec(b, bufs[i][b]);
                }
                hs[i].setFlags(handleFlags).startReadv(alphaFd, blocks, (long) i * BLOCK);
            }
            s.exitBatchMode();
            for (int i = 0; i < n; i++) {
                s.await(hs[i], gens[i]);
                for (int b = 0; b < bufs[i].length; b++) {
                    assertBlock("alpha", i + b, bufs[i][b]); // IOSQE_ASYNC or not, the data is right
                }
            }
            // a single buffered write while nothing else is in flight
            Path out = dir.resolve("w-" + policy + "-" + handleFlags);
            try {
                int fd = open(out, OpenFlags.O_RDWR | OpenFlags.O_CREAT);
                IoHandle h = s.acquire();
                long gen = h.generation();
                h.setIovec(0, bufs[0][0]).setFlags(handleFlags).startWritev(fd, 1, 0);
                s.await(h, gen);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }
        return rec.flags;
    }

    @Test
    void iosqeAsyncFollowsTheChosenPolicy() {
        int a = IoUring.IOSQE_ASYNC;
        int buffered = IoHandle.FLAG_BUFFERED;
        assertEquals(List.of(0, 0, 0, 0, 0, 0, 0, 0, 0), flagsFor(UringIoMethod.ForceAsync.NEVER, buffered));
        // PG 18: more than 4 in flight before this one (earlier batch members count); writes too.
        assertEquals(List.of(0, 0, 0, 0, 0, a, a, a, 0), flagsFor(UringIoMethod.ForceAsync.PG18, buffered));
        // PG 19: reads only; also at 4 blocks and more.
        assertEquals(List.of(0, 0, 0, 0, 0, a, a, a, 0), flagsFor(UringIoMethod.ForceAsync.PG19, buffered));
        // LARGE: reads of 4 blocks and more only.
        assertEquals(List.of(0, 0, 0, 0, 0, 0, 0, a, 0), flagsFor(UringIoMethod.ForceAsync.LARGE, buffered));
        // AUTO (the default): the same candidates; the first is a probe, tried inline
        assertEquals(List.of(0, 0, 0, 0, 0, 0, 0, a, 0), flagsFor(UringIoMethod.ForceAsync.AUTO, buffered));
        assertEquals(UringIoMethod.ForceAsync.AUTO, new UringIoMethod().forceAsync());
        // Never for direct (unbuffered) I/O.
        assertEquals(List.of(0, 0, 0, 0, 0, 0, 0, 0, 0), flagsFor(UringIoMethod.ForceAsync.PG18, 0));
        assertEquals(List.of(0, 0, 0, 0, 0, 0, 0, 0, 0), flagsFor(UringIoMethod.ForceAsync.LARGE, 0));
    }

    /**
     * {@code auto}: large buffered reads of cached pages are tried inline and complete inside the
     * submitting io_uring_enter, so none is punted; once the file is evicted, a probe needs the
     * disk, and the large reads after it go to io-wq. Every byte is checked either way.
     */
    @Test
    void autoPuntsLargeReadsOnlyWhileTheirPagesAreNotCached() throws IOException {
        UringIoMethod auto = new UringIoMethod(UringIoMethod.ForceAsync.AUTO);
        int reads = FILE_BLOCKS / 4;
        try (AioContext c = AioContext.create(auto, new AioConfig(1, 16, 16)); IoSession s = c.openSession("auto")) {
            UringSession us = (UringSession) s.methodState();
            Posix.residency(alphaFd, 0, (long) FILE_BLOCKS * BLOCK, alpha); // written just now: cached
            for (int r = 0; r < reads; r++) {
                readLarge(s, r * 4L);
            }
            assertEquals(reads, us.inlineProbes(), "every read of cached pages was tried inline and finished there");
            assertEquals(0, us.slowProbes(), "no probe of cached pages needed the disk");
            assertEquals(0, us.punted(), "nothing punted while the pages were cached");

            Posix.fdatasyncOrThrow(alphaFd, alpha);
            Posix.fadvise(alphaFd, 0, 0, org.pageio.posix.Fadvise.POSIX_FADV_DONTNEED, alpha);
            assertEquals(0, Posix.residency(alphaFd, 0, (long) FILE_BLOCKS * BLOCK, alpha).residentPages(),
                    "alpha could not be evicted from the page cache; the test needs a file system that evicts");
            for (int r = 0; r < reads; r++) {
                readLarge(s, r * 4L);
            }
            long probesAfter = us.inlineProbes() - reads + us.slowProbes();
            assertTrue(us.slowProbes() >= 1, "the first read after the eviction needed the disk: " + counts(us));
            assertEquals(Math.min(reads - probesAfter, UringSession.PUNTS_PER_PROBE * us.slowProbes()), us.punted(),
                    "after a probe that needed the disk the next large reads are punted: " + counts(us));
            assertEquals(reads, probesAfter + us.punted(), "each read was a probe or punted: " + counts(us));
        }
    }

    private static String counts(UringSession us) {
        return "inline probes " + us.inlineProbes() + ", slow probes " + us.slowProbes() + ", punted " + us.punted();
    }

    /** Reads blocks {@code first .. first + 3} of alpha into one 32 kB buffer (a large buffered read) and checks them. */
    private void readLarge(IoSession s, long first) {
        MemorySegment buf = arena.allocate(4L * BLOCK, 4096);
        IoReturn ret = new IoReturn();
        IoHandle h = s.acquire();
        long gen = h.generation();
        h.setIovec(0, buf).setFlags(IoHandle.FLAG_BUFFERED).setReturn(ret).setTarget(IoTarget.file(alpha), first);
        h.startReadv(alphaFd, 1, first * BLOCK);
        s.await(h, gen);
        assertEquals(IoResult.OK, ret.status(), ret.message());
        assertEquals(4 * BLOCK, IoResult.result(ret.result()), "read of blocks " + first + ".." + (first + 3));
        for (int b = 0; b < 4; b++) {
            assertBlock("alpha", first + b, buf.asSlice((long) b * BLOCK, BLOCK));
        }
    }

    /** The configuration as DS would hand it: {@code io_uring_force_async = value}. */
    static UringConfig config(String value) {
        return new UringConfig() {
            @Override
            public String io__uring__force__async() {
                return value;
            }

            @Override
            public Class<? extends java.lang.annotation.Annotation> annotationType() {
                return UringConfig.class;
            }
        };
    }

    @Test
    void forceAsyncIsASettingValidatedByNameAndAppliedLive() {
        assertEquals(UringIoMethod.ForceAsync.PG18, UringIoMethod.ForceAsync.parse(" PG18 "), "case-insensitive");
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> UringIoMethod.ForceAsync.parse("always"));
        assertEquals("io_uring_force_async = always is not valid: valid values are auto, large, pg19, pg18, never",
                bad.getMessage());

        UringIoMethod m = new UringIoMethod();
        m.activate(config("always"));
        assertEquals(UringIoMethod.DEFAULT_FORCE_ASYNC, m.forceAsync(), "rejected at activation: the default");
        assertTrue(m.availability().available(), "a rejected setting does not take io_uring away");
        assertTrue(m.availability().cause().contains("io_uring_force_async = always is not valid")
                && m.availability().cause().endsWith("using the default auto"), m.availability().cause());

        m.modified(config("pg19"));
        assertEquals(UringIoMethod.ForceAsync.PG19, m.forceAsync());
        assertNull(m.availability().cause(), "the rejection is over once a valid value came");
        m.modified(config(""));
        assertEquals(UringIoMethod.ForceAsync.PG19, m.forceAsync(), "an invalid change keeps the value in force");
        assertTrue(m.toString().contains("io_uring_force_async = pg19; io_method=io_uring: rejected configuration"),
                m.toString());
        m.modified(config("never"));
        assertEquals(List.of(0, 0, 0, 0, 0, 0, 0, 0, 0), flagsFor(m, IoHandle.FLAG_BUFFERED), "applied live");
    }

    @Test
    void pg19PuntsLargeReadsEvenWhenLittleIsInFlight() {
        Recording rec = new Recording(new UringIoMethod(UringIoMethod.ForceAsync.PG19));
        try (AioContext c = AioContext.create(rec, new AioConfig(1, 16, 16)); IoSession s = c.openSession("t")) {
            MemorySegment[] bufs = {block(), block(), block(), block()};
            IoHandle h = s.acquire();
            long gen = h.generation();
            for (int b = 0; b < 4; b++) {
                h.setIovec(b, bufs[b]);
            }
            h.setFlags(IoHandle.FLAG_BUFFERED).startReadv(alphaFd, 4, 0);
            s.await(h, gen);
            for (int b = 0; b < 4; b++) {
                assertBlock("alpha", b, bufs[b]);
            }
        }
        assertEquals(List.of(IoUring.IOSQE_ASYNC), rec.flags);
    }

    /**
     * House rule: no allocation per I/O on the submit and reap paths, once the JIT compiled them
     * (interpreted and C1 code allocate where C2's escape analysis does not — the JDK's own check
     * of a downcall's capture-state segment slices it, 40 bytes per system call, until C2 compiles
     * the call path — so passes repeat until one is clean, at most {@value #ALLOCATION_PASSES}: on
     * a loaded machine C2 can take longer than eight passes to get there).
     */
    @Test
    void steadyStateReadsAllocateNothing() {
        assertSteadyStateReadsAllocateNothing(block());
    }

    /** The same into a registered buffer ({@code READ_FIXED}): following the context's offer allocates nothing either. */
    @Test
    void steadyStateReadsIntoRegisteredBuffersAllocateNothing() {
        MemorySegment region = arena.allocate(2L << 20, 4096);
        ctx.registerBuffers(region);
        assertSteadyStateReadsAllocateNothing(region.asSlice(5L * BLOCK, BLOCK));
    }

    /** Passes of 10,000 reads {@link #assertSteadyStateReadsAllocateNothing} runs at most. */
    static final int ALLOCATION_PASSES = 40;

    private void assertSteadyStateReadsAllocateNothing(MemorySegment buf) {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
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
                    h.setIovec(0, buf.address(), BLOCK).setReturn(ret).setTarget(target, i);
                    h.startReadv(alphaFd, 1, (long) (i % FILE_BLOCKS) * BLOCK);
                    s.await(h, gen);
                    if (IoResult.status(ret.result()) != IoResult.OK) {
                        throw new AssertionError(ret.message());
                    }
                }
                long allocated = mx.getCurrentThreadAllocatedBytes() - before;
                passes.add(allocated);
                if (pass > 0 && allocated < rounds) {
                    IoUring ring = ((UringSession) s.methodState()).get();
                    boolean fixed = ctx.registeredBuffers() != null;
                    assertEquals(fixed ? (pass + 1L) * rounds : 0L, ring.fixedIos(), ring.registeredBuffers());
                    return; // less than one byte per read: nothing is allocated per I/O
                }
            }
            throw new AssertionError("every pass of " + rounds + " reads allocated: " + passes + " bytes");
        }
    }

    /**
     * Registered buffers: an I/O of one buffer inside the region the context offers goes in as
     * {@code READ_FIXED}/{@code WRITE_FIXED} and moves the same bytes; outside it, or with
     * several buffers, as before; once the offer is withdrawn the ring releases the registration
     * and goes back to plain reads.
     */
    @Test
    void oneBufferInsideTheOfferedRegionIsReadAndWrittenAsFixedUntilTheOfferIsWithdrawn() throws IOException {
        MemorySegment region = arena.allocate(2L << 20, 4096);
        ctx.registerBuffers(region);
        int betaFd = open(dir.resolve("beta"), OpenFlags.O_RDWR | OpenFlags.O_CREAT);
        try (IoSession s = ctx.openSession("t")) {
            IoUring ring = ((UringSession) s.methodState()).get();
            assertEquals("on: 2 MiB in 1 buffer", ring.registeredBuffers());

            MemorySegment in = region.asSlice(3L * BLOCK, BLOCK);
            IoReturn r = read(s, alphaFd, 5, 0, in);
            assertEquals(IoResult.OK, r.status(), r.message());
            assertBlock("alpha", 5, in);
            assertEquals(1, ring.fixedIos());

            MemorySegment out = block(); // not in the region
            assertEquals(IoResult.OK, read(s, alphaFd, 6, 0, out).status());
            assertBlock("alpha", 6, out);
            MemorySegment a = region.asSlice(0, BLOCK);
            MemorySegment b = region.asSlice(BLOCK, BLOCK);
            assertEquals(IoResult.OK, read(s, alphaFd, 7, 0, a, b).status()); // a vector: READV
            assertBlock("alpha", 7, a);
            assertBlock("alpha", 8, b);
            assertEquals(1, ring.fixedIos(), "only a single buffer inside the region is fixed");

            IoReturn w = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setIovec(0, in).setReturn(w).startWritev(betaFd, 1, 2L * BLOCK); // block 5 of alpha, from the region
            s.await(h, gen);
            assertEquals(IoResult.OK, w.status(), w.message());
            assertEquals(2, ring.fixedIos(), "the write went in as WRITE_FIXED");
            MemorySegment back = block();
            assertEquals(BLOCK, Posix.pread(org.pageio.posix.CallState.allocate(arena), betaFd, back, BLOCK, 2L * BLOCK));
            assertBlock("alpha", 5, back);

            ctx.unregisterBuffers(region);
            MemorySegment again = region.asSlice(9L * BLOCK, BLOCK);
            assertEquals(IoResult.OK, read(s, alphaFd, 9, 0, again).status());
            assertBlock("alpha", 9, again);
            assertEquals(2, ring.fixedIos(), "withdrawn: a plain READ");
            assertEquals("off: no region offered", ring.registeredBuffers());
        }
    }

    /**
     * A region the kernel will not register (pages of a shared file mapping cannot be pinned for
     * the long term) is not an error: the ring says why and reads into it as before.
     */
    @Test
    void aRegionTheKernelRefusesLeavesReadsPlainAndTheRingSaysWhy() throws IOException {
        Path backing = dir.resolve("mapped");
        int mfd = open(backing, OpenFlags.O_RDWR | OpenFlags.O_CREAT);
        Posix.ftruncate(mfd, 2L << 20, backing);
        MemorySegment mapped = Posix.mmap(2L << 20, org.pageio.posix.Mman.PROT_READ | org.pageio.posix.Mman.PROT_WRITE,
                org.pageio.posix.Mman.MAP_SHARED, mfd, 0, backing);
        try {
            ctx.registerBuffers(mapped);
            try (IoSession s = ctx.openSession("t")) {
                IoUring ring = ((UringSession) s.methodState()).get();
                String note = ring.registeredBuffers();
                assertTrue(note.startsWith("off: io_uring_register(IORING_REGISTER_BUFFERS) of 2 MiB in 1 buffer failed: E"),
                        note);
                assertTrue(note.endsWith("I/Os map their buffers one by one instead"), note);
                MemorySegment in = mapped.asSlice(4L * BLOCK, BLOCK);
                assertEquals(IoResult.OK, read(s, alphaFd, 11, 0, in).status());
                assertBlock("alpha", 11, in);
                assertEquals(0, ring.fixedIos());
            }
        } finally {
            ctx.unregisterBuffers(mapped);
            Posix.munmap(mapped);
        }
    }

    /** io_uring blocked for real on the activating thread: unavailable, and the context refuses it. */
    @Test
    void activatedUnderSeccompTheMethodIsUnavailableWithAnActionableCause() throws Exception {
        AtomicReference<Object> result = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                Seccomp.denyIoUringSetupOnThisThread();
                UringIoMethod m = new UringIoMethod();
                m.activate(config("large"));
                result.set(m);
            } catch (Throwable e) {
                result.set(e);
            }
        }, "seccomp-activate");
        t.start();
        t.join(30_000);
        if (result.get() instanceof Throwable e) {
            throw new AssertionError(e);
        }
        UringIoMethod m = (UringIoMethod) result.get();
        IoMethod.Availability a = m.availability();
        assertFalse(a.available());
        assertTrue(a.cause().contains("EPERM") && a.cause().contains("seccomp")
                && a.cause().contains("kernel.io_uring_disabled"), a.cause());
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> AioContext.create(m, new AioConfig(1, 4, 4)));
        assertTrue(e.getMessage().startsWith("io_method=io_uring is not available: io_uring_setup(8 entries) failed: EPERM"),
                e.getMessage());
    }
}
