package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.pageio.api.AioException;
import org.pageio.api.AioHandleInfo;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.method.fault.FaultInjectingMethod;
import org.pageio.method.fault.FaultPlan.Kind;
import org.pageio.method.fault.FaultPlan.Op;
import org.pageio.method.fault.FaultPlan.Rule;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;

/**
 * Writes: modifying pages under the content lock, asynchronous combined write-back,
 * checkpoints (file order, fsync, failure), eviction of dirty victims, write errors kept and
 * retried, relation extension, the background writer. Every check reads the files back.
 */
class BufferWriteTest extends PoolTestBase {

    /** Reads, modifies to generation {@code gen} and releases each block of {@code blocks}. */
    static void modify(BufferSession s, SmgrRelation rel, long relNumber, int gen, long... blocks) throws Exception {
        for (long b : blocks) {
            int buf = s.readBuffer(rel, b, null);
            s.beginModify(buf);
            WriteTestPages.fill(s.page(buf), relNumber, b, gen);
            s.endModify(buf, true);
            s.releaseBuffer(buf);
        }
    }

    static long[] range(long from, long to) {
        long[] r = new long[(int) (to - from)];
        for (int i = 0; i < r.length; i++) {
            r[i] = from + i;
        }
        return r;
    }

    /** Asserts every listed block on disk passes its checksum and holds generation {@code gen}. */
    static void assertOnDisk(SmgrRelation rel, long relNumber, int gen, long... blocks) throws Exception {
        try (Arena a = Arena.ofConfined()) {
            for (long b : blocks) {
                MemorySegment page = WriteTestPages.readFromDisk(a, rel, b);
                assertNull(WriteTestPages.verify(page, b), "block " + b);
                assertEquals(gen, WriteTestPages.generation(page, relNumber, b, 3), "generation of block " + b);
            }
        }
    }

    long kindTotal(String kind, Column c) {
        long n = 0;
        for (StatIo.Row r : pool.stats().rows()) {
            if (r.kind().equals(kind)) {
                n += r.value(c);
            }
        }
        return n;
    }

    @Test
    void checkpointWritesDirtyBuffersCombinedInFileOrderThenFsyncs() throws Exception {
        TestMethods.Recording m = new TestMethods.Recording();
        pool(m, small().trackIoTiming(true).build());
        SmgrRelation rel = relation(71000, 64);
        List<Long> dirty = new ArrayList<>();
        try (BufferSession s = pool.openSession("client")) {
            for (long b = 39; b >= 0; b--) { // modified backwards: the checkpoint sorts
                if (b != 20) {
                    modify(s, rel, 71000, 1, b);
                    dirty.add(b);
                }
            }
        }
        assertEquals(39, pool.dirtyBuffers());
        assertOnDisk(rel, 71000, 0, 5, 39); // nothing written before the checkpoint
        m.ios.clear();
        CheckpointResult r = pool.checkpoint();
        assertEquals(39, r.buffersWritten());
        assertEquals(4, r.writes(), "0..15, 16..19, 21..36, 37..39 with io_combine_limit 16");
        assertEquals(1, r.filesSynced());
        assertTrue(r.toString().startsWith("checkpoint complete: wrote 39 buffers"), r.toString());
        assertEquals(0, pool.dirtyBuffers());
        List<TestMethods.Recording.Io> ios = m.ios;
        assertEquals(5, ios.size(), ios.toString());
        long[] offsets = {0, 16 * 8192L, 21 * 8192L, 37 * 8192L};
        long[] lengths = {16 * 8192L, 4 * 8192L, 16 * 8192L, 3 * 8192L};
        for (int i = 0; i < 4; i++) {
            assertEquals(offsets[i], ios.get(i).offset(), "write " + i + " in file order");
            assertEquals(lengths[i], ios.get(i).length(), "write " + i + " combined");
        }
        assertEquals(0, ios.get(4).length(), "the fsync comes last");
        assertEquals(4, kindTotal("checkpointer", Column.WRITES));
        assertEquals(39 * 8192L, kindTotal("checkpointer", Column.WRITE_BYTES));
        assertEquals(1, kindTotal("checkpointer", Column.FSYNCS));
        assertTrue(kindTotal("checkpointer", Column.WRITE_TIME) > 0);
        assertOnDisk(rel, 71000, 1, dirty.stream().mapToLong(Long::longValue).toArray());
        assertOnDisk(rel, 71000, 0, 20, 40, 63);
        // a second checkpoint has nothing to write and nothing to fsync
        CheckpointResult again = pool.checkpoint();
        assertEquals(0, again.buffersWritten());
        assertEquals(0, again.filesSynced());
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void droppingARelationDropsItsBuffersDiscardingDirtyOnesAndItsFsyncs() throws Exception {
        TestMethods.Recording m = new TestMethods.Recording();
        pool(m, small().build());
        SmgrRelation gone = relation(71100, 64);
        SmgrRelation kept = relation(71101, 64);
        try (BufferSession s = pool.openSession("client")) {
            modify(s, gone, 71100, 1, range(0, 10));
            for (long b = 10; b < 20; b++) {
                s.releaseBuffer(s.readBuffer(gone, b, null)); // clean, cached
            }
            modify(s, kept, 71101, 1, range(0, 5));
            gone.registerDirtySegment(0); // as a write since the last checkpoint would have
            assertEquals(15, pool.dirtyBuffers());
            int mapped = pool.mappedBlocks();
            m.ios.clear();
            long reads = total(Column.READS);
            // another session pins a block of the dropped relation for a while: the drop waits for it
            java.util.concurrent.CountDownLatch pinned = new java.util.concurrent.CountDownLatch(1);
            Thread holder = Thread.ofPlatform().start(() -> {
                try (BufferSession o = pool.openSession("client")) {
                    int buf = o.readBuffer(gone, 12, null);
                    pinned.countDown();
                    Thread.sleep(300);
                    o.releaseBuffer(buf);
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            pinned.await();
            long t0 = System.nanoTime();
            assertEquals(20, s.dropRelationBuffers(gone));
            assertTrue(System.nanoTime() - t0 > 200_000_000L, "waited for the other session's pin");
            holder.join();
            assertEquals(mapped - 20, pool.mappedBlocks());
            assertEquals(5, pool.dirtyBuffers(), "only the kept relation's buffers stay dirty");
            assertTrue(m.ios.isEmpty(), "nothing written by the drop: " + m.ios);
            assertEquals(0, total(Column.WRITES), "nothing written by the drop");
            assertOnDisk(gone, 71100, 0, range(0, 20)); // the dirty pages were discarded, not written
            // a read after the drop goes to the file again (a miss), not to a stale buffer
            int buf = s.readBuffer(gone, 3, null);
            assertEquals(0, WriteTestPages.generation(s.page(buf), 71100, 3, 3));
            s.releaseBuffer(buf);
            assertEquals(reads + 1, total(Column.READS), "one read from the file");
        }
        CheckpointResult r = pool.checkpoint();
        assertEquals(5, r.buffersWritten(), "only the kept relation's buffers are written");
        assertEquals(1, r.filesSynced(), "the dropped relation's fsync request was forgotten");
        assertOnDisk(kept, 71101, 1, range(0, 5));
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void dirtyVictimsAreWrittenBackWhenEvicted() throws Exception {
        TestMethods.Threaded threaded = new TestMethods.Threaded(2);
        closeLast.add(threaded);
        pool(threaded, small().sharedBuffers(48).build());
        SmgrRelation rel = relation(71001, 300);
        try (BufferSession s = pool.openSession("client")) {
            modify(s, rel, 71001, 1, range(0, 300));
        }
        assertTrue(pool.dirtyBuffers() <= 48);
        assertTrue(kindTotal("client", Column.WRITES) > 0, "eviction wrote dirty victims");
        pool.checkpoint();
        assertOnDisk(rel, 71001, 1, range(0, 300));
        assertEquals(0, pool.pinnedBuffers());
        // and read back through the pool, after eviction by another relation's scan
        scan(relation(71002, 100), 71002, 0, 100);
        try (BufferSession s = pool.openSession("client"); Arena a = Arena.ofConfined()) {
            for (long b = 0; b < 300; b += 7) {
                int buf = s.readBuffer(rel, b, null);
                assertEquals(1, WriteTestPages.generation(s.page(buf), 71001, b, 1));
                s.releaseBuffer(buf);
            }
        }
    }

    @Test
    void aWriteErrorKeepsTheBufferDirtyAndTheCheckpointRetriesIt() throws Exception {
        FaultInjectingMethod m = faults(new SyncIoMethod(), Rule.blocks(Kind.EIO, Op.WRITE, "pg_default/71003", 5, 1).times(1));
        pool(m, small().build());
        SmgrRelation rel = relation(71003, 10);
        try (BufferSession s = pool.openSession("client")) {
            modify(s, rel, 71003, 1, range(0, 10));
        }
        CheckpointResult r = pool.checkpoint();
        assertEquals(1, m.injected());
        assertTrue(r.buffersWritten() > 10, "the failed write was retried: " + r);
        assertEquals(0, pool.dirtyBuffers());
        assertOnDisk(rel, 71003, 1, range(0, 10));
    }

    @Test
    void aPersistentWriteErrorFailsTheCheckpointNamingRelationBlockAndErrno() throws Exception {
        TestMethods.Threaded threaded = new TestMethods.Threaded(2);
        closeLast.add(threaded);
        FaultInjectingMethod m = faults(threaded, Rule.blocks(Kind.ENOSPC, Op.WRITE, "pg_default/71004", 7, 1));
        pool(m, small().build());
        SmgrRelation rel = relation(71004, 10);
        try (BufferSession s = pool.openSession("client")) {
            modify(s, rel, 71004, 1, range(0, 10));
        }
        AioException e = assertThrows(AioException.class, pool::checkpoint);
        assertEquals(Errno.ENOSPC, e.errno());
        assertTrue(e.getMessage().startsWith("checkpoint failed: could not write block 7 of relation pg_default/71004")
                && e.getMessage().contains("ENOSPC"), e.getMessage());
        assertEquals(1, pool.dirtyBuffers(), "block 7 stays dirty, the rest were written");
        assertOnDisk(rel, 71004, 1, 0, 1, 2, 3, 4, 5, 6, 8, 9);
        assertOnDisk(rel, 71004, 0, 7);
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void aFailedFsyncFailsTheCheckpointAndEveryLaterOneWithTheSegmentStillOwed() throws Exception {
        TestMethods.FailingFsyncs m = new TestMethods.FailingFsyncs(1);
        pool(m, small().build());
        SmgrRelation rel = relation(71005, 4);
        try (BufferSession s = pool.openSession("client")) {
            modify(s, rel, 71005, 1, 2);
        }
        AioException e = assertThrows(AioException.class, pool::checkpoint);
        assertTrue(e.getMessage().startsWith("checkpoint failed: could not fsync file ") && e.getMessage().contains("EIO"),
                e.getMessage());
        // The method would fsync fine now, but a success after a failure may be a lie: refused again.
        AioException again = assertThrows(AioException.class, pool::checkpoint);
        assertEquals(e.getMessage(), again.getMessage());
        assertEquals(1, rel.takeDirtySegments().length, "the segment is still owed its fsync");
    }

    @Test
    void extendByReservesTheSpaceAndTheCheckpointWritesTheNewPages() throws Exception {
        pool(new SyncIoMethod(), small().segmentBlocks(32).build());
        SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 71006));
        int[] bufs = new int[24];
        try (BufferSession s = pool.openSession("loader")) {
            for (int step : new int[] {24, 16}) {
                long first = s.extendBy(rel, step, bufs, null);
                for (int i = 0; i < step; i++) {
                    s.beginModify(bufs[i]);
                    WriteTestPages.fill(s.page(bufs[i]), 71006, first + i, 1);
                    s.endModify(bufs[i], true);
                    s.releaseBuffer(bufs[i]);
                }
            }
        }
        assertEquals(40, rel.nblocks(), "space reserved in the files (two segments of 32)");
        assertEquals(2, kindTotal("loader", Column.EXTENDS));
        assertEquals(40 * 8192L, kindTotal("loader", Column.EXTEND_BYTES));
        CheckpointResult r = pool.checkpoint();
        assertEquals(2, r.filesSynced());
        assertEquals(3, r.writes(), "0..15, 16..31 (segment end), 32..39");
        assertOnDisk(rel, 71006, 1, range(0, 40));
    }

    /** Holds every write until released; reads and fsyncs run at once, on a thread. */
    static final class GatedWrites implements IoMethod, AutoCloseable {
        final CountDownLatch gate = new CountDownLatch(1);
        final ExecutorService pool = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "gated io");
            t.setDaemon(true);
            return t;
        });

        @Override
        public String name() {
            return "test-gated";
        }

        @Override
        public int submit(IoHandle[] handles, int count) {
            for (int i = 0; i < count; i++) {
                IoHandle h = handles[i];
                pool.execute(() -> {
                    if (h.op() == IoHandle.OP_WRITEV) {
                        try {
                            gate.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    h.performSynchronously(CallState.allocate(Arena.ofAuto()));
                });
            }
            return count;
        }

        @Override
        public void close() {
            gate.countDown();
            pool.shutdownNow();
        }
    }

    @Test
    void aModifierWaitsForTheWriteInFlightWhichAiosShows() throws Exception {
        GatedWrites m = new GatedWrites();
        closeLast.add(m);
        pool(m, small().build());
        SmgrRelation rel = relation(71007, 8);
        try (BufferSession s = pool.openSession("client")) {
            modify(s, rel, 71007, 1, 3);
        }
        CompletableFuture<CheckpointResult> checkpoint = CompletableFuture.supplyAsync(() -> {
            try {
                return pool.checkpoint();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        AioHandleInfo write = null;
        for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10); write == null && System.nanoTime() < deadline; ) {
            for (AioHandleInfo i : pool.aio().snapshot()) {
                if (i.operation().equals("writev")) {
                    write = i;
                }
            }
            Thread.sleep(5);
        }
        assertTrue(write != null, "aios shows the write in flight");
        assertTrue(write.toString().contains("block 3"), write.toString());
        CompletableFuture<Void> modifier = CompletableFuture.runAsync(() -> {
            try (BufferSession s = pool.openSession("client")) {
                modify(s, rel, 71007, 2, 3);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        assertThrows(TimeoutException.class, () -> modifier.get(300, TimeUnit.MILLISECONDS),
                "the modifier waits for the write of the page");
        assertFalse(checkpoint.isDone());
        m.gate.countDown();
        modifier.get(10, TimeUnit.SECONDS);
        assertEquals(1, checkpoint.get(10, TimeUnit.SECONDS).buffersWritten());
        assertOnDisk(rel, 71007, 1, 3); // the image the checkpoint wrote, checksum and all
        assertEquals(1, pool.dirtyBuffers(), "dirtied again by the modifier after the write");
        pool.checkpoint();
        assertOnDisk(rel, 71007, 2, 3);
    }

    @Test
    void theBackgroundWritersScanWritesDirtyBuffersTheSweepWouldTakeNext() throws Exception {
        pool(new SyncIoMethod(), small().sharedBuffers(64).build()); // writes complete inline: exact counts
        SmgrRelation rel = relation(71008, 60);
        try (BufferSession s = pool.openSession("client")) {
            modify(s, rel, 71008, 1, range(0, 60));
        }
        try (BufferSession s = pool.openSession("background writer")) {
            BufferWriter w = s.writer();
            assertEquals(0, BackgroundWriter.lruScan(pool, w, 64, 100), "usage counts 1: nothing the sweep takes next");
            for (int b = 0; b < pool.nbuffers(); b++) { // what a lap of the clock sweep does to them
                for (;;) {
                    long st = pool.state(b);
                    if (pool.casState(b, st, st & ~BufferPool.USAGE_MASK)) {
                        break;
                    }
                }
            }
            // from the hand (buffer 60): 4 empty buffers, then blocks 0..15 and 16..31 in two combined writes
            assertEquals(32, BackgroundWriter.lruScan(pool, w, 64, 20), "stops after bgwriter_lru_maxpages (whole writes)");
            s.io().drain();
            assertEquals(28, pool.dirtyBuffers());
            int unsynced = 0;
            for (int b = 0; b < pool.nbuffers(); b++) {
                unsynced += pool.isUnsynced(b) ? 1 : 0;
            }
            assertEquals(32, unsynced, "written, not yet durable: not reusable until an fsync covers them");
            assertTrue(pool.syncForReuse(s, rel, true)); // what the sweep would do, meeting them
            // 36 reusable, then 32..47 written: 52, the target (a block just written counts once, as
            // written: it is not reusable before an fsync covers it)
            assertEquals(16, BackgroundWriter.lruScan(pool, w, 52, 100), "stops when the target is reached");
            assertEquals(12, pool.dirtyBuffers());
            assertEquals(12, BackgroundWriter.lruScan(pool, w, 64, 100));
            s.io().drain();
        }
        assertEquals(0, pool.dirtyBuffers());
        assertEquals(60 * 8192L, kindTotal("background writer", Column.WRITE_BYTES));
        assertEquals(0, kindTotal("client", Column.WRITES));
        assertOnDisk(rel, 71008, 1, range(0, 60));
        // and the thread runs rounds and stops
        try (BackgroundWriter bg = new BackgroundWriter(pool, new BgWriterSettings(10, 100, 2.0))) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (bg.rounds() < 3 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertTrue(bg.rounds() >= 3, "rounds: " + bg.rounds());
        }
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void anIdleBackgroundWriterHibernatesUntilABufferIsAllocated() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(71012, 64);
        // 100 ms rounds: hibernation is 50 x 100 ms = 5 s unless an allocation wakes it
        try (BackgroundWriter bg = new BackgroundWriter(pool, new BgWriterSettings(100, 100, 2.0))) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!bg.hibernating() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertTrue(bg.hibernating(), "an idle writer hibernates after two idle rounds; rounds: " + bg.rounds());
            long rounds = bg.rounds();
            Thread.sleep(600);
            assertEquals(rounds, bg.rounds(), "no scanning while idle (6 rounds in 600 ms without hibernation)");
            assertTrue(bg.hibernating());
            try (BufferSession s = pool.openSession("client")) {
                s.releaseBuffer(s.readBuffer(rel, 5, null)); // a miss: the clock sweep claims a buffer
            }
            deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2500);
            while (bg.rounds() == rounds && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertTrue(bg.rounds() > rounds, "woken by the allocation, well before the 5 s hibernation ends");
            assertEquals(1, bg.hibernations());
        }
        assertEquals(0, pool.pinnedBuffers());
    }

    @Test
    void modifyingRequiresAPinAndMarkDirtyRequiresTheLock() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(71010, 2);
        try (BufferSession s = pool.openSession("client")) {
            int buf = s.readBuffer(rel, 1, null);
            assertThrows(IllegalStateException.class, () -> s.markDirty(buf));
            s.beginModify(buf);
            s.markDirty(buf);
            s.endModify(buf, false);
            assertTrue(pool.isDirty(buf));
            s.releaseBuffer(buf);
            assertThrows(IllegalStateException.class, () -> s.beginModify(buf));
        }
    }

    @Test
    void aCleanupLockIsTakenOnlyByTheOnlyPinnerAndHoldsNewPinsOffUntilReleased() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(71100, 4);
        try (BufferSession s = pool.openSession("client"); BufferSession other = pool.openSession("client")) {
            int buf = s.readBuffer(rel, 1, null);
            int theirs = other.readBuffer(rel, 1, null);
            assertFalse(s.conditionalLockForCleanup(buf), "another session pins the buffer");
            assertEquals(2, pool.pinCount(buf), "nothing taken by the refusal");
            other.releaseBuffer(theirs);
            s.beginModify(buf);
            assertFalse(s.conditionalLockForCleanup(buf), "the buffer is being modified");
            s.endModify(buf, false);

            assertTrue(s.conditionalLockForCleanup(buf));
            WriteTestPages.fill(s.page(buf), 71100, 1, 1); // a page half rearranged, as a reader must never see it
            int[] seen = {-2};
            Thread reader = new Thread(() -> {
                try (BufferSession r = pool.openSession("client")) {
                    int b = r.readBuffer(rel, 1, null); // waits for the cleanup lock's release
                    seen[0] = WriteTestPages.generation(r.page(b), 71100, 1, 2);
                    r.releaseBuffer(b);
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            reader.start();
            WriteTestPages.fill(s.page(buf), 71100, 1, 2);
            assertEquals(1, pool.pinCount(buf), "no pin taken while the cleanup lock is held");
            s.endModify(buf, true);
            reader.join();
            assertEquals(2, seen[0], "the reader pinned the page only once it was whole again");
            assertTrue(pool.isDirty(buf));
            s.releaseBuffer(buf);
            int again = s.readBuffer(rel, 1, null);
            s.beginModify(again); // LOCKED and CLEANUP both cleared by endModify
            s.endModify(again, false);
            s.releaseBuffer(again);
        }
        assertEquals(0, pool.pinnedBuffers());
    }
}
