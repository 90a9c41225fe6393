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
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.Test;
import org.pageio.api.AioContext;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.method.fault.FaultPlan;
import org.pageio.tck.FaultRig;
import org.pageio.tck.PatternRelation;

/**
 * Stress with faults on, over every method here: several sessions per core doing random single
 * reads and sequential streams over two relations 50 times larger than a tiny shared_buffers
 * (constant eviction) for a bounded time, while the decorator delays, reorders, shortens and
 * fails a fraction of the reads. Every byte of every page returned is checked against
 * {@link PatternRelation}; every error must name its relation and block, and the reader retries.
 * Zero wrong bytes, zero hangs, nothing leaked, and stat_io's reads equal the I/Os the method saw.
 * Then, per method, the write side ({@link #writeStress}): sessions changing pages and a
 * checkpointer under EIO, ENOSPC, short, torn and reordered writes, slow fsyncs and one failed
 * fsync; no acknowledged change is lost.
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

    @Test
    public void posixAio() throws Exception {
        stress(posixAio);
    }

    @Test
    public void syncWriteFaults() throws Exception {
        writeStress(sync);
    }

    @Test
    public void workerWriteFaults() throws Exception {
        writeStress(worker);
    }

    @Test
    public void ioUringWriteFaults() throws Exception {
        writeStress(uring);
    }

    @Test
    public void directWriteFaults() throws Exception {
        writeStress(direct);
    }

    @Test
    public void posixAioWriteFaults() throws Exception {
        writeStress(posixAio);
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

    // ------------------------------------------------------------------ write faults

    static final long WRITE_SECONDS = Long.getLong("pageio.stress.write.seconds", 3);
    static final int WRITE_BLOCKS = 200;
    static final long[] WRITE_RELS = {63100, 63101};
    /** Torn writes only start in blocks 0..TORN_LAST of the second relation: only such pages may be torn. */
    static final int TORN_LAST = 39;

    static final String[] WRITE_FAULTS = {
        "torn_write file=pg_default/63101 blocks=0-" + TORN_LAST + " fraction=0.02",
        "eio write fraction=0.03",
        "enospc write fraction=0.03",
        "short_write fraction=0.03",
        "reorder write fraction=0.1",
        "delay fsync delay=5 fraction=0.3",
    };

    /**
     * Write faults over {@code delegate}: one session per partition of the pages of two relations
     * reads each page it owns, checks it holds the generation it last wrote, and writes the next
     * (so every page leaves shared buffers and comes back through eviction, write-back and failed
     * writes), while a checkpointer checkpoints; the decorator fails writes with EIO and ENOSPC,
     * shortens and tears them, reorders them and slows fsyncs. A checkpoint that reports success
     * acknowledges every change completed before it began. Then one failed fsync (twice, so the
     * repair from shared buffers fails too): the checkpoint fails naming file and errno, the
     * relation refuses changes, and no later checkpoint reports it durable. Then the faults are
     * switched off and shared buffers emptied: every page reads back its last generation (so no
     * acknowledged change is lost); a page a torn write hit may instead fail its checksum, named.
     */
    void writeStress(IoMethod delegate) throws Exception {
        String name = delegate.name();
        assertTrue("io_method=" + name + " must be available here: " + delegate.availability().cause(),
                delegate.availability().available());
        errorsReported.set(0);
        problems.clear();
        long hangs0 = AioContext.hangWarnings();
        AtomicLong modifications = new AtomicLong();
        AtomicLong checkpointsOk = new AtomicLong();
        AtomicLong checkpointsFailed = new AtomicLong();
        AtomicLong tornSeen = new AtomicLong();
        int writers = SESSIONS;
        // Failed writes of eviction's write-back are logged by their completion (nobody may wait for
        // them): each WARNING must name relation, blocks and errno as any other failure.
        java.util.logging.Logger bufmgrLog = java.util.logging.Logger.getLogger("org.pageio.bufmgr");
        java.util.logging.Handler logged = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord r) {
                String m = String.valueOf(r.getMessage());
                if (r.getLevel() == java.util.logging.Level.WARNING && m.startsWith("could not write ")) {
                    writeFailureNamed("write-back", new IOException(m));
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        bufmgrLog.addHandler(logged);
        try (FaultRig rig = new FaultRig(delegate, FaultPlan.parse(WRITE_FAULTS),
                FaultRig.small().sharedBuffers(SHARED_BUFFERS).maxSessions(writers + 3).segmentBlocks(500).build())) {
            SmgrRelation[] rels = {rig.relation(WRITE_RELS[0], WRITE_BLOCKS), rig.relation(WRITE_RELS[1], WRITE_BLOCKS)};
            AtomicIntegerArray[] latest = {new AtomicIntegerArray(WRITE_BLOCKS), new AtomicIntegerArray(WRITE_BLOCKS)};
            AtomicIntegerArray[] torn = {new AtomicIntegerArray(WRITE_BLOCKS), new AtomicIntegerArray(WRITE_BLOCKS)};
            int[][] acked = new int[2][WRITE_BLOCKS]; // the checkpointer's, read after it ended
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WRITE_SECONDS);
            java.util.Objects.requireNonNull(ReadStream.class.getName()); // see stress(): resolve the package once
            ExecutorService pool = Executors.newFixedThreadPool(writers + 1);
            List<Future<?>> all = new ArrayList<>();
            try {
                for (int i = 0; i < writers; i++) {
                    int me = i;
                    all.add(pool.submit(() -> {
                        Random rnd = new Random(me);
                        try (BufferSession s = rig.pool.openSession("writer-" + me)) {
                            while (System.nanoTime() < deadline) {
                                int r = rnd.nextInt(2);
                                long b = me + (long) writers * rnd.nextInt((WRITE_BLOCKS - me + writers - 1) / writers);
                                if (torn[r].get((int) b) == 0
                                        && modify(s, rels[r], b, latest[r], torn[r])) {
                                    modifications.incrementAndGet();
                                }
                            }
                            if (s.pinnedCount() != 0) {
                                problems.add("session writer-" + me + " still pins " + s.pinnedCount());
                            }
                        }
                        return null;
                    }));
                }
                all.add(pool.submit(() -> {
                    while (System.nanoTime() < deadline || checkpointsOk.get() + checkpointsFailed.get() < 3) {
                        int[][] before = {snapshot(latest[0]), snapshot(latest[1])}; // changes completed before it began
                        try {
                            rig.pool.checkpoint();
                            checkpointsOk.incrementAndGet();
                            for (int r = 0; r < 2; r++) {
                                for (int b = 0; b < WRITE_BLOCKS; b++) {
                                    acked[r][b] = Math.max(acked[r][b], before[r][b]);
                                }
                            }
                        } catch (IOException | RuntimeException e) {
                            checkpointsFailed.incrementAndGet();
                            writeFailureNamed("checkpoint", e);
                        }
                        Thread.sleep(100);
                    }
                    return null;
                }));
                for (Future<?> f : all) {
                    try {
                        f.get(WRITE_SECONDS + 60, TimeUnit.SECONDS);
                    } catch (TimeoutException e) {
                        throw new AssertionError("io_method=" + name + ": a session hung; aios " + rig.aio.snapshot());
                    }
                }
            } finally {
                pool.shutdownNow();
            }
            long injected = rig.method.injected();

            // One fsync failure on the first relation, twice: the repair's fsync fails as well. The
            // plan comes after the changes: a session that needs buffers may fsync the relation
            // itself to reuse them, and would then take the failures before the checkpoint does.
            try (BufferSession s = rig.pool.openSession("fsync")) {
                for (long b = 0; b < 4; b++) {
                    modify(s, rels[0], b, latest[0], torn[0]);
                }
            }
            rig.method.setPlan(FaultPlan.parse("eio fsync file=pg_default/" + WRITE_RELS[0] + " times=2"));
            String fsyncPrefix = "could not fsync file " + rels[0].segmentPath(0) + ": EIO";
            String failed = checkpointFailure(rig.pool);
            assertTrue("io_method=" + name + ": the failed fsync fails the checkpoint: " + failed, failed != null
                    && failed.contains(fsyncPrefix) && failed.contains("relation pg_default/" + WRITE_RELS[0] + " is not durable"));
            rig.method.setPlan(FaultPlan.none());
            try (BufferSession s = rig.pool.openSession("refused")) {
                int buf = s.readBuffer(rels[0], 5, null);
                try {
                    s.beginModify(buf);
                    s.endModify(buf, false);
                    problems.add("a page of relation " + WRITE_RELS[0] + " was modified after its fsync failed");
                } catch (IllegalStateException e) {
                    if (!e.getMessage().startsWith("cannot modify relation pg_default/" + WRITE_RELS[0] + ": " + fsyncPrefix)) {
                        problems.add("unclear refusal: " + e.getMessage());
                    }
                } finally {
                    s.releaseBuffer(buf);
                }
            }
            String again = checkpointFailure(rig.pool);
            assertTrue("io_method=" + name + ": never reported durable afterwards: " + again,
                    again != null && again.contains(fsyncPrefix));

            // Faults off, shared buffers emptied (dirty ones written first): every page from the files.
            long ackedPages = 0;
            long verified = 0;
            try (BufferSession s = rig.pool.openSession("verify")) {
                BufferPool.EvictAllResult ev = rig.pool.evictAll(s);
                assertEquals("io_method=" + name + ": nothing stays in shared buffers: " + ev, 0, ev.skipped());
                assertEquals(0, rig.pool.dirtyBuffers());
                for (int r = 0; r < 2; r++) {
                    long relNumber = WRITE_RELS[r];
                    for (int b = 0; b < WRITE_BLOCKS; b++) {
                        boolean mayBeTorn = r == 1 && b <= TORN_LAST;
                        ackedPages += acked[r][b] > 0 ? 1 : 0;
                        int gen;
                        try {
                            int buf = s.readBuffer(rels[r], b, null);
                            gen = PatternRelation.generation(relNumber, b, s.page(buf));
                            s.releaseBuffer(buf);
                        } catch (IOException e) {
                            if (mayBeTorn && tornMessage(e, relNumber, b)) {
                                tornSeen.incrementAndGet();
                                continue; // the decorator's lie, named by the checksum; never read as good
                            }
                            problems.add("block " + b + " of relation " + relNumber + " unreadable: " + e.getMessage());
                            continue;
                        }
                        verified++;
                        if (gen < acked[r][b]) {
                            problems.add("acknowledged write lost: block " + b + " of relation " + relNumber + " reads generation "
                                    + gen + ", a checkpoint reported generation " + acked[r][b] + " durable");
                        } else if (gen != latest[r].get(b)) {
                            problems.add("block " + b + " of relation " + relNumber + " reads generation " + gen + ", last written "
                                    + latest[r].get(b));
                        }
                    }
                }
            }
            String summary = "io_method=" + name + ": " + writers + " writers, " + modifications.get() + " changes, "
                    + checkpointsOk.get() + " checkpoints reported success, " + checkpointsFailed.get() + " failed, "
                    + injected + " write faults injected, " + errorsReported.get() + " failures named, " + tornSeen.get()
                    + " torn pages caught, " + ackedPages + " acknowledged pages, " + verified + " pages read back, evictions "
                    + rig.total(Column.EVICTIONS) + ", writes " + rig.total(Column.WRITES) + "; problems " + problems;
            System.out.println("FaultStressIT: " + summary);
            assertTrue(summary, problems.isEmpty());
            assertTrue("write faults were injected: " + summary, injected > 20);
            assertTrue("checkpoints acknowledged changes: " + summary, checkpointsOk.get() > 0 && ackedPages > 0);
            assertTrue("pages left shared buffers through write-back: " + summary, rig.total(Column.EVICTIONS) > 100);
            assertTrue("failed writes were reported: " + summary, errorsReported.get() > 0);
            assertEquals("io_hang_warning: " + summary, hangs0, AioContext.hangWarnings());
            rig.assertNothingLeaked();
        } finally {
            bufmgrLog.removeHandler(logged);
        }
    }

    /**
     * Reads block {@code b}, checks it holds the generation last written, writes the next one.
     * Returns whether it did; a page torn on disk (named by its checksum) is marked in {@code torn}.
     */
    private boolean modify(BufferSession s, SmgrRelation rel, long b, AtomicIntegerArray latest, AtomicIntegerArray torn) {
        long relNumber = rel.locator().relNumber();
        int buf;
        try {
            buf = s.readBuffer(rel, b, null);
        } catch (IOException e) {
            if (relNumber == WRITE_RELS[1] && b <= TORN_LAST && tornMessage(e, relNumber, b)) {
                torn.set((int) b, 1); // unreadable, so never changed again: it stays torn
            } else {
                writeFailureNamed("read of block " + b, e);
            }
            return false;
        }
        try {
            int gen = PatternRelation.generation(relNumber, b, s.page(buf));
            if (gen != latest.get((int) b)) {
                problems.add("block " + b + " of relation " + relNumber + " read back generation " + gen + ", last written "
                        + latest.get((int) b));
                return false;
            }
            s.beginModify(buf);
            try {
                PatternRelation.fillGeneration(relNumber, b, gen + 1, s.page(buf));
            } finally {
                s.endModify(buf, true);
            }
            latest.set((int) b, gen + 1); // after endModify: a checkpoint that begins later must write it
            return true;
        } finally {
            s.releaseBuffer(buf);
        }
    }

    private static boolean tornMessage(IOException e, long relNumber, long b) {
        String m = String.valueOf(e.getMessage());
        return m.startsWith("invalid page in block " + b + " of relation pg_default/" + relNumber) && m.contains("checksum");
    }

    /** A failure must be one line naming the relation, a block or file, and the errno. */
    private void writeFailureNamed(String what, Throwable e) {
        errorsReported.incrementAndGet();
        String m = String.valueOf(e.getMessage());
        if (!m.contains("pg_default/631") || !(m.contains("block") || m.contains("file")) || !(m.contains("EIO")
                || m.contains("ENOSPC")) || m.lines().count() != 1) {
            problems.add(what + ": unclear failure: " + e);
        }
    }

    /** The checkpoint's failure message, or null when it reported success. */
    private static String checkpointFailure(BufferPool pool) {
        try {
            pool.checkpoint();
            return null;
        } catch (IOException | RuntimeException e) {
            return String.valueOf(e.getMessage());
        }
    }

    private static int[] snapshot(AtomicIntegerArray a) {
        int[] s = new int[a.length()];
        for (int i = 0; i < s.length; i++) {
            s[i] = a.get(i);
        }
        return s;
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
