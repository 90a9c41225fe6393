package org.pageio.bufmgr;

import java.io.IOException;
import java.util.Arrays;
import org.pageio.api.AioException;
import org.pageio.api.IoHandle;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.bufmgr.stats.StatIo.IoContext;
import org.pageio.bufmgr.stats.StatIo.IoObject;
import org.pageio.posix.Errno;
import org.pageio.posix.PosixException;

/**
 * A checkpoint (PostgreSQL's {@code BufferSync} + {@code ProcessSyncRequests}), in the calling
 * thread with its own session of kind {@code checkpointer}:
 * <ol>
 *   <li>collects the tags of every dirty buffer and sorts them: file order (relation, block);</li>
 *   <li>writes them asynchronously in that order, each write combined over the following dirty
 *       blocks, as many in flight as the session has handles, then waits for all;</li>
 *   <li>checks each block again: one still dirty because its write failed is written again (up
 *       to {@link #WRITE_ATTEMPTS} times, then the checkpoint fails with that write's message);
 *       one under someone else's write is waited for; one skipped (locked by a modifier) is
 *       written now;</li>
 *   <li>fsyncs every segment registered since the last checkpoint (by any write, and by
 *       extension), through the I/O method's fsync handles, and only then succeeds. A failed
 *       fsync fails the checkpoint naming the file and errno, keeps the segment registered and
 *       marks the relation not durable ({@link SmgrRelation#markFsyncFailed}): every later
 *       checkpoint refuses it without fsyncing it again, and its pages cannot be modified; reads
 *       go on.</li>
 * </ol>
 * A buffer dirtied again after its write is left for the next checkpoint.
 */
final class Checkpointer {

    /** Writes of one block before the checkpoint gives up (the first plus retries). */
    static final int WRITE_ATTEMPTS = 3;

    private Checkpointer() {
    }

    static CheckpointResult run(BufferPool pool) throws IOException {
        synchronized (pool.checkpointLock) {
            long t0 = System.nanoTime();
            try (BufferSession session = pool.openSession("checkpointer")) {
                BufferWriter w = session.writer();
                long[] tags = dirtyTags(pool);
                for (long tag : tags) {
                    int buf = pool.mapping().lookup(tag);
                    if (buf >= 0) {
                        w.writeBack(buf, IoContext.NORMAL); // checks the tag after claiming
                    }
                }
                session.io().drain();
                AioException first = null;
                int failed = 0;
                for (long tag : tags) {
                    try {
                        verifyWritten(pool, w, tag);
                    } catch (AioException e) { // the others are still written; the first is reported
                        failed++;
                        first = first == null ? e : first;
                    }
                }
                if (first != null) {
                    throw failed == 1 ? first : new AioException(first.getMessage() + " (" + failed
                            + " buffers could not be written)", first.errno(), first.getCause());
                }
                long t1 = System.nanoTime();
                int files = syncAll(pool, session);
                long t2 = System.nanoTime();
                return new CheckpointResult(w.blocksIssued, w.writesIssued, files, pool.nbuffers(), t1 - t0, t2 - t1,
                        t2 - t0);
            }
        }
    }

    /** Tags of the dirty buffers, in file order. */
    private static long[] dirtyTags(BufferPool pool) {
        long[] tags = new long[pool.nbuffers()];
        int n = 0;
        for (int b = 0; b < pool.nbuffers(); b++) {
            long s = pool.state(b); // volatile read, then the tag (published before the state)
            if ((s & (BufferPool.DIRTY | BufferPool.TAG_VALID)) == (BufferPool.DIRTY | BufferPool.TAG_VALID)) {
                long tag = pool.tags[b];
                if (tag >= 0) {
                    tags[n++] = tag;
                }
            }
        }
        long[] sorted = Arrays.copyOf(tags, n);
        Arrays.sort(sorted);
        return sorted;
    }

    /** Makes sure the block of {@code tag} was written once since the checkpoint began. */
    private static void verifyWritten(BufferPool pool, BufferWriter w, long tag) throws IOException {
        int failures = 0;
        boolean wroteNow = false;
        for (;;) {
            int buf = pool.mapping().lookup(tag);
            if (buf < 0) {
                return; // evicted, so written clean
            }
            long s = pool.state(buf);
            if ((s & BufferPool.DIRTY) == 0 || pool.tags[buf] != tag) {
                return;
            }
            if ((s & BufferPool.IO_IN_PROGRESS) != 0) {
                w.awaitWrite(pool.ioRef(buf), IoContext.NORMAL);
                Thread.onSpinWait();
                continue;
            }
            int errno = pool.writeErrno[buf]; // after the state read (acquire)
            if (errno == 0 && wroteNow) {
                return; // written by us just now, dirtied again since: the next checkpoint's
            }
            if (errno != 0 && ++failures >= WRITE_ATTEMPTS) {
                SmgrRelation rel = pool.storage().relation(BufferPool.tagRelation(tag));
                long block = BufferPool.tagBlock(tag);
                throw new AioException("checkpoint failed: could not write "
                        + rel.describe(SmgrRelation.targetData(block, 1)) + ": " + Errno.name(errno) + " ("
                        + Errno.message(errno) + ") after " + failures + " attempts; the buffer stays dirty", errno, null);
            }
            if ((s & BufferPool.LOCKED) != 0) {
                Thread.yield(); // a modifier holds it; a short wait
                continue;
            }
            long ref;
            try {
                ref = w.writeBack(buf, IoContext.NORMAL);
            } catch (PosixException e) {
                throw new AioException("checkpoint failed: " + e.getMessage(), e.errno(), e);
            }
            if (ref != IoHandle.NO_WAIT_REF) {
                w.awaitWrite(ref, IoContext.NORMAL);
                wroteNow = pool.writeErrno[buf] == 0 || pool.tags[buf] != tag;
            }
        }
    }

    /**
     * fsyncs every registered segment through the I/O method; returns how many. A relation whose
     * fsync failed, now or at an earlier checkpoint, is not fsynced again (a later fsync could
     * succeed without the pages the failed one lost): its segments stay registered and the
     * checkpoint fails naming it, after the other relations were made durable.
     */
    private static int syncAll(BufferPool pool, BufferSession session) throws IOException {
        int base = StatIo.base(pool.stats().kind("checkpointer"), IoObject.RELATION, IoContext.NORMAL);
        boolean timing = pool.settings().trackIoTiming();
        IoReturn ret = new IoReturn();
        int files = 0;
        AioException failed = null;
        for (SmgrRelation rel : pool.storage().relations()) {
            if (rel.fsyncFailure() != null) {
                failed = failed != null ? failed : new AioException("checkpoint failed: " + rel.fsyncFailure(), Errno.EIO, null);
                continue; // its segments stay registered: nothing of it is reported durable
            }
            long[] segs = rel.takeDirtySegments();
            for (int i = 0; i < segs.length; i++) {
                long first = segs[i] * rel.segmentBlocks();
                try {
                    int fd = rel.fd(first);
                    IoHandle h = session.io().acquire();
                    h.setReturn(ret).setTarget(rel, SmgrRelation.targetData(first, 0));
                    long ref = h.waitRef();
                    long t0 = timing ? System.nanoTime() : 0;
                    h.startFsync(fd, false);
                    session.io().awaitRef(ref);
                    if (timing) {
                        pool.stats().add(base, Column.FSYNC_TIME, System.nanoTime() - t0);
                    }
                    pool.stats().add(base, Column.FSYNCS, 1);
                    if (IoResult.status(ret.result()) == IoResult.ERROR) {
                        int errno = -IoResult.result(ret.result());
                        String why = "could not fsync file " + rel.segmentPath(first) + ": " + Errno.name(errno) + " ("
                                + Errno.message(errno) + "); relation " + rel.locator() + " is not durable: its writes since"
                                + " its last checkpoint may be lost, and a later fsync could report success without them,"
                                + " so every later checkpoint refuses it and its pages cannot be modified; reads go on."
                                + " Check the device (dmesg), then restart the buffer manager, or restore the relation";
                        rel.markFsyncFailed(why);
                        throw new AioException("checkpoint failed: " + why, errno, ret.failure());
                    }
                    files++;
                } catch (PosixException | AioException e) {
                    for (int j = i; j < segs.length; j++) {
                        rel.registerDirtySegment(segs[j]); // still owed an fsync
                    }
                    AioException a = e instanceof AioException x ? x
                            : new AioException("checkpoint failed: " + e.getMessage(), ((PosixException) e).errno(), e);
                    failed = failed != null ? failed : a;
                    break; // the rest of this relation waits; the other relations are still made durable
                }
            }
        }
        if (failed != null) {
            throw failed;
        }
        return files;
    }
}
