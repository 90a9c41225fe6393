package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

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
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import javax.inject.Inject;
import org.junit.Test;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.util.Filter;
import org.pageio.api.AioConfig;
import org.pageio.api.AioContext;
import org.pageio.api.IoCallback;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.api.IoSession;
import org.pageio.posix.Fadvise;
import org.pageio.posix.Iovec;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;
import org.pageio.tck.BlockPattern;
import org.pageio.uring.IoUring;

/**
 * Several sessions keep their rings full for a few seconds while other threads reap them: reaper
 * threads with a session ({@code IoSession.await} on another session's handle) and without one
 * ({@code AioContext.await}), as a backend waiting on a buffer another backend is reading. A
 * shared completion callback checks every byte read against {@link BlockPattern} in whichever
 * thread reaps, and counts. A dropper thread evicts the files from the page cache now and then,
 * so reads also go to the disk (the kernel's asynchronous buffered-read path). Zero wrong bytes,
 * zero lost completions, no CQ overflow.
 */
public class UringStressIT extends PageioTestBase {

    static final int BLOCK = BlockPattern.BLOCK;
    static final int FILES = 2;
    static final int FILE_BLOCKS = 256; // 2 MiB each
    static final int SESSIONS = 4;
    static final int DEPTH = 32; // io_max_concurrency: every handle in flight
    static final int MAX_BLOCKS_PER_READ = 4;
    static final int REAPERS = 3;
    static final long RUN_NANOS = TimeUnit.SECONDS.toNanos(3);

    @Inject
    @Filter("(io.method=io_uring)")
    private IoMethod uring;

    @Override
    protected Option extraOptions() {
        return reactorBundle("uring-bundle");
    }

    final AtomicLong submitted = new AtomicLong();
    final AtomicLong completed = new AtomicLong();
    final AtomicLong completedByOthers = new AtomicLong();
    final AtomicLong wrongBytes = new AtomicLong();
    final AtomicLong notOk = new AtomicLong();
    final AtomicLong bytesRead = new AtomicLong();
    final ConcurrentLinkedQueue<long[]> waitRefs = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<String> firstErrors = new ConcurrentLinkedQueue<>();
    final AtomicBoolean issuing = new AtomicBoolean(true);
    String[] names;
    int[] fds;

    /** Runs in the reaping thread: checks every block read against the pattern. */
    final IoCallback verify = new IoCallback() {
        @Override
        public String name() {
            return "stress_verify";
        }

        @Override
        @SuppressWarnings("restricted")
        public long completeShared(IoHandle h, long r, int file) {
            completed.incrementAndGet();
            if (Thread.currentThread() != h.session().owner()) {
                completedByOthers.incrementAndGet();
            }
            int res = h.rawResult();
            if (res < 0) {
                return r;
            }
            bytesRead.addAndGet(res);
            long first = h.handleData(0);
            for (int i = 0; i < h.iovcnt() && (long) i * BLOCK < res; i++) {
                MemorySegment buf = MemorySegment.ofAddress(Iovec.base(h.iovecs(), i)).reinterpret(BLOCK);
                int valid = (int) Math.min(BLOCK, res - (long) i * BLOCK);
                for (int b = 0; b < valid; b++) {
                    if (buf.get(ValueLayout.JAVA_BYTE, b) != BlockPattern.expected(names[file], first + i, b)) {
                        wrongBytes.incrementAndGet();
                    }
                }
            }
            return r;
        }
    };

    @Test
    public void ringsStayFullWhileOtherThreadsReapAndEveryByteIsRight() throws Exception {
        assertTrue("io_uring must be available here: " + uring.availability().cause(), uring.availability().available());
        Path dir = Files.createTempDirectory("pageio-uring-stress-");
        names = new String[FILES];
        fds = new int[FILES];
        ExecutorService pool = Executors.newFixedThreadPool(SESSIONS + REAPERS + 1);
        try (AioContext ctx = AioContext.create(uring, new AioConfig(SESSIONS + REAPERS, DEPTH, MAX_BLOCKS_PER_READ))) {
            for (int f = 0; f < FILES; f++) {
                names[f] = "stress" + f;
                fds[f] = Posix.open(BlockPattern.write(dir.resolve(names[f]), FILE_BLOCKS), OpenFlags.O_RDONLY, 0);
            }
            long deadline = System.nanoTime() + RUN_NANOS;
            List<Future<String>> issuers = new ArrayList<>();
            for (int i = 0; i < SESSIONS; i++) {
                int seed = i;
                issuers.add(pool.submit(() -> issue(ctx, seed, deadline)));
            }
            List<Future<Long>> reapers = new ArrayList<>();
            for (int i = 0; i < REAPERS; i++) {
                boolean withSession = i % 2 == 0;
                reapers.add(pool.submit(() -> reap(ctx, withSession)));
            }
            Future<?> dropper = pool.submit(() -> dropCaches(dir));
            List<String> ringStats = new ArrayList<>();
            for (Future<String> f : issuers) {
                ringStats.add(f.get(60, TimeUnit.SECONDS));
            }
            issuing.set(false);
            long reapedByWaiters = 0;
            for (Future<Long> f : reapers) {
                reapedByWaiters += f.get(60, TimeUnit.SECONDS);
            }
            dropper.get(60, TimeUnit.SECONDS);
            assertTrue(ctx.openSessions().isEmpty());

            String summary = "submitted " + submitted.get() + ", completed " + completed.get() + " ("
                    + completedByOthers.get() + " reaped by threads other than the issuer), " + bytesRead.get()
                    + " bytes checked, " + wrongBytes.get() + " wrong, not OK " + notOk.get() + ", waits by reapers "
                    + reapedByWaiters + "; rings " + ringStats + "; first errors " + firstErrors;
            System.out.println("UringStressIT: " + summary);
            assertEquals(summary, 0, wrongBytes.get());
            assertEquals("lost completions: " + summary, submitted.get(), completed.get());
            assertEquals(summary, 0, notOk.get());
            assertTrue("the rings were kept busy: " + summary, submitted.get() > SESSIONS * DEPTH * 10L);
            assertTrue("threads other than the issuer reaped: " + summary, completedByOthers.get() > 0);
        } finally {
            pool.shutdownNow();
            for (int fd : fds) {
                if (fd > 0) {
                    Posix.close(fd, null);
                }
            }
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** One session: keeps all DEPTH handles in flight, in batches, until the deadline. */
    private String issue(AioContext ctx, int seed, long deadline) {
        Random rnd = new Random(seed);
        IoHandle[] hs = new IoHandle[DEPTH];
        long[] gens = new long[DEPTH];
        IoReturn[] rets = new IoReturn[DEPTH];
        try (Arena arena = Arena.ofConfined(); IoSession s = ctx.openSession("stress-" + seed)) {
            MemorySegment[] bufs = new MemorySegment[DEPTH];
            for (int i = 0; i < DEPTH; i++) {
                bufs[i] = arena.allocate((long) MAX_BLOCKS_PER_READ * BLOCK, 4096);
                rets[i] = new IoReturn();
            }
            @SuppressWarnings("unchecked") // io_uring's session state hands out its ring as a Supplier
            IoUring ring = ((java.util.function.Supplier<IoUring>) s.methodState()).get();
            while (System.nanoTime() < deadline) {
                // Wait for the oldest slots, leaving the reaping to others for a while.
                for (int i = 0; i < DEPTH; i++) {
                    if (hs[i] != null) {
                        finish(s, hs[i], gens[i], rets[i]);
                        hs[i] = null;
                    }
                    if (i % 8 == 7 || i == DEPTH - 1) {
                        s.enterBatchMode();
                        for (int j = i - (i % 8); j <= i; j++) {
                            start(s, rnd, bufs[j], hs, gens, rets, j);
                        }
                        s.exitBatchMode(); // one io_uring_enter for the batch
                    }
                }
            }
            for (int i = 0; i < DEPTH; i++) {
                if (hs[i] != null) {
                    finish(s, hs[i], gens[i], rets[i]);
                }
            }
            String stats = "sq " + ring.sqEntries() + " submitted " + ring.submitted() + " in "
                    + ring.submitCalls() + " enters, overflow " + ring.cqOverflow() + ", wait errors " + ring.waitErrors();
            assertEquals(stats, 0, ring.cqOverflow());
            assertEquals(stats, ring.submitted(), ring.reaped());
            return stats;
        }
    }

    private void start(IoSession s, Random rnd, MemorySegment buf, IoHandle[] hs, long[] gens, IoReturn[] rets, int slot) {
        int file = rnd.nextInt(FILES);
        int blocks = 1 + rnd.nextInt(MAX_BLOCKS_PER_READ);
        long first = rnd.nextInt(FILE_BLOCKS - blocks + 1);
        IoHandle h = s.acquire();
        hs[slot] = h;
        gens[slot] = h.generation();
        for (int b = 0; b < blocks; b++) {
            h.setIovec(b, buf.address() + (long) b * BLOCK, BLOCK);
        }
        h.setHandleData(0, first).setReturn(rets[slot]).setFlags(IoHandle.FLAG_BUFFERED).addCallback(verify, file);
        h.startReadv(fds[file], blocks, first * BLOCK);
        submitted.incrementAndGet();
        waitRefs.add(new long[] {h.index(), gens[slot]});
    }

    private void finish(IoSession s, IoHandle h, long gen, IoReturn ret) {
        // Give the reapers up to ~2 ms to complete it, then reap ourselves.
        for (int spin = 0; spin < 100 && h.generation() == gen && h.state() < IoHandle.COMPLETED_SHARED; spin++) {
            LockSupport.parkNanos(20_000);
        }
        s.await(h, gen);
        if (ret.status() != IoResult.OK) {
            notOk.incrementAndGet();
            if (firstErrors.size() < 5) {
                firstErrors.add(ret.message());
            }
        }
    }

    /** Takes wait references of other sessions' I/Os and waits for them, reaping their rings. */
    private long reap(AioContext ctx, boolean withSession) {
        long waits = 0;
        IoSession s = withSession ? ctx.openSession("reaper") : null;
        try {
            while (issuing.get() || !waitRefs.isEmpty()) {
                long[] ref = waitRefs.poll();
                if (ref == null) {
                    LockSupport.parkNanos(50_000);
                    continue;
                }
                if (s != null) {
                    s.await((int) ref[0], ref[1]);
                } else {
                    ctx.await((int) ref[0], ref[1]);
                }
                waits++;
            }
        } finally {
            if (s != null) {
                s.close();
            }
        }
        return waits;
    }

    private void dropCaches(Path dir) {
        while (issuing.get()) {
            for (int f = 0; f < FILES; f++) {
                try {
                    Posix.fadvise(fds[f], 0, 0, Fadvise.POSIX_FADV_DONTNEED, dir.resolve(names[f]));
                } catch (IOException e) {
                    firstErrors.add("fadvise: " + e);
                }
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }
}
