package org.pageio.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;

/** The method gate: swapping the method under a running session, timeouts, no method at all. */
class MethodGateTest {

    static final int BLOCK = AioCoreTest.BLOCK;
    static final long SECOND = TimeUnit.SECONDS.toNanos(1);

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

    /** An inline method that counts its per-session state, which is a token naming it. */
    static final class Counting implements IoMethod {
        final String name;
        final AtomicInteger opened = new AtomicInteger();
        final AtomicInteger closed = new AtomicInteger();
        final AtomicInteger executed = new AtomicInteger();
        volatile Availability availability = Availability.AVAILABLE;

        Counting(String name) {
            this.name = name;
        }

        public String name() {
            return name;
        }

        @Override
        public Availability availability() {
            return availability;
        }

        @Override
        public Object openSession(IoSession session) {
            opened.incrementAndGet();
            return "state of " + name;
        }

        @Override
        public void closeSession(IoSession session, Object state) {
            assertEquals("state of " + name, state, "closeSession gets this method's own state back");
            closed.incrementAndGet();
        }

        @Override
        public boolean needsSynchronousExecution(IoHandle handle) {
            return true;
        }

        @Override
        public void performSynchronously(IoHandle handle, org.pageio.posix.CallState cs) {
            executed.incrementAndGet();
            handle.performSynchronously(cs);
        }

        public int submit(IoHandle[] handles, int count) {
            throw new AssertionError("inline method");
        }
    }

    private void readAndCheck(IoSession s, int block) {
        MemorySegment buf = arena.allocate(BLOCK, 4096);
        IoReturn ret = new IoReturn();
        IoHandle h = s.acquire();
        long gen = h.generation();
        h.setIovec(0, buf).setReturn(ret).startReadv(fd, 1, (long) block * BLOCK);
        s.await(h, gen);
        assertEquals(IoResult.OK, ret.status(), ret.message());
        Blocks.assertBlock("rel", block, buf);
    }

    @Test
    void swapDrainsTheOldMethodsIoAndTheSessionRebindsAtItsNextBatch() throws Exception {
        TestMethods.Deferred old = new TestMethods.Deferred();
        Counting next = new Counting("next");
        try (AioContext ctx = AioContext.create(old, new AioConfig(4, 4, 16)); IoSession s = ctx.openSession("client")) {
            MemorySegment buf = arena.allocate(BLOCK, 4096);
            IoReturn ret = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setIovec(0, buf).setReturn(ret).startReadv(fd, 1, 2L * BLOCK); // in flight on the old method
            assertEquals(0, ctx.methodEpoch());

            CompletableFuture<MethodSwap> swap = CompletableFuture.supplyAsync(() -> ctx.swapMethod(next, 10 * SECOND));
            long until = System.nanoTime() + 10 * SECOND;
            while (ctx.methodBound() && System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            assertFalse(ctx.methodBound(), "the gate closes at once");
            assertTrue(ctx.gateClosedReason().contains("from test-deferred to next"), ctx.gateClosedReason());
            Thread.sleep(50);
            assertFalse(swap.isDone(), "the swap waits for the I/O in flight on the old method");

            TestMethods.Deferred.execute(old.next());
            MethodSwap done = swap.get(10, TimeUnit.SECONDS);
            assertEquals("test-deferred", done.from());
            assertEquals("next", done.to());
            assertEquals(1, done.epoch());
            assertEquals(1, done.iosDrained());
            assertNull(done.stuck());
            assertTrue(done.pauseNanos() >= TimeUnit.MILLISECONDS.toNanos(50), done.toString());
            assertSame(next, ctx.method());

            s.await(h, gen);
            assertEquals(IoResult.OK, ret.status(), ret.message());
            Blocks.assertBlock("rel", 2, buf);
            assertSame(old, s.boundMethod(), "no rebinding before the next batch");
            assertEquals(0, next.opened.get());

            readAndCheck(s, 5);
            assertSame(next, s.boundMethod());
            assertEquals("state of next", s.methodState());
            assertEquals(1, next.opened.get());
            assertEquals(1, next.executed.get(), "the read after the swap ran on the new method");
            assertTrue(old.submitted.isEmpty(), "nothing more went to the old method");
        }
        assertEquals(1, next.closed.get(), "closing the session closes the new method's state");
    }

    @Test
    void aSwapThatTimesOutKeepsTheOldMethodAndSaysWhatIsStuck() throws Exception {
        TestMethods.Deferred old = new TestMethods.Deferred();
        Counting next = new Counting("next");
        try (AioContext ctx = AioContext.create(old, new AioConfig(4, 4, 16)); IoSession s = ctx.openSession("client")) {
            IoReturn ret = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setIovec(0, arena.allocate(BLOCK, 4096)).setReturn(ret).startReadv(fd, 1, 0);
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> ctx.swapMethod(next, TimeUnit.MILLISECONDS.toNanos(100)));
            assertTrue(e.getMessage().startsWith("io_method swap from test-deferred to next timed out after "), e.getMessage());
            assertTrue(e.getMessage().contains("I/O still SUBMITTED on handle " + h.index() + " of session " + s.id() + " (client)"),
                    e.getMessage());
            assertTrue(e.getMessage().endsWith("io_method stays test-deferred"), e.getMessage());
            assertTrue(ctx.methodBound());
            assertSame(old, ctx.method());
            assertEquals(0, ctx.methodEpoch());
            TestMethods.Deferred.execute(old.next());
            s.await(h, gen);
            assertEquals(IoResult.OK, ret.status(), ret.message());
        }
        assertEquals(0, next.opened.get());
    }

    @Test
    void anUnavailableMethodIsRefusedAndNothingChanges() {
        Counting a = new Counting("a");
        Counting b = new Counting("b");
        b.availability = IoMethod.Availability.unavailable("the kernel says no");
        try (AioContext ctx = AioContext.create(a, new AioConfig(4, 4, 16))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ctx.swapMethod(b, SECOND));
            assertEquals("io_method=b is not available: the kernel says no", e.getMessage());
            assertSame(a, ctx.method());
            assertTrue(ctx.methodBound());
        }
    }

    @Test
    void withNoMethodNewIoWaitsAtTheGateUntilOneIsBound() throws Exception {
        Counting a = new Counting("a");
        Counting b = new Counting("b");
        try (AioContext ctx = AioContext.create(a, new AioConfig(4, 4, 16))) {
            MethodSwap gone = ctx.retireMethod(null, SECOND, "io_method=a went away and there is no fallback");
            assertNull(gone.to());
            assertFalse(ctx.methodBound());
            assertSame(a, ctx.method(), "the last method, for names");

            ctx.setGateWaitTimeout(TimeUnit.MILLISECONDS.toNanos(100));
            try (IoSession s = ctx.openSession("client")) {
                IllegalStateException e = assertThrows(IllegalStateException.class, s::acquire);
                assertTrue(e.getMessage().startsWith("no I/O started: io_method=a went away and there is no fallback;"
                        + " waited "), e.getMessage());
                assertEquals(0, s.inFlightCount());
            }

            ctx.setGateWaitTimeout(10 * SECOND);
            CompletableFuture<Void> reader = CompletableFuture.runAsync(() -> {
                try (IoSession s = ctx.openSession("client")) {
                    readAndCheck(s, 6);
                    assertSame(b, s.boundMethod());
                }
            });
            Thread.sleep(100);
            assertFalse(reader.isDone(), "the read waits for a method");
            MethodSwap back = ctx.swapMethod(b, SECOND);
            assertNull(back.from());
            assertEquals("b", back.to());
            reader.get(10, TimeUnit.SECONDS);
            assertEquals(1, b.executed.get());
            assertEquals(0, a.executed.get());
        }
    }

    @Test
    void sessionsInBatchModeAreWaitedForAndReadEveryBlockAcrossManySwaps() throws Exception {
        Counting a = new Counting("a");
        TestMethods.Threaded t = new TestMethods.Threaded(2);
        try (AioContext ctx = AioContext.create(a, new AioConfig(4, 8, 16))) {
            int readers = 3;
            CompletableFuture<?>[] fs = new CompletableFuture<?>[readers];
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            AtomicInteger reads = new AtomicInteger();
            for (int r = 0; r < readers; r++) {
                fs[r] = CompletableFuture.runAsync(() -> {
                    try (IoSession s = ctx.openSession("client"); Arena local = Arena.ofConfined()) {
                        MemorySegment[] bufs = new MemorySegment[8];
                        IoReturn[] rets = new IoReturn[8];
                        for (int i = 0; i < 8; i++) {
                            bufs[i] = local.allocate(BLOCK, 4096);
                            rets[i] = new IoReturn();
                        }
                        IoHandle[] hs = new IoHandle[8];
                        long[] gens = new long[8];
                        while (!stop.get()) {
                            s.enterBatchMode();
                            for (int i = 0; i < 8; i++) {
                                hs[i] = s.acquire();
                                gens[i] = hs[i].generation();
                                hs[i].setIovec(0, bufs[i]).setReturn(rets[i]).startReadv(fd, 1, (long) i * BLOCK);
                            }
                            s.exitBatchMode();
                            for (int i = 0; i < 8; i++) {
                                s.await(hs[i], gens[i]);
                                assertEquals(IoResult.OK, rets[i].status(), rets[i].message());
                                Blocks.assertBlock("rel", i, bufs[i]);
                                reads.incrementAndGet();
                            }
                        }
                    }
                });
            }
            for (int i = 0; i < 20; i++) {
                Thread.sleep(10);
                ctx.swapMethod(i % 2 == 0 ? t : a, 10 * SECOND);
            }
            stop.set(true);
            CompletableFuture.allOf(fs).get(30, TimeUnit.SECONDS);
            assertEquals(20, ctx.methodEpoch());
            assertTrue(reads.get() > 0);
            assertTrue(a.executed.get() > 0, "reads ran on the inline method too");
        } finally {
            t.close();
        }
    }
}
