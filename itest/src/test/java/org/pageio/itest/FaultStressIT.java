package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.Test;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.itest.kit.FaultRig;
import org.pageio.itest.kit.PatternRelation;
import org.pageio.method.fault.FaultPlan;

/**
 * Stress with faults on, over every method here: several sessions per core doing random single
 * reads and sequential streams over two relations 50 times larger than a tiny shared_buffers
 * (constant eviction) for a bounded time, while the decorator delays, reorders, shortens and
 * fails a fraction of the reads. Every byte of every page returned is checked against
 * {@link PatternRelation}; every error must name its relation and block, and the reader retries.
 * Zero wrong bytes, zero hangs, nothing leaked, and stat_io's reads equal the I/Os the method saw.
 */
public class FaultStressIT extends EveryMethodTestBase {

    static final long SECONDS_PER_METHOD = Long.getLong("pageio.stress.seconds", 5);
    static final int SESSIONS = 3 * Math.max(2, Runtime.getRuntime().availableProcessors());
    static final int SHARED_BUFFERS = 64;
    static final int BLOCKS = 1600; // 12.5 MiB per relation, 50x shared_buffers for the two

    static final String[] FAULTS = {
        "delay read delay=1 fraction=0.02",
        "reorder read fraction=0.2",
        "short_read read fraction=0.03",
        "eio read fraction=0.01",
    };

    @Test
    public void sync() throws Exception {
        stress(sync);
    }

    @Test
    public void worker() throws Exception {
        stress(worker);
    }

    @Test
    public void ioUring() throws Exception {
        stress(uring);
    }

    @Test
    public void direct() throws Exception {
        stress(direct);
    }

    final AtomicLong pagesChecked = new AtomicLong();
    final AtomicLong wrongBytes = new AtomicLong();
    final AtomicLong errorsReported = new AtomicLong();
    final ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();

    void stress(IoMethod delegate) throws Exception {
        String name = delegate.name();
        assertTrue("io_method=" + name + " must be available here: " + delegate.availability().cause(),
                delegate.availability().available());
        pagesChecked.set(0);
        wrongBytes.set(0);
        errorsReported.set(0);
        problems.clear();
        try (FaultRig rig = new FaultRig(delegate, FaultPlan.parse(FAULTS),
                FaultRig.small().sharedBuffers(SHARED_BUFFERS).maxSessions(SESSIONS + 1).segmentBlocks(500).build())) {
            SmgrRelation[] rels = {rig.relation(63000, BLOCKS), rig.relation(63001, BLOCKS)};
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SECONDS_PER_METHOD);
            // The probe imports pageio's packages dynamically: resolve the stream package here, once,
            // rather than from six session threads at the same moment; Felix's class loading of a
            // bundle wiring is not locked (apache/felix-dev#341), and the concurrent first use once
            // failed with ClassNotFoundException for ReadStream in every session.
            java.util.Objects.requireNonNull(ReadStream.class.getName());
            ExecutorService pool = Executors.newFixedThreadPool(SESSIONS);
            List<Future<?>> all = new ArrayList<>();
            try {
                for (int i = 0; i < SESSIONS; i++) {
                    int seed = i;
                    all.add(pool.submit(() -> {
                        if (seed % 2 == 0) {
                            randomReads(rig, rels, seed, deadline);
                        } else {
                            scans(rig, rels, seed, deadline);
                        }
                        return null;
                    }));
                }
                for (Future<?> f : all) {
                    try {
                        f.get(SECONDS_PER_METHOD + 60, TimeUnit.SECONDS);
                    } catch (TimeoutException e) {
                        throw new AssertionError("io_method=" + name + ": a session hung; aios " + rig.aio.snapshot());
                    }
                }
            } finally {
                pool.shutdownNow();
            }
            long reads = rig.total(Column.READS);
            long seen = rig.method.injected() + rig.method.passed();
            String summary = "io_method=" + name + ": " + SESSIONS + " sessions, " + pagesChecked.get() + " pages checked, "
                    + wrongBytes.get() + " wrong bytes, " + errorsReported.get() + " errors reported and retried, "
                    + rig.method.injected() + " faults injected, stat_io reads " + reads + ", I/Os the method saw " + seen
                    + ", evictions " + rig.total(Column.EVICTIONS) + "; problems " + problems;
            System.out.println("FaultStressIT: " + summary);
            assertEquals(summary, 0, wrongBytes.get());
            assertTrue(summary, problems.isEmpty());
            assertEquals("counters add up: " + summary, seen, reads);
            assertTrue("faults were injected: " + summary, rig.method.injected() > 50);
            assertTrue("eviction was constant: " + summary, rig.total(Column.EVICTIONS) > 1000);
            rig.assertNothingLeaked();
        }
    }

    private void check(long rel, long block, BufferSession s, int buf) {
        int wrong = PatternRelation.wrongBytes(rel, block, s.page(buf));
        pagesChecked.incrementAndGet();
        if (wrong != 0) {
            wrongBytes.addAndGet(wrong);
            problems.add(wrong + " wrong bytes in block " + block + " of relation " + rel);
        }
    }

    /** An error must name the relation and say what failed; anything else is a problem. */
    private void reported(IOException e, long rel) {
        errorsReported.incrementAndGet();
        String m = String.valueOf(e.getMessage());
        if (!m.contains("pg_default/" + rel) || !m.contains("block") || !(m.contains("EIO") || m.contains("read only"))
                || m.lines().count() != 1) {
            problems.add("unclear error: " + m);
        }
    }

    private void randomReads(FaultRig rig, SmgrRelation[] rels, int seed, long deadline) {
        Random rnd = new Random(seed);
        try (BufferSession s = rig.pool.openSession("random-" + seed)) {
            while (System.nanoTime() < deadline) {
                SmgrRelation rel = rels[rnd.nextInt(rels.length)];
                long relNumber = rel.locator().relNumber();
                long b = rnd.nextInt(BLOCKS);
                for (int attempt = 0; ; attempt++) {
                    try {
                        int buf = s.readBuffer(rel, b, null);
                        check(relNumber, b, s, buf);
                        s.releaseBuffer(buf);
                        break;
                    } catch (IOException e) {
                        reported(e, relNumber);
                        if (!e.getMessage().contains("block " + b)) {
                            problems.add("error for block " + b + " names another block: " + e.getMessage());
                        }
                        if (attempt > 20) {
                            problems.add("block " + b + " never read after 20 retries: " + e.getMessage());
                            break;
                        }
                    }
                }
            }
            if (s.pinnedCount() != 0) {
                problems.add("session random-" + seed + " still pins " + s.pinnedCount());
            }
        }
    }

    private void scans(FaultRig rig, SmgrRelation[] rels, int seed, long deadline) {
        Random rnd = new Random(seed);
        try (BufferSession s = rig.pool.openSession("scan-" + seed)) {
            while (System.nanoTime() < deadline) {
                SmgrRelation rel = rels[rnd.nextInt(rels.length)];
                long relNumber = rel.locator().relNumber();
                long b = rnd.nextInt(BLOCKS - 300);
                long end = b + 300;
                int restarts = 0;
                while (b < end && restarts < 50) {
                    try (ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(b, end - b), 0, null)) {
                        for (; b < end; b++) {
                            int buf = stream.next();
                            check(relNumber, b, s, buf);
                            s.releaseBuffer(buf);
                        }
                    } catch (IOException e) {
                        reported(e, relNumber);
                        restarts++; // the block that failed is read again by the next stream
                    }
                }
                if (b < end) {
                    problems.add("scan of relation " + relNumber + " stuck at block " + b);
                }
            }
            s.io().drain();
            if (s.pinnedCount() != 0) {
                problems.add("session scan-" + seed + " still pins " + s.pinnedCount());
            }
        }
    }
}
