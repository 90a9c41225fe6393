package org.pageio.bufmgr;

import java.nio.file.Path;
import java.util.Random;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stream.ReadStream;

/**
 * The child JVM of {@link CrashLoopTest}, started again and again on the same data directory and
 * killed with SIGKILL at a random moment. It opens the buffer manager on what the last one left
 * (no repair step), then loops: loads relation {@code first + k} ({@link #LOAD_BLOCKS} blocks of
 * generation 1; by extension, write-back and a checkpoint, or, every other one, by the storage
 * manager's bulk writer and its fsync, as the table loader does) and prints {@code DURABLE <number>};
 * modifies random blocks of the shared {@link #HOT} relation to generation {@code 2..}
 * {@link #MAX_GEN}; scans the relation it loaded before. The background writer and eviction keep
 * writes in flight throughout, so the kill lands in loads, checkpoints, writes and scans alike.
 * Arguments: the data directory, the first relation number, the seed.
 */
public final class CrashLoopChild {

    static final long HOT = 90000;
    static final int HOT_BLOCKS = 96;
    static final int LOAD_BLOCKS = 48;
    static final int MAX_GEN = 6;

    static BufMgrSettings settings() {
        return new BufMgrSettings.Builder().sharedBuffers(64).maxSessions(8).segmentBlocks(32).build();
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        long first = Long.parseLong(args[1]);
        Random rnd = new Random(Long.parseLong(args[2]));
        BufferManagerCore core = BufferManagerCore.open(dir, settings(), new TestMethods.Threaded(2));
        core.startBackgroundWriter(new BgWriterSettings(10, 100, 2.0));
        BufferPool pool = core.pool();
        try (BufferSession s = pool.openSession("client")) {
            SmgrRelation hot = core.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, HOT));
            if (!hot.exists() || hot.nblocks() < HOT_BLOCKS) {
                hot.create();
                load(s, hot, HOT, HOT_BLOCKS - (int) hot.nblocks());
            }
            System.out.println("STARTED");
            System.out.flush();
            for (long k = first; ; k++) {
                SmgrRelation rel = core.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, k));
                if (k % 2 == 0) {
                    load(s, rel, k, LOAD_BLOCKS); // through the pool: extension, write-back, checkpoint
                    pool.checkpoint();
                } else {
                    bulkLoad(rel, k, LOAD_BLOCKS); // around it, as the table loader does: bulk writes, fsync at the end
                }
                System.out.println("DURABLE " + k);
                System.out.flush();
                for (int i = 0; i < 40; i++) {
                    BufferWriteTest.modify(s, hot, HOT, 2 + rnd.nextInt(MAX_GEN - 1), rnd.nextInt(HOT_BLOCKS));
                }
                if (k > first) {
                    SmgrRelation previous = core.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, k - 1));
                    try (ReadStream stream = new ReadStream(s, previous, ReadStream.blockRange(0, LOAD_BLOCKS), 0, null)) {
                        for (int buf; (buf = stream.next()) >= 0; ) {
                            s.releaseBuffer(buf);
                        }
                    }
                }
            }
        }
    }

    /** Writes {@code blocks} checksummed pages of generation 1 with the storage manager's bulk writer, then fsyncs them. */
    private static void bulkLoad(SmgrRelation rel, long number, int blocks) throws Exception {
        try (java.lang.foreign.Arena a = java.lang.foreign.Arena.ofConfined();
                org.pageio.bufmgr.smgr.SmgrBulkWriter w = rel.bulkWriter(blocks,
                        org.pageio.bufmgr.smgr.SmgrBulkWriter.DIRECT | org.pageio.bufmgr.smgr.SmgrBulkWriter.PREALLOCATE)) {
            java.lang.foreign.MemorySegment run = a.allocate(16L * TestPages.BLCKSZ, 4096);
            for (int done = 0; done < blocks; done += 16) {
                int n = Math.min(16, blocks - done);
                for (int i = 0; i < n; i++) {
                    java.lang.foreign.MemorySegment page = run.asSlice((long) i * TestPages.BLCKSZ, TestPages.BLCKSZ);
                    WriteTestPages.fill(page, number, done + i, 1);
                    org.pageio.bufmgr.page.Page.setChecksum(page, done + i);
                }
                w.write(done, run, n);
            }
            w.finish();
        }
    }

    /** Extends {@code rel} by {@code blocks} pages of generation 1 through the pool. */
    private static void load(BufferSession s, SmgrRelation rel, long number, int blocks) throws Exception {
        int[] bufs = new int[16];
        for (int done = 0; done < blocks; ) {
            int n = Math.min(16, blocks - done);
            long at = s.extendBy(rel, n, bufs, null);
            for (int i = 0; i < n; i++) {
                s.beginModify(bufs[i]);
                WriteTestPages.fill(s.page(bufs[i]), number, at + i, 1);
                s.endModify(bufs[i], true);
                s.releaseBuffer(bufs[i]);
            }
            done += n;
        }
    }
}
