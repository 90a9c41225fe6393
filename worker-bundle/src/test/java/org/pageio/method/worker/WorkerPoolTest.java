package org.pageio.method.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.annotation.Annotation;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.api.AioConfig;
import org.pageio.api.AioContext;
import org.pageio.api.IoCallback;
import org.pageio.api.IoHandle;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.api.IoSession;
import org.pageio.posix.Errno;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;

/**
 * The pool's behaviour outside a container: growth under a sustained backlog (to the maximum and
 * not beyond, at most one launch per interval), shrinking to the minimum after the idle timeout
 * (highest first, serialised, ids dense), a dying worker (its I/O completes with -EIO, it is
 * replaced), stopping with I/O in flight (every handle completes or fails), lowest-idle wake-up,
 * the inline paths, and the settings' validation. Intervals are short; every wait has a deadline of
 * several seconds and no assertion depends on speed except lower bounds the code enforces.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WorkerPoolTest {

    static final int BLOCK = 8192;
    static final int FILE_BLOCKS = 64;
    static final long DEADLINE_MS = 10_000;

    @TempDir
    Path dir;
    Path file;
    int fd = -1;
    Arena arena;
    AioContext ctx;
    WorkerIoMethod method;

    @BeforeEach
    void setUp() throws IOException {
        file = dir.resolve("rel");
        byte[] data = new byte[FILE_BLOCKS * BLOCK];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 31 + (i >>> 13));
        }
        Files.write(file, data);
        fd = Posix.open(file, OpenFlags.O_RDONLY, 0);
        arena = Arena.ofShared();
    }

    @AfterEach
    void tearDown() throws IOException {
        if (method != null) {
            method.close();
        }
        if (ctx != null) {
            ctx.close();
        }
        Posix.close(fd, file);
        arena.close();
    }

    private void start(WorkerSettings s) {
        start(s, 64);
    }

    private void start(WorkerSettings s, int handlesPerSession) {
        method = new WorkerIoMethod(s);
        ctx = AioContext.create(method, new AioConfig(8, handlesPerSession, 16));
    }

    /** Sleeps in the shared completion (so in a worker, or the issuer when inline) and notes the thread. */
    static final class SlowCallback implements IoCallback {
        volatile int delayMs;
        final Queue<String> threads = new ConcurrentLinkedQueue<>();

        SlowCallback(int delayMs) {
            this.delayMs = delayMs;
        }

        @Override
        public String name() {
            return "slow";
        }

        @Override
        public long completeShared(IoHandle handle, long result, int data) {
            threads.add(Thread.currentThread().getName());
            int d = delayMs;
            if (d > 0) {
                try {
                    Thread.sleep(d);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return result;
        }
    }

    private IoReturn read(IoSession s, long block, IoCallback cb, int flags) {
        IoReturn ret = new IoReturn();
        IoHandle h = s.acquire();
        long gen = h.generation();
        h.setIovec(0, arena.allocate(BLOCK, 4096)).setReturn(ret).setFlags(flags);
        if (cb != null) {
            h.addCallback(cb, 0);
        }
        h.startReadv(fd, 1, block * BLOCK);
        s.await(h, gen);
        return ret;
    }

    /**
     * Starts a daemon thread that spins until {@code ready} holds, or {@code maxMs} passed, and
     * then opens {@code latch} — in any case, so that a test fails rather than hangs.
     */
    private static Thread openWhen(CountDownLatch latch, BooleanSupplier ready, long maxMs, String name) {
        Thread t = new Thread(() -> {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxMs);
            while (!ready.getAsBoolean() && System.nanoTime() - deadline < 0) {
                Thread.onSpinWait();
            }
            latch.countDown();
        }, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static void await(String what, BooleanSupplier condition) {
        await(what, condition, () -> "");
    }

    /** As {@link #await(String, BooleanSupplier)}, with {@code state} in the failure message. */
    private static void await(String what, BooleanSupplier condition, java.util.function.Supplier<String> state) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DEADLINE_MS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("not within " + DEADLINE_MS + " ms: " + what + "; " + state.get());
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    /** Issuer threads that keep their sessions' handles busy with slow reads until stopped. */
    private final class Backlog implements AutoCloseable {
        final AtomicBoolean stop = new AtomicBoolean();
        final List<Thread> threads = new ArrayList<>();
        final Queue<Throwable> failures = new ConcurrentLinkedQueue<>();

        Backlog(int issuers, IoCallback cb) {
            for (int t = 0; t < issuers; t++) {
                Thread th = new Thread(() -> run(cb), "backlog issuer " + t);
                th.setDaemon(true);
                threads.add(th);
                th.start();
            }
        }

        private void run(IoCallback cb) {
            try (IoSession s = ctx.openSession("backlog")) {
                MemorySegment buf = arena.allocate(BLOCK, 4096);
                long b = 0;
                while (!stop.get()) {
                    IoHandle h = s.acquire(); // waits for the oldest when all handles are in flight
                    h.setIovec(0, buf).addCallback(cb, 0).startReadv(fd, 1, (b++ % FILE_BLOCKS) * BLOCK);
                }
            } catch (Throwable t) {
                failures.add(t);
            }
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            for (Thread t : threads) {
                t.join(DEADLINE_MS);
                assertFalse(t.isAlive(), t.getName() + " did not finish");
            }
            assertTrue(failures.isEmpty(), "issuer failures: " + failures);
        }
    }

    // ------------------------------------------------------------------ sizing

    @Test
    void startsTheMinimumOfDaemonWorkersNamedByTheirId() {
        start(WorkerSettings.of(3, 8, 60_000, 100));
        await("3 workers", () -> method.stats().workersAlive() == 3 && method.stats().workersIdle() == 3);
        for (int id = 0; id < 3; id++) {
            Thread t = method.pool().workerThread(id);
            assertNotNull(t);
            assertEquals("pageio io worker " + id, t.getName());
            assertTrue(t.isDaemon());
        }
        assertNull(method.pool().workerThread(3));
        assertEquals(3, method.stats().launches());
    }

    @Test
    void growsToTheMaximumUnderASustainedBacklogAndNotBeyond() throws Exception {
        int interval = 50;
        long t0 = System.nanoTime();
        start(WorkerSettings.of(2, 8, 60_000, interval));
        // PostgreSQL's rule alone: with take-back (or help) the four issuers absorb part of the
        // backlog themselves, the queue runs shallow and growth took over 10 s in one CI run.
        method.pool().handOff.issuers.takeBackEnabled = false;
        method.pool().handOff.issuers.issuerHelps = false;
        SlowCallback slow = new SlowCallback(2);
        try (Backlog b = new Backlog(4, slow)) {
            await("the pool grows to io_max_workers = 8", () -> method.stats().workersAlive() == 8);
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            // 6 launches for growth, the first at once, then at most one per interval.
            assertTrue(elapsedMs >= 5L * interval, "grew 2 -> 8 in " + elapsedMs + " ms, faster than one launch per "
                    + interval + " ms allows");
            Thread.sleep(300); // the backlog goes on: nothing more may start
            WorkerPoolStats st = method.stats();
            assertEquals(8, st.workersAlive(), st.toString());
            assertEquals(8, st.peakWorkers(), st.toString());
            assertEquals(8, st.launches(), st.toString());
            assertEquals(0, st.retirements(), st.toString());
        }
        WorkerPoolStats st = method.stats();
        for (int id = 0; id < 8; id++) {
            assertTrue(st.iosPerWorker()[id] > 0, "worker " + id + " executed nothing: " + st);
        }
    }

    @Test
    void shrinksBackToTheMinimumAfterTheIdleTimeoutHighestFirst() throws Exception {
        start(WorkerSettings.of(2, 6, 60_000, 20));
        try (Backlog b = new Backlog(4, new SlowCallback(2))) {
            await("the pool grows to 6", () -> method.stats().workersAlive() == 6);
        }
        int timeout = 200;
        long t0 = System.nanoTime();
        method.apply(WorkerSettings.of(2, 6, timeout, 20));
        List<Integer> aliveSeen = new ArrayList<>();
        await("the pool shrinks to io_min_workers = 2", () -> {
            int n = method.stats().workersAlive();
            if (aliveSeen.isEmpty() || aliveSeen.getLast() != n) {
                aliveSeen.add(n);
            }
            return n == 2;
        });
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        // Serialised: each next-highest arms its own timeout only when it becomes the highest.
        assertTrue(elapsedMs >= 4L * timeout, "4 retirements took " + elapsedMs + " ms, less than 4 x " + timeout);
        for (int i = 1; i < aliveSeen.size(); i++) {
            assertTrue(aliveSeen.get(i) < aliveSeen.get(i - 1), "the pool only shrinks here: " + aliveSeen);
        }
        WorkerPoolStats st = method.stats();
        assertEquals(4, st.retirements(), st.toString());
        // Ids stay dense: 0 and 1 remain.
        assertTrue(method.pool().workerThread(0).isAlive() && method.pool().workerThread(1).isAlive());
        for (int id = 2; id < 6; id++) {
            Thread t = method.pool().workerThread(id);
            t.join(DEADLINE_MS);
            assertFalse(t.isAlive(), t.getName() + " still runs");
        }
        Thread.sleep(3L * timeout); // at the minimum nobody times out
        assertEquals(2, method.stats().workersAlive());
        try (IoSession s = ctx.openSession("after")) {
            assertEquals(IoResult.OK, read(s, 3, null, 0).status());
        }
    }

    @Test
    void loweringTheMaximumRetiresTheHighestAndRaisingTheMinimumLaunchesAtOnce() {
        start(WorkerSettings.of(4, 4, 60_000, 100));
        await("4 workers", () -> method.stats().workersAlive() == 4);
        method.apply(WorkerSettings.of(2, 2, 60_000, 100));
        await("2 workers", () -> method.stats().workersAlive() == 2);
        assertFalse(method.pool().workerThread(0).getState() == Thread.State.TERMINATED);
        assertFalse(method.pool().workerThread(1).getState() == Thread.State.TERMINATED);
        await("workers 2 and 3 gone", () -> !method.pool().workerThread(2).isAlive()
                && !method.pool().workerThread(3).isAlive());
        assertEquals(2, method.stats().retirements());
        method.apply(WorkerSettings.of(5, 6, 60_000, 100_000)); // the interval does not gate the minimum
        await("5 workers", () -> method.stats().workersAlive() == 5);
        // the gauges are read without a lock: a launch may be seen alive before it is counted
        await("7 launches", () -> method.stats().launches() == 7);
        assertEquals(5, method.stats().workersAlive(), "no launch beyond the new minimum");
    }

    // ------------------------------------------------------------------ wake-ups

    @Test
    void wakesTheLowestIdleWorkerNotAll() throws Exception {
        start(WorkerSettings.of(4, 4, 60_000, 100));
        await("4 idle workers", () -> method.stats().workersIdle() == 4);
        SlowCallback cb = new SlowCallback(0);
        int n = 100;
        try (IoSession s = ctx.openSession("one at a time")) {
            for (int i = 0; i < n; i++) {
                assertEquals(IoResult.OK, read(s, i % FILE_BLOCKS, cb, 0).status());
                Thread.sleep(2); // let worker 0 go back to sleep
            }
        }
        long[] ios = method.stats().iosPerWorker();
        assertTrue(ios[0] >= n * 8 / 10, "worker 0 should take almost every I/O: " + method.stats());
    }

    @Test
    void chooseIdleTakesTheLowestAndOnlyAboveTheCaller() {
        WorkerPool p = new WorkerPool(WorkerSettings.DEFAULTS); // not started: no threads
        SubmissionQueue q = p.queue;
        q.lock();
        try {
            q.setIdleLocked((1L << 1) | (1L << 3) | (1L << 6));
            assertEquals(1, q.chooseIdleLocked(-1));
            assertEquals(6, q.chooseIdleLocked(3));
            assertEquals(-1, q.chooseIdleLocked(3));
            assertEquals(3, q.chooseIdleLocked(-1));
            assertEquals(-1, q.chooseIdleLocked(-1));
        } finally {
            q.unlock();
        }
    }

    // ------------------------------------------------------------------ inline paths

    @Test
    void aFullQueueRunsTheRestInTheIssuerAndReferencesLocalRunsInline() {
        start(WorkerSettings.of(1, 1, 60_000, 100), 128); // more handles than the queue holds
        await("1 worker", () -> method.stats().workersIdle() == 1);
        SlowCallback cb = new SlowCallback(5);
        String me = Thread.currentThread().getName();
        int n = 96;
        IoHandle[] hs = new IoHandle[n];
        long[] gens = new long[n];
        IoReturn[] rets = new IoReturn[n];
        try (IoSession s = ctx.openSession("flood")) {
            MemorySegment buf = arena.allocate(BLOCK, 4096);
            s.enterBatchMode(); // three submit() calls of 32
            for (int i = 0; i < n; i++) {
                hs[i] = s.acquire();
                gens[i] = hs[i].generation();
                rets[i] = new IoReturn();
                hs[i].setIovec(0, buf).setReturn(rets[i]).addCallback(cb, 0).startReadv(fd, 1, (i % FILE_BLOCKS) * BLOCK);
            }
            s.exitBatchMode();
            for (int i = 0; i < n; i++) {
                s.await(hs[i], gens[i]);
                assertEquals(IoResult.OK, rets[i].status(), rets[i].message());
            }
            WorkerPoolStats st = method.stats();
            long inline = cb.threads.stream().filter(me::equals).count();
            long inWorker = cb.threads.stream().filter("pageio io worker 0"::equals).count();
            assertEquals(n, inline + inWorker, "callbacks ran only in the issuer or worker 0: " + cb.threads);
            // the issuer also takes back queued handles it waits for while the one worker is busy
            assertEquals(inline, st.inlineQueueFull() + st.inlineContended() + st.takenBack(), st.toString());
            // 63 fit in the queue, the worker took a few meanwhile: about 30 did not fit.
            assertTrue(inline >= n - WorkerPool.QUEUE_SIZE - 3, "inline " + inline + ": " + st);
            assertTrue(inWorker >= 1, st.toString());

            cb.threads.clear();
            assertEquals(IoResult.OK, read(s, 1, cb, IoHandle.FLAG_REFERENCES_LOCAL).status());
            assertEquals(List.of(me), List.copyOf(cb.threads), "issuer-local memory: executed by the issuer");
        }
    }

    // ------------------------------------------------------------------ failures and stop

    @Test
    void aWorkerThatDiesIsReplacedAndItsIoFailsWithEio() {
        start(WorkerSettings.of(2, 2, 60_000, 100));
        await("2 workers", () -> method.stats().workersAlive() == 2);
        method.injectWorkerFault();
        try (IoSession s = ctx.openSession("victim")) {
            // A read the issuer ran itself (queue lock busy, or taken back before a worker woke)
            // never meets the fault: read until one reaches a worker, and let only those pass.
            IoReturn ret = read(s, 5, null, 0);
            for (int tries = 1; ret.status() == IoResult.OK && tries < 100; tries++) {
                WorkerPoolStats st = method.stats();
                assertEquals(tries, st.inlineQueueFull() + st.inlineContended() + st.takenBack(),
                        "only a read the issuer ran itself may succeed: " + st);
                ret = read(s, 5, null, 0);
            }
            assertEquals(IoResult.ERROR, ret.status(), method.stats().toString());
            assertEquals(-Errno.EIO, IoResult.result(ret.result()));
            assertTrue(ret.message().contains("EIO"), ret.message());
            await("the dead worker is replaced", () -> method.stats().deaths() == 1
                    && method.stats().launches() == 3 && method.stats().workersAlive() == 2);
            for (int i = 0; i < 20; i++) {
                IoReturn ok = read(s, i, null, 0);
                assertEquals(IoResult.OK, ok.status(), ok.message());
            }
        }
        WorkerPoolStats st = method.stats();
        assertEquals(1, st.deaths(), st.toString());
        assertEquals(0, st.retirements(), st.toString());
    }

    /** Blocks I/O workers (not the issuer) in the shared completion until released. */
    static final class GateCallback implements IoCallback {
        final CountDownLatch gate = new CountDownLatch(1);
        final Queue<String> threads = new ConcurrentLinkedQueue<>();

        @Override
        public String name() {
            return "gate";
        }

        @Override
        public long completeShared(IoHandle handle, long result, int data) {
            threads.add(Thread.currentThread().getName());
            if (Thread.currentThread().getName().startsWith("pageio io worker")) {
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return result;
        }
    }

    // ------------------------------------------------------------------ waiting

    /** Whether {@code buf} holds block {@code block} of the test file. */
    private static boolean holdsBlock(MemorySegment buf, long block) {
        for (int i = 0; i < BLOCK; i++) {
            long at = block * BLOCK + i;
            if (buf.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i) != (byte) (at * 31 + (at >>> 13))) {
                return false;
            }
        }
        return true;
    }

    /** A read of one block submitted at once through {@link #submitRead}. */
    private record Read(IoHandle h, long gen, IoReturn ret, MemorySegment buf, long block) {
        /** Waits for it and checks that it read its block. */
        void awaitOk(IoSession s, String name) {
            s.await(h, gen);
            assertEquals(IoResult.OK, ret.status(), ret.message());
            assertTrue(holdsBlock(buf, block), name + " read block " + block);
        }
    }

    /** Starts (and so submits) a read of {@code block} into a fresh buffer with callback {@code cb}. */
    private Read submitRead(IoSession s, long block, IoCallback cb) {
        return submitRead(s, block, cb, 0);
    }

    private Read submitRead(IoSession s, long block, IoCallback cb, int flags) {
        MemorySegment buf = arena.allocate(BLOCK, 4096);
        IoReturn ret = new IoReturn();
        IoHandle h = s.acquire();
        long gen = h.generation();
        h.setIovec(0, buf).setReturn(ret).setFlags(flags).addCallback(cb, 0).startReadv(fd, 1, block * BLOCK);
        return new Read(h, gen, ret, buf, block);
    }

    // ------------------------------------------------------------------ advised reads

    /**
     * The only worker is stuck in A's callback; B, advised, is the lone queued handle: its issuer
     * takes it back and executes it (a lone handle that is not advised is left to the worker,
     * {@link #aLoneQueuedHandleIsNotTakenBackAndAWaiterIsWokenByTheWorker}); with
     * {@code io_worker_policy = postgresql} it waits for the worker.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void anAdvisedReadItsIssuerWaitsForIsTakenBackEvenAlone(boolean policyOn) throws Exception {
        start(WorkerSettings.of(1, 1, 60_000, 100_000));
        if (!policyOn) {
            method.pool().handOff.postgresql();
        }
        await("1 idle worker", () -> method.stats().workersIdle() == 1);
        GateCallback gate = new GateCallback();
        String me = Thread.currentThread().getName();
        String worker = "pageio io worker 0";
        IoSession s = ctx.openSession("advised");
        try {
            Read a = submitRead(s, 3, gate);
            await("the worker holds A", () -> gate.threads.contains(worker));
            Read b = submitRead(s, 5, gate, IoHandle.FLAG_ADVISED);
            assertEquals(1, method.stats().queueDepth(), "B waits in the queue alone: " + method.stats());
            if (policyOn) {
                // the gate opens once B ran, or after the deadline (B then ran in the worker: a failure, not a hang)
                Thread opener = openWhen(gate.gate, () -> gate.threads.size() >= 2, DEADLINE_MS, "gate opener");
                b.awaitOk(s, "B");
                assertEquals(List.of(worker, me), List.copyOf(gate.threads), "B's callback ran in its issuer");
                assertEquals(1, method.stats().takenBack(), method.stats().toString());
                a.awaitOk(s, "A");
                opener.join(DEADLINE_MS);
            } else {
                Thread opener = openWhen(gate.gate, () -> false, 200, "gate opener"); // B waits for the worker
                b.awaitOk(s, "B");
                a.awaitOk(s, "A");
                opener.join(DEADLINE_MS);
                assertEquals(List.of(worker, worker), List.copyOf(gate.threads), "both ran in the worker");
                assertEquals(0, method.stats().takenBack(), method.stats().toString());
            }
        } finally {
            gate.gate.countDown();
            s.close();
        }
    }

    /**
     * Worker 0 is stuck; an advised read is submitted and only another thread waits for it (as a
     * session adopting its wait reference would: it cannot take it back). The submission woke
     * nobody, so the held-wake watch must: worker 1 runs it.
     */
    @Test
    void anAdvisedReadNobodyTakesBackIsRunByAWorkerTheWatchWakes() throws Exception {
        start(WorkerSettings.of(2, 2, 60_000, 100_000));
        await("2 idle workers", () -> method.stats().workersIdle() == 2);
        GateCallback gate = new GateCallback();
        IoSession s = ctx.openSession("advised");
        try {
            Read a = submitRead(s, 3, gate);
            await("worker 0 holds A", () -> gate.threads.contains("pageio io worker 0"));
            Read b = submitRead(s, 5, gate, IoHandle.FLAG_ADVISED);
            CountDownLatch returned = new CountDownLatch(1);
            Thread other = new Thread(() -> {
                ctx.await(b.h().index(), b.gen());
                returned.countDown();
            }, "other waiter");
            other.setDaemon(true);
            other.start();
            await("a worker ran B", () -> gate.threads.contains("pageio io worker 1"), () -> method.stats().toString());
            gate.gate.countDown();
            assertTrue(returned.await(DEADLINE_MS, TimeUnit.MILLISECONDS), "the other waiter was not woken");
            b.awaitOk(s, "B");
            a.awaitOk(s, "A");
            other.join(DEADLINE_MS);
            assertEquals(0, method.stats().takenBack(), method.stats().toString());
        } finally {
            gate.gate.countDown();
            s.close();
        }
    }

    @Test
    void anIssuerThatMustWaitTakesBackAQueuedHandleWhenEveryWorkerIsBusy() throws Exception {
        start(WorkerSettings.of(1, 1, 60_000, 100_000));
        await("1 idle worker", () -> method.stats().workersIdle() == 1);
        GateCallback gate = new GateCallback();
        String me = Thread.currentThread().getName();
        IoSession s = ctx.openSession("taker");
        try {
            Read a = submitRead(s, 3, gate);
            await("the worker holds A", () -> gate.threads.contains("pageio io worker 0"));

            Read b = submitRead(s, 5, gate);
            Read c = submitRead(s, 9, gate);
            assertEquals(2, method.stats().queueDepth(), "B and C wait in the queue: " + method.stats());
            b.awaitOk(s, "B"); // the only worker is stuck: B is taken back and executed here
            assertEquals(List.of("pageio io worker 0", me), List.copyOf(gate.threads), "B's callback ran in the issuer");
            WorkerPoolStats st = method.stats();
            assertEquals(1, st.takenBack(), st.toString());
            assertEquals(1, st.queueDepth(), "C is still queued: " + st);
            assertTrue(a.h().state() < IoHandle.COMPLETED_SHARED, "A is still held by the worker");

            gate.gate.countDown();
            a.awaitOk(s, "A");
            c.awaitOk(s, "C"); // a lone queued handle is left to the worker
            await("the worker counted A and C", () -> method.stats().iosPerWorker()[0] == 2);
            assertEquals(1, method.stats().takenBack(), method.stats().toString());
            assertEquals(List.of("pageio io worker 0", me, "pageio io worker 0"), List.copyOf(gate.threads));
        } finally {
            gate.gate.countDown(); // never leave the worker stuck (closing the session waits for A)
            s.close();
        }
    }

    @Test
    void anIssuerWaitingForAHandleAWorkerHoldsExecutesItsNewestQueuedHandlesMeanwhile() throws Exception {
        assertIssuerHelps(true);
    }

    @Test
    void withHelpOffTheIssuerSleepsWhileItsHandlesWaitInTheQueue() throws Exception {
        assertIssuerHelps(false);
    }

    /**
     * One worker, held inside A (still SUBMITTED, as in a long system call); B, C, D queued behind
     * it. The issuer waits for A: helping, it executes D, then C (newest first) and leaves B, then
     * alone in the queue, to the worker; not helping, it sleeps and the worker runs all four.
     */
    private void assertIssuerHelps(boolean helps) throws Exception {
        start(WorkerSettings.of(1, 1, 60_000, 100_000));
        method.pool().handOff.issuers.issuerHelps = helps;
        await("1 idle worker", () -> method.stats().workersIdle() == 1);
        GateCallback notes = new GateCallback(); // records the thread; never blocks the issuer
        notes.gate.countDown();
        CountDownLatch hold = new CountDownLatch(1);
        method.pool().holdNextDequeue(hold);
        String me = Thread.currentThread().getName();
        String worker = "pageio io worker 0";
        IoSession s = ctx.openSession("helper");
        Thread opener = null;
        long[] blocks = {3, 5, 9, 11}; // A, B, C, D
        MemorySegment[] bufs = new MemorySegment[blocks.length];
        IoReturn[] rets = new IoReturn[blocks.length];
        IoHandle[] hs = new IoHandle[blocks.length];
        long[] gens = new long[blocks.length];
        try {
            for (int i = 0; i < blocks.length; i++) {
                bufs[i] = arena.allocate(BLOCK, 4096);
                rets[i] = new IoReturn();
                hs[i] = s.acquire();
                gens[i] = hs[i].generation();
                hs[i].setIovec(0, bufs[i]).setReturn(rets[i]).addCallback(notes, 0).startReadv(fd, 1, blocks[i] * BLOCK);
                if (i == 0) {
                    // parked in the hold, i.e. out of its locked dequeue: a submission that found the
                    // queue lock still held by it would run inline (seen once: "inline (lock busy) 3")
                    await("the worker holds A", () -> method.stats().workersIdle() == 0 && method.stats().queueDepth() == 0
                            && method.pool().workerThread(0).getState() == Thread.State.TIMED_WAITING);
                }
            }
            assertEquals(3, method.stats().queueDepth(), "B, C and D wait in the queue: " + method.stats());
            assertEquals(IoHandle.SUBMITTED, hs[0].state(), "A is held before its system call");
            // A stays held until the issuer has executed two handles, or for 300 ms without help.
            opener = openWhen(hold, () -> notes.threads.size() >= 2, helps ? DEADLINE_MS : 300, "hold opener");
            s.await(hs[0], gens[0]);
            WorkerPoolStats st = method.stats();
            assertEquals(helps ? 2 : 0, st.takenBack(), "handles the waiting issuer executed: " + st);
            for (int i = 1; i < blocks.length; i++) {
                s.await(hs[i], gens[i]);
            }
            for (int i = 0; i < blocks.length; i++) {
                assertEquals(IoResult.OK, rets[i].status(), rets[i].message());
                assertTrue(holdsBlock(bufs[i], blocks[i]), "read " + i + " holds block " + blocks[i]);
            }
            if (helps) {
                assertEquals(List.of(me, me, worker, worker), List.copyOf(notes.threads),
                        "D and C in the waiting issuer, then A and B in the worker");
                assertTrue(holdsBlock(bufs[3], 11) && holdsBlock(bufs[2], 9));
                await("the worker counted A and B", () -> method.stats().iosPerWorker()[0] == 2);
            } else {
                assertEquals(worker, List.copyOf(notes.threads).get(0), "A ran first, in the worker");
            }
        } finally {
            hold.countDown();
            if (opener != null) {
                opener.join(DEADLINE_MS);
            }
            s.close();
        }
    }

    @Test
    void withTheCpuCapAHandleQueuedBehindAWorkerOnShortIosWakesNobodyAndThatWorkerTakesItNext() throws Exception {
        assertCpuCap(1);
    }

    @Test
    void withoutTheCpuCapTheSameHandleWakesTheIdleWorkerAtOnce() throws Exception {
        assertCpuCap(0);
    }

    /**
     * Worker 0 is held inside A and counted as running short I/Os (as a copy from the page cache
     * is); B is queued. With the cap at 1 nobody is woken for B, and worker 0 runs it after A
     * (nobody else would: the supervisor's check sees worker 0 still counted). With the cap off,
     * PostgreSQL's rule wakes worker 1 for B at once.
     */
    private void assertCpuCap(int cap) throws Exception {
        start(WorkerSettings.of(2, 2, 60_000, 100_000));
        method.pool().handOff.cpuCap.cpuCap = cap;
        method.pool().handOff.cpuCap.busyNanos = TimeUnit.HOURS.toNanos(1); // worker 0 counts as on a short I/O
        await("2 idle workers", () -> method.stats().workersIdle() == 2);
        GateCallback gate = new GateCallback();
        IoSession s = ctx.openSession("cap");
        try {
            Read a = submitRead(s, 3, gate);
            await("worker 0 holds A", () -> gate.threads.contains("pageio io worker 0"));
            Read b = submitRead(s, 5, gate);
            String runsB;
            if (cap == 0) {
                await("worker 1 woken for B", () -> gate.threads.contains("pageio io worker 1"));
                runsB = "pageio io worker 1";
            } else {
                Thread.sleep(50); // 25 supervisor checks
                WorkerPoolStats st = method.stats();
                assertEquals(1, st.queueDepth(), "B waits in the queue: " + st);
                assertEquals(1, st.workersIdle(), "worker 1 was woken for B although worker 0 is on a short I/O: " + st);
                runsB = "pageio io worker 0";
            }
            gate.gate.countDown();
            b.awaitOk(s, "B");
            assertEquals(List.of("pageio io worker 0", runsB), List.copyOf(gate.threads), "A in worker 0, B in " + runsB);
            a.awaitOk(s, "A");
        } finally {
            gate.gate.countDown();
            s.close();
        }
    }

    /**
     * With the CPU cap, a read queued behind worker 0 while worker 0 counted as on a short I/O is not
     * left there when that I/O stalls: the supervisor's watch sees worker 0 inside one I/O for
     * longer than {@code busyNanos} and wakes worker 1 for it, with nobody waiting. The stall is
     * made explicit: worker 0 counts as short (an hour's threshold) while B is queued, then the
     * threshold drops under the time worker 0 has been inside A.
     */
    @Test
    void withTheCpuCapAReadBehindAWorkerThatStallsGoesToAnIdleWorkerWithoutAWaiter() throws Exception {
        start(WorkerSettings.of(2, 2, 60_000, 100_000));
        method.pool().handOff.cpuCap.cpuCap = 1;
        method.pool().handOff.cpuCap.busyNanos = TimeUnit.HOURS.toNanos(1);
        await("2 idle workers", () -> method.stats().workersIdle() == 2);
        GateCallback gate = new GateCallback();
        IoSession s = ctx.openSession("stall");
        try {
            Read a = submitRead(s, 3, gate);
            await("worker 0 holds A", () -> gate.threads.contains("pageio io worker 0"));
            Read b = submitRead(s, 5, gate); // the queue lock is free: worker 0 waits in A's callback
            Thread.sleep(50); // 25 supervisor checks
            WorkerPoolStats st = method.stats();
            assertEquals(1, st.queueDepth(), "B waits behind worker 0: " + st + "; " + method.pool().wakeState());
            assertEquals(1, st.workersIdle(), "worker 1 was woken although worker 0 counts as short: " + st);
            method.pool().handOff.cpuCap.busyNanos = TimeUnit.MILLISECONDS.toNanos(20); // worker 0 is inside A for > 50 ms: stalled
            await("worker 1 holds B", () -> gate.threads.contains("pageio io worker 1"), method.pool()::wakeState);
            assertEquals(List.of("pageio io worker 0", "pageio io worker 1"), List.copyOf(gate.threads));
            gate.gate.countDown();
            a.awaitOk(s, "A");
            b.awaitOk(s, "B");
            assertEquals(0, method.stats().takenBack(), method.stats().toString());
        } finally {
            gate.gate.countDown();
            s.close();
        }
    }

    /**
     * With the CPU cap at 1, a worker inside one I/O for far longer than {@code busyNanos} does not
     * count as taking the next handle soon: that handle's submission wakes the idle worker.
     */
    @Test
    void aWorkerInsideOneIoForLongDoesNotCountAsAwakeAndTheNextHandleWakesAnother() throws Exception {
        start(WorkerSettings.of(2, 2, 60_000, 100_000));
        method.pool().handOff.cpuCap.cpuCap = 1;
        await("2 idle workers", () -> method.stats().workersIdle() == 2);
        GateCallback gate = new GateCallback();
        IoSession s = ctx.openSession("long");
        try {
            Read a = submitRead(s, 3, gate);
            await("worker 0 holds A", () -> gate.threads.contains("pageio io worker 0"));
            Thread.sleep(20); // A has been running for far longer than busyNanos (50 µs)

            Read b = submitRead(s, 5, gate);
            // Nobody waits for B: only its submission can have woken worker 1.
            await("worker 1 runs B", () -> gate.threads.contains("pageio io worker 1"));
            gate.gate.countDown();
            b.awaitOk(s, "B");
            s.await(a.h(), a.gen());
            assertEquals(0, method.stats().takenBack(), method.stats().toString());
        } finally {
            gate.gate.countDown();
            s.close();
        }
    }

    @Test
    void aLoneQueuedHandleIsNotTakenBackAndAWaiterIsWokenByTheWorker() throws Exception {
        String me = Thread.currentThread().getName();
        start(WorkerSettings.of(2, 2, 60_000, 100_000));
        await("2 idle workers", () -> method.stats().workersIdle() == 2);
        GateCallback gate = new GateCallback();
        IoSession s = ctx.openSession("waiter");
        try {
            Read r = submitRead(s, 7, gate);
            // Another thread waits on the handle (as a session adopting a wait reference would).
            CountDownLatch returned = new CountDownLatch(1);
            Thread other = new Thread(() -> {
                ctx.await(r.h().index(), r.gen());
                returned.countDown();
            }, "other waiter");
            other.setDaemon(true);
            other.start();
            await("a worker holds the handle", () -> gate.threads.stream().anyMatch(t -> t.startsWith("pageio io worker")));
            assertFalse(returned.await(100, TimeUnit.MILLISECONDS), "the other waiter returned before the I/O completed");
            gate.gate.countDown();
            assertTrue(returned.await(DEADLINE_MS, TimeUnit.MILLISECONDS), "the other waiter was not woken");
            r.awaitOk(s, "the read");
            other.join(DEADLINE_MS);

            // One read at a time with an idle worker left: never taken back. Each is run by a worker,
            // unless submit found the queue lock held (a worker preempted inside it on a loaded
            // machine): then the issuer runs it inline, as PostgreSQL does, and the pool counts it.
            gate.threads.clear();
            WorkerPoolStats before = method.stats();
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DEADLINE_MS);
            int reads = 0;
            while (gate.threads.stream().filter(t -> t.startsWith("pageio io worker")).count() < 20
                    && System.nanoTime() - deadline < 0) {
                assertEquals(IoResult.OK, read(s, reads++ % FILE_BLOCKS, gate, 0).status());
            }
            WorkerPoolStats after = method.stats();
            assertEquals(0, after.takenBack(), after.toString());
            long byWorkers = gate.threads.stream().filter(t -> t.startsWith("pageio io worker")).count();
            long inline = after.inlineContended() + after.inlineQueueFull() - before.inlineContended() - before.inlineQueueFull();
            assertEquals(20, byWorkers, "workers ran 20 of " + reads + " reads: " + gate.threads + " " + after);
            assertEquals(reads - byWorkers, inline, "every read not run by a worker is counted as inline: " + after);
            assertTrue(gate.threads.stream().allMatch(t -> t.startsWith("pageio io worker") || t.equals(me)), gate.threads.toString());
        } finally {
            gate.gate.countDown();
            s.close();
        }
    }

    @Test
    void stoppingWithIoInFlightCompletesOrFailsEveryHandleAndThenRunsInline() throws Exception {
        start(WorkerSettings.of(2, 2, 60_000, 100));
        await("2 workers", () -> method.stats().workersIdle() == 2);
        GateCallback gate = new GateCallback();
        int n = 48;
        IoHandle[] hs = new IoHandle[n];
        long[] gens = new long[n];
        IoReturn[] rets = new IoReturn[n];
        try (IoSession s = ctx.openSession("stopper")) {
            MemorySegment buf = arena.allocate(BLOCK, 4096);
            s.enterBatchMode();
            for (int i = 0; i < n; i++) {
                hs[i] = s.acquire();
                gens[i] = hs[i].generation();
                rets[i] = new IoReturn();
                hs[i].setIovec(0, buf).setReturn(rets[i]).addCallback(gate, 0).startReadv(fd, 1, (i % FILE_BLOCKS) * BLOCK);
            }
            s.exitBatchMode();
            // Both workers are stuck in an I/O; the rest waits in the queue (or ran in the issuer).
            try {
                await("both workers hold an I/O", () -> gate.threads.stream().filter(t -> t.startsWith("pageio")).count() == 2,
                        method.pool()::wakeState);
            } catch (AssertionError e) {
                gate.gate.countDown(); // else closing the session waits forever for the I/O a worker holds
                throw new AssertionError(e.getMessage() + "; " + method.stats() + "; completions ran in " + gate.threads, e);
            }
            long inline = method.stats().inlineQueueFull() + method.stats().inlineContended();
            Thread opener = new Thread(() -> {
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                gate.gate.countDown(); // stop() waits for running I/O: let it finish
            }, "gate opener");
            opener.start();
            long t0 = System.nanoTime();
            method.close();
            long stopMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(stopMs < DEADLINE_MS, "stop took " + stopMs + " ms");
            int ok = 0;
            int cancelled = 0;
            for (int i = 0; i < n; i++) {
                // Every handle is complete now, without anybody's help: check, do not wait.
                assertTrue(hs[i].generation() != gens[i] || hs[i].state() >= IoHandle.COMPLETED_SHARED,
                        "handle " + i + " not complete after stop: " + hs[i]);
                s.await(hs[i], gens[i]);
                if (rets[i].status() == IoResult.OK) {
                    ok++;
                } else {
                    assertEquals(-Errno.ECANCELED, IoResult.result(rets[i].result()), rets[i].message());
                    cancelled++;
                }
            }
            assertEquals(2 + inline, ok, "the two running I/Os and the inline ones completed");
            assertEquals(n - 2 - inline, cancelled, "the queued ones were cancelled");
            assertTrue(cancelled >= 1, "cancelled " + cancelled);
            for (int id = 0; id < 2; id++) {
                assertFalse(method.pool().workerThread(id).isAlive(), "worker " + id + " still runs");
            }
            assertFalse(method.pool().supervisorThread().isAlive());

            // A session may still use the method after it stopped: the issuer executes.
            SlowCallback cb = new SlowCallback(0);
            assertEquals(IoResult.OK, read(s, 7, cb, 0).status());
            assertEquals(List.of(Thread.currentThread().getName()), List.copyOf(cb.threads));
            assertThrows(IllegalStateException.class, () -> method.apply(WorkerSettings.DEFAULTS));
        }
    }

    // ------------------------------------------------------------------ settings

    @Test
    void invalidCombinationsAreRejectedNamingBothValuesAndTheOldSettingsStay() {
        method = new WorkerIoMethod();
        method.activate(config(2, 4, 60_000, 100, -1));
        ctx = AioContext.create(method, new AioConfig(8, 64, 16));
        WorkerSettings before = method.settings();

        method.modified(config(6, 4, 60_000, 100, -1));
        String r = method.lastRejection();
        assertNotNull(r);
        assertTrue(r.contains("io_min_workers = 6") && r.contains("io_max_workers = 4"), r);
        assertTrue(r.contains("keeping io_min_workers = 2, io_max_workers = 4"), r);
        assertEquals(before, method.settings());

        method.modified(config(2, 40, 60_000, 100, -1));
        r = method.lastRejection();
        assertTrue(r.contains("io_max_workers = 40") && r.contains("io_min_workers = 2"), r);
        assertEquals(before, method.settings());
        assertTrue(method.settingsView().stream().anyMatch(x -> x.name().equals("rejected") && x.note().contains("40")));

        method.modified(config(3, 5, 60_000, 100, -1));
        assertNull(method.lastRejection());
        assertEquals(WorkerSettings.of(3, 5, 60_000, 100), method.settings());
        await("3 workers", () -> method.stats().workersAlive() == 3);

        assertThrows(IllegalArgumentException.class, () -> WorkerSettings.of(0, 8, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> WorkerSettings.of(1, 33, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> WorkerSettings.of(1, 8, -1, 1));
        assertThrows(IllegalArgumentException.class, () -> WorkerSettings.of(1, 8, 1, -1));
    }

    @Test
    void postgres18IoWorkersMeansAFixedPoolWithANote() {
        method = new WorkerIoMethod();
        method.activate(config(2, 8, 60_000, 100, 3));
        ctx = AioContext.create(method, new AioConfig(8, 64, 16));
        WorkerSettings s = method.settings();
        assertEquals(3, s.minWorkers());
        assertEquals(3, s.maxWorkers());
        assertEquals(3, s.legacyIoWorkers());
        WorkerSettings.Setting row = method.settingsView().stream().filter(x -> x.name().equals("io_workers"))
                .findFirst().orElseThrow();
        assertEquals("3", row.value());
        assertTrue(row.note().contains("PostgreSQL 18") && row.note().contains("io_min_workers = io_max_workers = 3"),
                row.note());
        await("3 workers", () -> method.stats().workersAlive() == 3);

        method.modified(config(2, 8, 60_000, 100, 40));
        assertTrue(method.lastRejection().contains("io_workers = 40"), method.lastRejection());
        assertEquals(s, method.settings());
    }

    @Test
    void anInvalidConfigurationAtActivationFallsBackToTheDefaults() {
        method = new WorkerIoMethod();
        method.activate(config(9, 4, 60_000, 100, -1));
        assertEquals(WorkerSettings.DEFAULTS, method.settings());
        assertTrue(method.lastRejection().contains("io_min_workers = 9 is greater than io_max_workers = 4"));
    }

    /**
     * With the only worker held in a callback, reads on a second descriptor stay queued;
     * {@code closingFd} must wait for them (the issuer takes back all but the last, which the
     * worker runs once released), so that no worker uses the descriptor after the issuer closed it.
     */
    @Test
    void closingFdWaitsForQueuedIoOnThatDescriptor() throws Exception {
        start(WorkerSettings.of(1, 1, 60_000, 100));
        assertTrue(method.waitOnFdBeforeClose());
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        IoCallback holding = new IoCallback() {
            public String name() {
                return "holding";
            }

            public long completeShared(IoHandle h, long r, int data) {
                entered.countDown();
                try {
                    release.await(DEADLINE_MS, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return r;
            }
        };
        Thread holder = new Thread(() -> {
            try (IoSession s = ctx.openSession("holder")) {
                IoHandle h = s.acquire();
                long gen = h.generation();
                h.setIovec(0, arena.allocate(BLOCK, 4096)).addCallback(holding, 0).startReadv(fd, 1, 0);
                s.await(h, gen);
            }
        }, "holder");
        holder.setDaemon(true);
        holder.start();
        int fd2 = Posix.open(file, OpenFlags.O_RDONLY, 0);
        try {
            assertTrue(entered.await(DEADLINE_MS, TimeUnit.MILLISECONDS), "the only worker never ran the holding read");
            try (IoSession s = ctx.openSession("closer")) {
                IoHandle[] hs = new IoHandle[8];
                long[] gens = new long[hs.length];
                IoReturn[] rets = new IoReturn[hs.length];
                s.enterBatchMode();
                for (int i = 0; i < hs.length; i++) {
                    rets[i] = new IoReturn();
                    hs[i] = s.acquire();
                    gens[i] = hs[i].generation();
                    hs[i].setIovec(0, arena.allocate(BLOCK, 4096)).setReturn(rets[i]).startReadv(fd2, 1, (long) i * BLOCK);
                }
                s.exitBatchMode();
                // The issuer takes back all but a lone last handle; the worker, released then, runs that one.
                openWhen(release, () -> done(hs, gens) >= hs.length - 1, DEADLINE_MS, "releaser");
                s.closingFd(fd2);
                for (int i = 0; i < hs.length; i++) {
                    int state = hs[i].state();
                    assertTrue(hs[i].generation() != gens[i] || state >= IoHandle.COMPLETED_SHARED,
                            "read " + i + " of the closing descriptor is still " + IoHandle.stateName(state) + " after closingFd");
                }
                Posix.close(fd2, file);
                fd2 = -1;
                for (int i = 0; i < hs.length; i++) {
                    s.await(hs[i], gens[i]);
                    assertEquals(IoResult.OK, rets[i].status(), rets[i].message());
                }
            }
        } finally {
            release.countDown();
            if (fd2 >= 0) {
                Posix.close(fd2, file);
            }
            holder.join(DEADLINE_MS);
        }
    }

    /** How many of {@code hs} completed their I/O of generation {@code gens[i]}. */
    private static int done(IoHandle[] hs, long[] gens) {
        int n = 0;
        for (int i = 0; i < hs.length; i++) {
            if (hs[i].generation() != gens[i] || hs[i].state() >= IoHandle.COMPLETED_SHARED) {
                n++;
            }
        }
        return n;
    }

    @Test
    void theActiveComponentsPoolIsOnJmxUntilItCloses() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = new ObjectName(WorkerPoolMBean.NAME);
        assertFalse(server.isRegistered(name), "nothing before activation");
        method = new WorkerIoMethod();
        method.activate(config(2, 4, 60_000, 100, -1));
        await("2 workers", () -> method.stats().workersAlive() == 2);
        assertEquals(2, server.getAttribute(name, "Workers"));
        assertEquals(2, server.getAttribute(name, "MinWorkers"));
        assertEquals(4, server.getAttribute(name, "MaxWorkers"));
        assertEquals(SubmissionQueue.QUEUE_SIZE - 1, server.getAttribute(name, "QueueCapacity"));
        assertEquals(0, server.getAttribute(name, "QueueDepth"));
        assertEquals(2L, server.getAttribute(name, "Launches"));
        method.close();
        assertFalse(server.isRegistered(name), "unregistered when the pool stops");
    }

    static WorkerConfig config(int min, int max, int idleMs, int intervalMs, int ioWorkers) {
        return new WorkerConfig() {
            public Class<? extends Annotation> annotationType() {
                return WorkerConfig.class;
            }

            public int io__min__workers() {
                return min;
            }

            public int io__max__workers() {
                return max;
            }

            public int io__worker__idle__timeout() {
                return idleMs;
            }

            public int io__worker__launch__interval() {
                return intervalMs;
            }

            public int io__workers() {
                return ioWorkers;
            }

            public String io__worker__policy() {
                return HandOffPolicy.PAGEIO;
            }
        };
    }
}
