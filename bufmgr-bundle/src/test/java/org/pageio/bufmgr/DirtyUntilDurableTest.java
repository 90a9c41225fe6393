package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.pageio.api.IoHandle;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.bufmgr.stats.StatIo.IoContext;
import org.pageio.method.fault.FaultInjectingMethod;
import org.pageio.method.fault.FaultPlan;
import org.pageio.method.fault.FaultPlan.Kind;
import org.pageio.method.fault.FaultPlan.Op;
import org.pageio.method.fault.FaultPlan.Rule;
import org.pageio.method.sync.SyncIoMethod;

/**
 * Dirty until durable: a buffer whose last write no good fsync covered yet is not reused for
 * another block. The clock sweep passes over such buffers, and a session that meets only those
 * fsyncs the relation itself, with the checkpoint's rules for a failed fsync; so a failed fsync can
 * always be repaired from shared buffers, however many pages went through a small pool.
 */
class DirtyUntilDurableTest extends PoolTestBase {

    private static final int POOL = 32;

    @Test
    void aCheckpointRepairsAFailedFsyncAfterMorePagesThanThePoolHoldsWereChanged() throws Exception {
        FaultInjectingMethod m = faults(new SyncIoMethod());
        pool(m, small().sharedBuffers(POOL).build());
        SmgrRelation rel = relation(72001, 96);
        pool.checkpoint(); // the load around the pool is durable
        try (BufferSession s = pool.openSession("client")) {
            BufferWriteTest.modify(s, rel, 72001, 1, BufferWriteTest.range(0, 96)); // 96 pages through 32 buffers
        }
        assertTrue(pool.reuseSyncs() > 0, "the sessions fsynced to get written buffers back");
        assertTrue(kindTotal("client", Column.FSYNCS) > 0, "counted as the client's fsyncs in stat_io");
        m.setPlan(FaultPlan.of(Rule.always(Kind.EIO, Op.FSYNC, "pg_default/72001").times(1)));

        pool.checkpoint(); // the fsync fails, every page not yet durable is written again from shared buffers
        assertEquals(1, m.injected(), "the fsync fault fired");
        assertNull(rel.fsyncFailure(), "repaired: every write since the last good fsync was still in shared buffers");
        readBackAfterEviction(rel, 72001, 96, 1);
        try (BufferSession s = pool.openSession("client")) {
            BufferWriteTest.modify(s, rel, 72001, 2, 5); // still changeable
        }
        pool.checkpoint();
        BufferWriteTest.assertOnDisk(rel, 72001, 2, 5);
    }

    @Test
    void aFailedFsyncTheSweepRanIsRepairedByThatSession() throws Exception {
        FaultInjectingMethod m = faults(new SyncIoMethod());
        pool(m, small().sharedBuffers(POOL).build());
        SmgrRelation rel = relation(72002, 96);
        pool.checkpoint();
        m.setPlan(FaultPlan.of(Rule.always(Kind.EIO, Op.FSYNC, "pg_default/72002").times(1)));
        try (BufferSession s = pool.openSession("client")) {
            BufferWriteTest.modify(s, rel, 72002, 1, BufferWriteTest.range(0, 96));
        }
        assertEquals(1, m.injected(), "the first fsync the sweep ran failed");
        assertNull(rel.fsyncFailure(), "the session wrote the pages again and fsynced again");
        pool.checkpoint();
        readBackAfterEviction(rel, 72002, 96, 1);
    }

    @Test
    void aSweepFsyncThatCannotBeRepairedMarksTheRelationAndFreesItsBuffers() throws Exception {
        FaultInjectingMethod m = faults(new SyncIoMethod());
        pool(m, small().sharedBuffers(POOL).build());
        SmgrRelation rel = relation(72003, 96);
        SmgrRelation other = relation(72004, 96);
        pool.checkpoint();
        m.setPlan(FaultPlan.of(Rule.always(Kind.EIO, Op.FSYNC, "pg_default/72003").times(2)));
        try (BufferSession s = pool.openSession("client")) {
            IllegalStateException refused = assertThrows(IllegalStateException.class,
                    () -> modifyReleasing(s, rel, 72003, BufferWriteTest.range(0, 96)));
            assertTrue(refused.getMessage().startsWith("cannot modify relation " + rel.locator() + ": could not fsync file "),
                    refused.getMessage());
        }
        assertEquals(2, m.injected(), "the fsync and the one after writing the pages again");
        assertNotNull(rel.fsyncFailure());
        // Its written buffers can never be made durable: they are reusable, the pool is not shrunk by them.
        scan(other, 72004, 0, 96);
        int held = 0;
        for (int b = 0; b < pool.nbuffers(); b++) {
            long tag = pool.tags[b];
            held += tag >= 0 && BufferPool.tagRelation(tag) == rel.id() ? 1 : 0;
        }
        assertTrue(held < POOL / 2, held + " buffers of the failed relation left");
        assertThrows(org.pageio.api.AioException.class, pool::checkpoint, "the relation stays refused");
    }

    @Test
    void aModifyHeavyLoopOverMorePagesThanThePoolHoldsCompletes() throws Exception {
        TestMethods.Threaded method = new TestMethods.Threaded(2); // completions in other threads
        closeLast.add(method);
        pool(method, small().sharedBuffers(POOL).build());
        int blocks = 48;
        int rounds = 600;
        SmgrRelation[] rels = {relation(72010, blocks), relation(72011, blocks)};
        pool.checkpoint();
        core.startBackgroundWriter(new BgWriterSettings(10, 100, 2.0));
        AtomicBoolean done = new AtomicBoolean();
        AtomicInteger checkpoints = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(rels.length + 1); // each its own thread
        closeLast.add(threads::shutdownNow);
        CompletableFuture<Void> checkpointer = CompletableFuture.runAsync(() -> {
            while (!done.get()) {
                try {
                    pool.checkpoint();
                    checkpoints.incrementAndGet();
                    Thread.sleep(2); // not a busy loop: the modifiers share two cores
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }
        }, threads);
        List<CompletableFuture<int[]>> modifiers = new ArrayList<>();
        for (int t = 0; t < rels.length; t++) {
            SmgrRelation rel = rels[t];
            long number = rel.locator().relNumber();
            int seed = t;
            modifiers.add(CompletableFuture.supplyAsync(() -> {
                int[] generation = new int[blocks];
                Random rnd = new Random(seed);
                try (BufferSession s = pool.openSession("client")) {
                    for (int i = 0; i < rounds; i++) {
                        int b = rnd.nextInt(blocks);
                        int gen = ++generation[b];
                        BufferWriteTest.modify(s, rel, number, gen, b);
                    }
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
                return generation;
            }, threads));
        }
        List<int[]> generations = new ArrayList<>();
        for (CompletableFuture<int[]> f : modifiers) {
            generations.add(f.join());
        }
        done.set(true);
        checkpointer.join();
        core.stopBackgroundWriter();
        pool.checkpoint();
        System.out.println("modify-heavy loop: " + pool.reuseSyncs() + " fsyncs by sessions to reuse buffers, "
                + checkpoints.get() + " checkpoints alongside");

        assertTrue(pool.reuseSyncs() > 0, "sessions fsynced to get written buffers back");
        assertTrue(kindTotal("client", Column.FSYNCS) > 0);
        assertEquals(0, pool.pinnedBuffers());
        for (int t = 0; t < rels.length; t++) {
            int[] generation = generations.get(t);
            try (BufferSession s = pool.openSession("client"); Arena a = Arena.ofConfined()) {
                for (int b = 0; b < blocks; b++) {
                    int buf = s.readBuffer(rels[t], b, null);
                    try {
                        assertEquals(generation[b], WriteTestPages.generation(s.page(buf), rels[t].locator().relNumber(), b,
                                rounds), "block " + b + " of " + rels[t]);
                    } finally {
                        s.releaseBuffer(buf);
                    }
                    assertEquals(generation[b], WriteTestPages.generation(WriteTestPages.readFromDisk(a, rels[t], b),
                            rels[t].locator().relNumber(), b, rounds), "block " + b + " of " + rels[t] + " on disk");
                }
            }
        }
    }

    @Test
    void evictAllFsyncsWrittenPagesBeforeItDropsThem() throws Exception {
        pool(new SyncIoMethod(), small().sharedBuffers(64).build());
        SmgrRelation rel = relation(72020, 20);
        pool.checkpoint();
        long fsyncs = total(Column.FSYNCS);
        try (BufferSession s = pool.openSession("client")) {
            BufferWriteTest.modify(s, rel, 72020, 1, BufferWriteTest.range(0, 20));
            BufferPool.EvictAllResult r = pool.evictAll(s);
            assertEquals(20, r.flushed());
            assertEquals(20, r.evicted(), r.toString());
            assertEquals(0, r.skipped(), r.toString());
        }
        assertEquals(0, pool.mappedBlocks());
        assertEquals(1, pool.reuseSyncs(), "one fsync of the relation before its pages left");
        assertEquals(fsyncs + 1, total(Column.FSYNCS));
        BufferWriteTest.assertOnDisk(rel, 72020, 1, BufferWriteTest.range(0, 20));
    }

    @Test
    void droppingARelationDropsItsWrittenPagesWithoutAnFsync() throws Exception {
        pool(new SyncIoMethod(), small().sharedBuffers(64).build());
        SmgrRelation rel = relation(72030, 10);
        pool.checkpoint();
        long fsyncs = total(Column.FSYNCS);
        try (BufferSession s = pool.openSession("client")) {
            BufferWriteTest.modify(s, rel, 72030, 1, BufferWriteTest.range(0, 10));
            for (int b = 0; b < pool.nbuffers(); b++) {
                if (s.writer().writeBack(b, IoContext.NORMAL) != IoHandle.NO_WAIT_REF) {
                    s.io().drain();
                }
            }
            int unsynced = 0;
            for (int b = 0; b < pool.nbuffers(); b++) {
                unsynced += pool.isUnsynced(b) ? 1 : 0;
            }
            assertEquals(10, unsynced, "written, not yet durable");
            assertEquals(10, s.dropRelationBuffers(rel));
        }
        assertEquals(0, pool.mappedBlocks());
        assertFalse(hasUnsynced(), "no buffer keeps the mark once its page is dropped");
        assertEquals(fsyncs, total(Column.FSYNCS), "nothing fsynced for a relation going away");
        assertEquals(0, pool.reuseSyncs());
    }

    /** {@link BufferWriteTest#modify} to generation 1, releasing the buffer when the change is refused too. */
    private static void modifyReleasing(BufferSession s, SmgrRelation rel, long number, long... blocks) throws Exception {
        for (long b : blocks) {
            int buf = s.readBuffer(rel, b, null);
            try {
                s.beginModify(buf);
                WriteTestPages.fill(s.page(buf), number, b, 1);
                s.endModify(buf, true);
            } finally {
                s.releaseBuffer(buf);
            }
        }
    }

    private boolean hasUnsynced() {
        for (int b = 0; b < pool.nbuffers(); b++) {
            if (pool.isUnsynced(b)) {
                return true;
            }
        }
        return false;
    }

    /** Drops every buffer, then reads every page back through the pool and from the file. */
    private void readBackAfterEviction(SmgrRelation rel, long number, int blocks, int gen) throws Exception {
        try (BufferSession s = pool.openSession("client")) {
            BufferPool.EvictAllResult r = pool.evictAll(s);
            assertEquals(0, r.skipped(), r.toString());
            assertEquals(0, pool.mappedBlocks(), "every page left shared buffers");
            for (long b = 0; b < blocks; b++) {
                int buf = s.readBuffer(rel, b, null);
                try {
                    assertNull(WriteTestPages.verify(s.page(buf), b), "block " + b);
                    assertEquals(gen, WriteTestPages.generation(s.page(buf), number, b, gen), "block " + b);
                } finally {
                    s.releaseBuffer(buf);
                }
            }
        }
        BufferWriteTest.assertOnDisk(rel, number, gen, BufferWriteTest.range(0, blocks));
    }

    private long kindTotal(String kind, Column c) {
        long n = 0;
        for (StatIo.Row r : pool.stats().rows()) {
            if (r.kind().equals(kind)) {
                n += r.value(c);
            }
        }
        return n;
    }
}
