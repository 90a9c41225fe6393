package org.pageio.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.posix.Errno;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;

/** The handle state machine, waiting, callbacks and batching, on real files. */
class AioCoreTest {

    static final int BLOCK = 8192;

    @TempDir
    Path dir;
    Path file;
    int fd = -1;
    Arena arena;

    @BeforeEach
    void setUp() throws IOException {
        file = dir.resolve("rel");
        Files.write(file, Blocks.content("rel", 8));
        fd = Posix.open(file, OpenFlags.O_RDONLY, 0);
        arena = Arena.ofShared();
    }

    @AfterEach
    void tearDown() throws IOException {
        Posix.close(fd, file);
        arena.close();
    }

    private AioContext context(IoMethod m, int concurrency) {
        return AioContext.create(m, new AioConfig(4, concurrency, 16));
    }

    private MemorySegment buffer() {
        return arena.allocate(BLOCK, 4096);
    }

    /** A started (submitted) one-block read with its generation, buffer and return. */
    private record Read(IoHandle h, long gen, MemorySegment buf, IoReturn ret) {
    }

    /** Starts a read of {@code block} into a fresh buffer with callback {@code cb}. */
    private Read startRead(IoSession s, IoCallback cb, long block) {
        MemorySegment buf = buffer();
        IoReturn ret = new IoReturn();
        IoHandle h = s.acquire();
        long gen = h.generation();
        h.setIovec(0, buf).setReturn(ret).addCallback(cb, 0);
        h.startReadv(fd, 1, block * BLOCK);
        return new Read(h, gen, buf, ret);
    }

    @Test
    void inlineReadCompletesWithContentAndOk() {
        try (AioContext ctx = context(new TestMethods.Inline(), 4); IoSession s = ctx.openSession("client")) {
            MemorySegment buf = buffer();
            IoReturn ret = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setIovec(0, buf).setReturn(ret).setTarget(IoTarget.file(file), 0);
            h.startReadv(fd, 1, 3L * BLOCK);
            assertEquals(IoHandle.COMPLETED_SHARED, h.state(), "inline I/O completes at staging");
            s.await(h, gen);
            assertEquals(IoHandle.IDLE, h.state());
            assertEquals(gen + 1, h.generation(), "reclaim advances the generation");
            assertEquals(IoResult.OK, ret.status(), ret.message());
            assertEquals(BLOCK, IoResult.result(ret.result()));
            Blocks.assertBlock("rel", 3, buf);
        }
    }

    /** The offer of registered buffers: native memory only; withdrawn only by whoever offered that region. */
    @Test
    void registeredBuffersAreNativeAndWithdrawnOnlyByTheirOwnRegion() {
        try (AioContext ctx = context(new TestMethods.Inline(), 4); Arena a = Arena.ofConfined()) {
            assertNull(ctx.registeredBuffers());
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> ctx.registerBuffers(MemorySegment.ofArray(new byte[8192])));
            assertTrue(e.getMessage().startsWith("registered buffers must be native memory"), e.getMessage());
            MemorySegment first = a.allocate(8192, 4096);
            MemorySegment second = a.allocate(8192, 4096);
            ctx.registerBuffers(first);
            ctx.registerBuffers(second); // replaces
            ctx.unregisterBuffers(first); // a pool that closes after another took over withdraws nothing
            assertSame(second, ctx.registeredBuffers());
            ctx.unregisterBuffers(second);
            assertNull(ctx.registeredBuffers());
        }
    }

    @Test
    void aSecondCompletionIsIgnoredAndCounted() {
        IoMethod twice = new IoMethod() {
            public String name() {
                return "twice";
            }

            public int submit(IoHandle[] handles, int count) {
                for (int i = 0; i < count; i++) {
                    handles[i].performSynchronously(handles[i].session().callState());
                    handles[i].complete(-org.pageio.posix.Errno.EIO); // a bug: the I/O is already complete
                }
                return count;
            }
        };
        try (AioContext ctx = context(twice, 4); IoSession s = ctx.openSession("client")) {
            MemorySegment buf = buffer();
            IoReturn ret = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setIovec(0, buf).setReturn(ret).startReadv(fd, 1, 0);
            s.await(h, gen);
            assertEquals(IoResult.OK, ret.status(), "the first completion wins");
            assertEquals(1, ctx.extraCompletions());
        }
    }

    @Test
    void completionProcessedOnAnotherThreadWhileOwnerWaits() throws Exception {
        TestMethods.Deferred m = new TestMethods.Deferred();
        List<String> threads = new CopyOnWriteArrayList<>();
        IoCallback cb = new IoCallback() {
            public String name() {
                return "record";
            }

            public long completeShared(IoHandle h, long r, int d) {
                threads.add("shared:" + Thread.currentThread().getName());
                return r;
            }

            public long completeLocal(IoHandle h, long r, int d) {
                threads.add("local:" + Thread.currentThread().getName());
                return r;
            }
        };
        try (AioContext ctx = context(m, 4); IoSession s = ctx.openSession("client")) {
            Read r = startRead(s, cb, 5);
            assertEquals(IoHandle.SUBMITTED, r.h().state());

            Thread owner = Thread.currentThread();
            Thread completer = new Thread(() -> {
                try {
                    IoHandle sub = m.next();
                    awaitBlocked(owner);
                    TestMethods.Deferred.execute(sub);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "completer");
            completer.start();
            s.await(r.h(), r.gen());
            completer.join(10_000);
            assertEquals(List.of("shared:completer", "local:" + owner.getName()), threads,
                    "shared callback in the completing thread, local one in the owner");
            assertEquals(IoResult.OK, r.ret().status(), r.ret().message());
            Blocks.assertBlock("rel", 5, r.buf());
        }
    }

    /**
     * An owner that finds its I/O done but the shared callbacks still running in another thread
     * (COMPLETED_IO) polls only briefly ({@code IoHandle.CALLBACK_SPIN_NANOS}), then sleeps and is
     * woken when they finish: the callback here holds until it sees the owner asleep (it would wait
     * 10 s and the test fail if the owner polled on), then its result reaches the owner.
     */
    @Test
    void anOwnerFindingTheSharedCallbacksRunningElsewherePollsBrieflyThenSleepsUntilTheyEnd() throws Exception {
        TestMethods.Deferred m = new TestMethods.Deferred();
        Thread owner = Thread.currentThread();
        java.util.concurrent.CountDownLatch inCallback = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean sawOwnerAsleep = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicBoolean ownerAwaits = new java.util.concurrent.atomic.AtomicBoolean();
        IoCallback cb = new IoCallback() {
            public String name() {
                return "slow-shared";
            }

            public long completeShared(IoHandle h, long r, int d) {
                inCallback.countDown();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (System.nanoTime() - deadline < 0) {
                    if (!ownerAwaits.get()) {
                        Thread.onSpinWait(); // the owner is still waiting for the latch below
                        continue;
                    }
                    Thread.State st = owner.getState();
                    if (st == Thread.State.WAITING || st == Thread.State.TIMED_WAITING) {
                        sawOwnerAsleep.set(true);
                        break;
                    }
                    Thread.onSpinWait();
                }
                return r;
            }
        };
        try (AioContext ctx = context(m, 4); IoSession s = ctx.openSession("client")) {
            Read r = startRead(s, cb, 6);
            IoHandle sub = m.next();
            Thread completer = new Thread(() -> TestMethods.Deferred.execute(sub), "completer");
            completer.start();
            assertTrue(inCallback.await(10, TimeUnit.SECONDS), "the completer did not reach the callback");
            assertEquals(IoHandle.COMPLETED_IO, r.h().state(), "the shared callback is running");
            ownerAwaits.set(true);
            s.await(r.h(), r.gen());
            completer.join(10_000);
            assertTrue(sawOwnerAsleep.get(), "the owner did not go to sleep while the callback ran");
            assertEquals(IoResult.OK, r.ret().status(), r.ret().message());
            Blocks.assertBlock("rel", 6, r.buf());
        }
    }

    @Test
    void staleWaitReferenceReturnsImmediatelyAfterReuse() throws Exception {
        TestMethods.Deferred m = new TestMethods.Deferred();
        try (AioContext ctx = context(m, 1); IoSession s = ctx.openSession("client")) {
            MemorySegment buf = buffer();
            IoHandle h = s.acquire();
            long oldGen = h.generation();
            long oldRef = h.waitRef();
            h.setIovec(0, buf).startReadv(fd, 1, 0);
            TestMethods.Deferred.execute(m.next());
            s.await(h, oldGen);

            // Reuse the only handle for an I/O that stays in flight.
            IoHandle again = s.acquire();
            assertSame(h, again, "one handle per session: the same handle is reused");
            long newGen = again.generation();
            long newRef = again.waitRef();
            again.setIovec(0, buf).startReadv(fd, 1, BLOCK);
            IoHandle pending = m.next();
            assertEquals(IoHandle.SUBMITTED, pending.state());

            List<AioHandleInfo> aios = ctx.snapshot();
            assertEquals(1, aios.size(), aios.toString());
            assertEquals("SUBMITTED", aios.get(0).state());
            assertEquals("readv", aios.get(0).operation());
            assertEquals(BLOCK, aios.get(0).offset());
            assertEquals(BLOCK, aios.get(0).length());

            CompletableFuture<Boolean> stale = CompletableFuture.supplyAsync(() -> {
                ctx.await(h.index(), oldGen); // must not block on the new I/O
                return ctx.checkDone(h.index(), oldGen);
            });
            assertTrue(stale.get(5, TimeUnit.SECONDS), "a stale wait reference is done");
            assertFalse(ctx.checkDone(h.index(), newGen), "the current I/O is still in flight");
            assertTrue(ctx.checkRefDone(oldRef), "a stale packed wait reference is done");
            assertFalse(ctx.checkRefDone(newRef), "the packed reference of the current I/O is not");
            assertEquals(h.index(), IoHandle.refIndex(newRef));
            TestMethods.Deferred.execute(pending);
            s.await(h, newGen);
            assertTrue(ctx.checkDone(h.index(), newGen));
        }
    }

    @Test
    void acquireWithAllHandlesInFlightWaitsForTheOldest() throws Exception {
        TestMethods.Deferred m = new TestMethods.Deferred();
        try (AioContext ctx = context(m, 4); IoSession s = ctx.openSession("client")) {
            IoHandle[] inFlight = new IoHandle[4];
            for (int i = 0; i < 4; i++) {
                inFlight[i] = s.acquire();
                inFlight[i].setIovec(0, buffer()).startReadv(fd, 1, (long) i * BLOCK);
            }
            IoHandle[] submitted = new IoHandle[4];
            for (int i = 0; i < 4; i++) {
                submitted[i] = m.next();
            }
            assertSame(inFlight[0], submitted[0]);
            Thread owner = Thread.currentThread();
            java.util.concurrent.atomic.AtomicBoolean stillBlocked = new java.util.concurrent.atomic.AtomicBoolean();
            Thread completer = new Thread(() -> {
                awaitBlocked(owner);
                TestMethods.Deferred.execute(submitted[3]); // newest first: must not satisfy the wait
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                stillBlocked.set(owner.getState() == Thread.State.WAITING);
                TestMethods.Deferred.execute(submitted[0]);
            }, "completer");
            completer.start();
            IoHandle got = s.acquire();
            completer.join(10_000);
            assertTrue(stillBlocked.get(), "completing a newer I/O did not end the wait for the oldest");
            assertSame(inFlight[0], got, "acquire waited for and reclaimed the oldest in-flight handle");
            assertEquals(IoHandle.HANDED_OUT, got.state());
            assertEquals(IoHandle.COMPLETED_SHARED, inFlight[3].state(), "the newest one is completed, not reclaimed yet");
            assertEquals(IoHandle.SUBMITTED, inFlight[1].state());
            got.release();
            TestMethods.Deferred.execute(submitted[1]);
            TestMethods.Deferred.execute(submitted[2]);
        }
    }

    @Test
    void exceptionInCompletionCallbackBecomesErrorResult() throws Exception {
        AtomicReference<Long> outerSaw = new AtomicReference<>();
        IoCallback outer = new IoCallback() {
            public String name() {
                return "outer";
            }

            public long completeShared(IoHandle h, long r, int d) {
                outerSaw.set(r);
                return r;
            }
        };
        IoCallback throwing = new IoCallback() {
            public String name() {
                return "verify_page";
            }

            public long completeShared(IoHandle h, long r, int d) {
                throw new IllegalStateException("page header is corrupt");
            }
        };
        TestMethods.Deferred m = new TestMethods.Deferred();
        try (AioContext ctx = context(m, 4); IoSession s = ctx.openSession("client")) {
            IoReturn ret = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setIovec(0, buffer()).setReturn(ret).setTarget(IoTarget.file(file), 0)
                    .addCallback(outer, 0).addCallback(throwing, 0);
            h.startReadv(fd, 1, 0);
            IoHandle sub = m.next();
            Thread completer = new Thread(() -> TestMethods.Deferred.execute(sub), "completer");
            AtomicReference<Throwable> escaped = new AtomicReference<>();
            completer.setUncaughtExceptionHandler((t, e) -> escaped.set(e));
            completer.start();
            completer.join(10_000);
            assertNull(escaped.get(), "nothing escapes the completion path");
            s.await(h, gen);
            assertEquals(IoResult.ERROR, ret.status());
            assertEquals(IoResult.ERROR_DATA_CALLBACK_THREW, IoResult.errorData(ret.result()));
            assertEquals(IoResult.ERROR, IoResult.status(outerSaw.get()), "the outer callback saw the error");
            assertNotNull(ret.failure());
            assertTrue(ret.message().contains("verify_page") && ret.message().contains("page header is corrupt")
                    && ret.message().contains(file.toString()), ret.message());
            AioException e = assertThrows(AioException.class, ret::throwIfFailed);
            assertSame(ret.failure(), e.getCause());
        }
    }

    @Test
    void exceptionInLocalCallbackBecomesErrorResult() {
        IoCallback throwing = new IoCallback() {
            public String name() {
                return "local_boom";
            }

            public long completeLocal(IoHandle h, long r, int d) {
                throw new IllegalArgumentException("boom");
            }
        };
        try (AioContext ctx = context(new TestMethods.Inline(), 4); IoSession s = ctx.openSession("client")) {
            IoReturn ret = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setIovec(0, buffer()).setReturn(ret).addCallback(throwing, 0).startReadv(fd, 1, 0);
            s.await(h, gen);
            assertEquals(IoResult.ERROR, ret.status());
            assertTrue(ret.failure() instanceof IllegalArgumentException);
            assertEquals(IoHandle.IDLE, h.state(), "the handle is reclaimed anyway");
        }
    }

    @Test
    void callbacksRunInnermostFirstEachTransformingTheResult() {
        List<String> order = new CopyOnWriteArrayList<>();
        IoCallback md = named("md", order, IoResult.OK);
        IoCallback buf = named("buf", order, IoResult.WARNING);
        try (AioContext ctx = context(new TestMethods.Inline(), 4); IoSession s = ctx.openSession("client")) {
            IoReturn ret = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            // bufmgr registers first (outer), md last (inner)
            h.setIovec(0, buffer()).setReturn(ret).addCallback(buf, 1).addCallback(md, 0).startReadv(fd, 1, 0);
            s.await(h, gen);
            assertEquals(List.of("md", "buf"), order);
            assertEquals(IoResult.WARNING, ret.status());
            assertEquals(0, IoResult.callbackId(ret.result()), "the status names the callback that set it");
        }
    }

    private static IoCallback named(String name, List<String> order, int status) {
        return new IoCallback() {
            public String name() {
                return name;
            }

            public long completeShared(IoHandle h, long r, int slotData) {
                order.add(name);
                return IoResult.withStatus(r, status, 0);
            }
        };
    }

    @Test
    void readPastEndOfFileIsPartialWithTheShortLength() throws IOException {
        Files.write(file, Blocks.content("rel", 8), java.nio.file.StandardOpenOption.APPEND); // 16 blocks
        try (AioContext ctx = context(new TestMethods.Inline(), 4); IoSession s = ctx.openSession("client")) {
            IoReturn ret = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setIovec(0, buffer()).setIovec(1, buffer()).setReturn(ret).setTarget(IoTarget.file(file), 0);
            h.startReadv(fd, 2, 15L * BLOCK + 4096); // 2 blocks asked, 4096 bytes left
            s.await(h, gen);
            assertEquals(IoResult.PARTIAL, ret.status());
            assertEquals(4096, IoResult.result(ret.result()));
            assertTrue(ret.message().contains("only 4096 of 16384 bytes"), ret.message());
        }
    }

    @Test
    void readOnAClosedDescriptorIsAnErrorNamingEbadf() throws IOException {
        int closed = Posix.open(file, OpenFlags.O_RDONLY, 0);
        Posix.close(closed, file);
        try (AioContext ctx = context(new TestMethods.Inline(), 4); IoSession s = ctx.openSession("client")) {
            IoReturn ret = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setIovec(0, buffer()).setReturn(ret).setTarget(IoTarget.file(file), 0).startReadv(closed, 1, 0);
            s.await(h, gen);
            assertEquals(IoResult.ERROR, ret.status());
            assertEquals(-Errno.EBADF, IoResult.result(ret.result()));
            AioException e = assertThrows(AioException.class, ret::throwIfFailed);
            assertEquals(Errno.EBADF, e.errno());
            assertTrue(e.getMessage().contains("EBADF") && e.getMessage().contains("readv")
                    && e.getMessage().contains(file.toString()), e.getMessage());
        }
    }

    @Test
    void onlyOneHandleMayBeHandedOut() {
        try (AioContext ctx = context(new TestMethods.Inline(), 4); IoSession s = ctx.openSession("client")) {
            IoHandle h = s.acquire();
            IllegalStateException e = assertThrows(IllegalStateException.class, s::acquire);
            assertTrue(e.getMessage().contains("only one I/O handle can be handed out"), e.getMessage());
            h.release();
            assertEquals(IoHandle.IDLE, h.state());
            s.acquire().release();
        }
    }

    @Test
    void sessionIsConfinedToItsOwnerThread() throws Exception {
        try (AioContext ctx = context(new TestMethods.Inline(), 4); IoSession s = ctx.openSession("client")) {
            CompletableFuture<Throwable> f = CompletableFuture.supplyAsync(() -> {
                try {
                    s.acquire();
                    return null;
                } catch (Throwable t) {
                    return t;
                }
            });
            Throwable t = f.get(5, TimeUnit.SECONDS);
            assertTrue(t instanceof IllegalStateException && t.getMessage().contains("API violation"), String.valueOf(t));
        }
    }

    @Test
    void batchModeHoldsStagedIoUntilExitOrThirtyTwo() throws Exception {
        TestMethods.Deferred m = new TestMethods.Deferred();
        try (AioContext ctx = AioContext.create(m, new AioConfig(2, 64, 16)); IoSession s = ctx.openSession("client")) {
            s.enterBatchMode();
            assertThrows(IllegalStateException.class, s::enterBatchMode, "no nesting");
            for (int i = 0; i < 33; i++) {
                s.acquire().setIovec(0, buffer()).startReadv(fd, 1, (long) (i % 8) * BLOCK);
            }
            assertEquals(List.of(32), m.batchSizes, "the 33rd acquire submits a full batch of 32");
            assertEquals(1, s.stagedCount());
            s.exitBatchMode();
            assertEquals(List.of(32, 1), m.batchSizes);
            for (int i = 0; i < 33; i++) {
                TestMethods.Deferred.execute(m.next());
            }
            s.drain();
            assertEquals(0, s.inFlightCount());
        }
    }

    @Test
    void waitingSubmitsStagedIoFirst() throws Exception {
        TestMethods.Deferred m = new TestMethods.Deferred();
        try (AioContext ctx = context(m, 4); IoSession s = ctx.openSession("client")) {
            s.enterBatchMode();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setIovec(0, buffer()).startReadv(fd, 1, 0);
            assertEquals(IoHandle.STAGED, h.state());
            Thread completer = new Thread(() -> {
                try {
                    TestMethods.Deferred.execute(m.next());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            completer.start();
            s.await(h, gen); // would hang forever if the staged I/O were not submitted first
            completer.join(10_000);
            assertEquals(IoHandle.IDLE, h.state());
            s.exitBatchMode();
        }
    }

    @Test
    void manySessionsOnManyThreadsReadTheRightBytes() throws Exception {
        try (TestMethods.Threaded m = new TestMethods.Threaded(3);
                AioContext ctx = AioContext.create(m, new AioConfig(8, 8, 4))) {
            List<CompletableFuture<Integer>> sessions = new java.util.ArrayList<>();
            for (int t = 0; t < 6; t++) {
                int seed = t;
                sessions.add(CompletableFuture.supplyAsync(() -> readRandomly(ctx, seed, 400)));
            }
            for (CompletableFuture<Integer> f : sessions) {
                assertEquals(400, f.get(60, TimeUnit.SECONDS));
            }
            assertTrue(ctx.openSessions().isEmpty());
        }
    }

    private int readRandomly(AioContext ctx, int seed, int count) {
        java.util.Random rnd = new java.util.Random(seed);
        int verified = 0;
        try (Arena a = Arena.ofConfined(); IoSession s = ctx.openSession("client")) {
            int depth = 8;
            MemorySegment[] bufs = new MemorySegment[depth];
            IoHandle[] hs = new IoHandle[depth];
            long[] gens = new long[depth];
            int[] blocks = new int[depth];
            IoReturn[] rets = new IoReturn[depth];
            for (int i = 0; i < depth; i++) {
                bufs[i] = a.allocate(BLOCK, 4096);
                rets[i] = new IoReturn();
            }
            for (int n = 0; n < count; n++) {
                int slot = n % depth;
                if (hs[slot] != null) {
                    s.await(hs[slot], gens[slot]);
                    verified += verify(rets[slot], blocks[slot], bufs[slot]);
                }
                blocks[slot] = rnd.nextInt(8);
                IoHandle h = s.acquire();
                hs[slot] = h;
                gens[slot] = h.generation();
                h.setIovec(0, bufs[slot]).setReturn(rets[slot]).startReadv(fd, 1, (long) blocks[slot] * BLOCK);
            }
            for (int slot = 0; slot < depth && hs[slot] != null; slot++) {
                s.await(hs[slot], gens[slot]);
                verified += verify(rets[slot], blocks[slot], bufs[slot]);
            }
        }
        return verified;
    }

    private static int verify(IoReturn ret, int block, MemorySegment buf) {
        assertEquals(IoResult.OK, ret.status(), ret.message());
        Blocks.assertBlock("rel", block, buf);
        return 1;
    }

    /** Spins until {@code t} is blocked (WAITING), so a test can prove a wait really waits. */
    static void awaitBlocked(Thread t) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("thread " + t.getName() + " never blocked: " + t.getState());
            }
            Thread.onSpinWait();
        }
    }
}
