package org.pageio.bufmgr;

import java.nio.file.Path;
import java.util.Random;
import org.pageio.api.AioContext;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;

/**
 * The child JVM of {@link CrashTest}: loads relation {@link #REL} ({@link #BLOCKS} blocks of
 * generation 1) through the pool by extension and write-back, modifies every third block to
 * generation 2, runs a checkpoint and prints {@code CHECKPOINT OK}; then keeps modifying blocks of
 * the hot half ({@code [BLOCKS/2, BLOCKS)}) to generation 3, with writes always in flight
 * (eviction in a pool smaller than the relation, the background writer, checkpoints, each printed
 * as {@code LOOP CHECKPOINT}) until it is killed.
 */
public final class CrashChild {

    static final long REL = 81000;
    static final int BLOCKS = 640;
    static final int SHARED_BUFFERS = 128;
    static final long SEGMENT_BLOCKS = 256;

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        BufMgrSettings settings = new BufMgrSettings.Builder().sharedBuffers(SHARED_BUFFERS).maxSessions(8)
                .segmentBlocks(SEGMENT_BLOCKS).build();
        TestMethods.Threaded method = new TestMethods.Threaded(2);
        StorageManager smgr = new StorageManager(dir, settings.segmentBlocks(), false);
        AioContext aio = AioContext.create(method, settings.aioConfig());
        BufferPool pool = new BufferPool(settings, smgr, aio, new StatIo());
        SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, REL));
        try (BufferSession s = pool.openSession("client")) {
            int[] bufs = new int[16];
            for (int b = 0; b < BLOCKS; b += 16) {
                long first = s.extendBy(rel, 16, bufs, null);
                for (int i = 0; i < 16; i++) {
                    s.beginModify(bufs[i]);
                    WriteTestPages.fill(s.page(bufs[i]), REL, first + i, 1);
                    s.endModify(bufs[i], true);
                    s.releaseBuffer(bufs[i]);
                }
            }
            for (int b = 0; b < BLOCKS; b += 3) {
                BufferWriteTest.modify(s, rel, REL, 2, b);
            }
            System.out.println(pool.checkpoint());
            System.out.println("CHECKPOINT OK");
            System.out.flush();
            BackgroundWriter bg = new BackgroundWriter(pool, new BgWriterSettings(10, 100, 2.0));
            Random rnd = new Random(7);
            for (long i = 1; ; i++) {
                BufferWriteTest.modify(s, rel, REL, 3, BLOCKS / 2 + rnd.nextInt(BLOCKS / 2));
                if (i % 200 == 0) {
                    pool.checkpoint();
                    System.out.println("LOOP CHECKPOINT " + i + " (background writer wrote " + bg.buffersWritten() + ")");
                    System.out.flush();
                }
            }
        }
    }
}
