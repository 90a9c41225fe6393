package org.pageio.bufmgr;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.pageio.api.AioException;
import org.pageio.api.IoHandle;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.bufmgr.stats.StatIo.IoContext;
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
 *       extension), through the I/O method's fsync handles, relation by relation under its sync
 *       lock ({@link #syncRelation}, which sessions needing buffers back use too), and only then
 *       succeeds. A failed fsync is repaired from shared buffers when it can be; else it fails the
 *       checkpoint naming the file and errno, keeps the segment registered and marks the relation
 *       not durable ({@link SmgrRelation#markFsyncFailed}): every later checkpoint refuses it
 *       without fsyncing it again, and its pages cannot be modified; reads go on.</li>
 * </ol>
 * A buffer dirtied again after its write is left for the next checkpoint.
 */
final class Checkpointer {

    private static final System.Logger LOG = System.getLogger("org.pageio.bufmgr");

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
                        verifyWritten(pool, w, tag, 0);
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

    /**
     * Makes sure the block of {@code tag} was written once since the checkpoint began (or the
     * repair marked it dirty). Returns false only when {@code deadline} (a nanoTime; 0: none)
     * passed while a modifier held the page's content lock.
     */
    private static boolean verifyWritten(BufferPool pool, BufferWriter w, long tag, long deadline) throws IOException {
        int failures = 0;
        boolean wroteNow = false;
        for (;;) {
            int buf = pool.mapping().lookup(tag);
            if (buf < 0) {
                return true; // evicted, so written clean
            }
            long s = pool.state(buf);
            if ((s & BufferPool.DIRTY) == 0 || pool.tags[buf] != tag) {
                return true;
            }
            if ((s & BufferPool.IO_IN_PROGRESS) != 0) {
                w.awaitWrite(pool.ioRef(buf), IoContext.NORMAL);
                Thread.onSpinWait();
                continue;
            }
            int errno = pool.writeErrno[buf]; // after the state read (acquire)
            if (errno == 0 && wroteNow) {
                return true; // written by us just now, dirtied again since: the next checkpoint's
            }
            if (errno != 0 && ++failures >= WRITE_ATTEMPTS) {
                SmgrRelation rel = pool.storage().relation(BufferPool.tagRelation(tag));
                long block = BufferPool.tagBlock(tag);
                throw new AioException("checkpoint failed: could not write "
                        + rel.describe(SmgrRelation.targetData(block, 1)) + ": " + Errno.name(errno) + " ("
                        + Errno.message(errno) + ") after " + failures + " attempts; the buffer stays dirty", errno, null);
            }
            if ((s & BufferPool.LOCKED) != 0) {
                if (deadline != 0 && System.nanoTime() - deadline > 0) {
                    return false; // the repair holds the relation's sync lock: it does not wait for long
                }
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
     * fsyncs every registered segment through the I/O method, relation by relation under each
     * one's sync lock ({@link #syncRelation}); returns how many. A relation already marked not
     * durable is not fsynced again (a later fsync could succeed without the pages the failed one
     * lost): its segments stay registered and every checkpoint fails naming it, after the other
     * relations were made durable.
     */
    private static int syncAll(BufferPool pool, BufferSession session) throws IOException {
        int[] files = {0};
        AioException failed = null;
        for (SmgrRelation rel : pool.storage().relations()) {
            AioException e = null;
            rel.syncLock().lock(); // held by a session's sync for reuse only for a bounded time
            try {
                if (rel.fsyncFailure() != null) {
                    e = new AioException("checkpoint failed: " + rel.fsyncFailure(), Errno.EIO, null);
                } else {
                    FsyncFailure why = syncRelation(pool, session, rel, files);
                    if (why != null) {
                        e = new AioException("checkpoint failed: " + why.message(), why.errno(), null);
                    }
                }
            } catch (PosixException p) { // the rest of this relation waits; the others are still made durable
                e = new AioException("checkpoint failed: " + p.getMessage(), p.errno(), p);
            } finally {
                rel.syncLock().unlock();
            }
            failed = failed != null ? failed : e;
        }
        if (failed != null) {
            throw failed;
        }
        return files[0];
    }

    /**
     * fsyncs the registered segments of {@code rel} with the epoch rule: the epoch is taken before
     * the first fsync, and when every segment succeeds the relation's writes up to it are durable
     * ({@link SmgrRelation#synced}). A failed fsync is repaired when it can be: if every write of
     * the relation not yet known durable still has its page in shared buffers
     * ({@link SmgrRelation#unsyncedWritesAllBuffered}), those pages are written again and fsynced
     * again. If that fails too, or cannot be done, the relation is marked not durable
     * ({@link SmgrRelation#markFsyncFailed}) and what happened is returned; null when durable.
     * The caller holds {@code rel}'s sync lock and checked it is not marked already. Used by
     * checkpoints and by sessions that need the relation's written buffers back
     * ({@link BufferPool#syncForReuse}); fsyncs count in stat_io under the session's kind.
     *
     * @param files counts the segments fsynced, or null
     * @throws PosixException when a segment cannot be opened before any fsync failed: that
     *         segment and the rest stay registered, nothing more is reported durable
     */
    static FsyncFailure syncRelation(BufferPool pool, BufferSession session, SmgrRelation rel, int[] files)
            throws PosixException {
        long epoch = pool.storage().nextSyncEpoch();
        FsyncFailure why = fsyncSegments(pool, session, rel, files);
        if (why == null) {
            rel.synced(epoch);
            return null;
        }
        if (rel.unsyncedWritesAllBuffered()) {
            try {
                int rewritten = rewriteUnsynced(pool, session, rel);
                if (rewritten >= 0 && rel.unsyncedWritesAllBuffered()) { // none left meanwhile either
                    long again = pool.storage().nextSyncEpoch();
                    FsyncFailure second = fsyncSegments(pool, session, rel, files);
                    if (second == null) {
                        LOG.log(System.Logger.Level.WARNING, why.message() + "; the " + rewritten + " page(s) of relation "
                                + rel.locator() + " written since its last good fsync were written again from shared"
                                + " buffers and fsynced again: they are durable");
                        rel.synced(again);
                        return null;
                    }
                    why = second;
                }
            } catch (IOException e) { // the pages could not be written again: no repair
                why = new FsyncFailure(why.message() + " (writing its pages again failed: " + e.getMessage() + ")",
                        why.errno());
            }
        }
        String message = why.message() + "; relation " + rel.locator() + " is not durable: its writes since"
                + " its last checkpoint may be lost, and a later fsync could report success without them, so every"
                + " later checkpoint refuses it and its pages cannot be modified; reads go on. Check the device"
                + " (dmesg), then restart the buffer manager, or restore the relation";
        rel.markFsyncFailed(message);
        return new FsyncFailure(message, why.errno());
    }

    /** What a failed fsync said: the file and the error, and the errno. */
    record FsyncFailure(String message, int errno) {
    }

    /**
     * fsyncs the segments registered for {@code rel}; returns null when every one succeeded, else
     * what the fsync that failed said, with that segment and the rest registered again. A segment
     * that cannot be opened throws, the rest registered again.
     */
    private static FsyncFailure fsyncSegments(BufferPool pool, BufferSession session, SmgrRelation rel, int[] files)
            throws PosixException {
        boolean timing = pool.settings().trackIoTiming();
        IoReturn ret = new IoReturn();
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
                int base = session.statBase(IoContext.NORMAL); // after the handle: the method that did this fsync
                if (timing) {
                    pool.stats().add(base, Column.FSYNC_TIME, System.nanoTime() - t0);
                }
                pool.stats().add(base, Column.FSYNCS, 1);
                if (IoResult.status(ret.result()) == IoResult.ERROR) {
                    int errno = -IoResult.result(ret.result());
                    for (int j = i; j < segs.length; j++) {
                        rel.registerDirtySegment(segs[j]); // still owed an fsync
                    }
                    return new FsyncFailure("could not fsync file " + rel.segmentPath(first) + ": " + Errno.name(errno)
                            + " (" + Errno.message(errno) + ")", errno);
                }
                if (files != null) {
                    files[0]++;
                }
            } catch (PosixException e) {
                for (int j = i; j < segs.length; j++) {
                    rel.registerDirtySegment(segs[j]);
                }
                throw e;
            }
        }
        return null;
    }

    /**
     * After a failed fsync of {@code rel}: marks every page of it written since its last good fsync
     * dirty again and writes it (waiting for writes of it in flight first), so that the next fsync
     * covers them anew. Returns how many, or -1 when a page's I/O in another session did not end,
     * or a modifier did not release it, within a second (then nothing is repaired: the caller
     * holds the relation's sync lock, which sessions needing buffers may be waiting for).
     */
    private static int rewriteUnsynced(BufferPool pool, BufferSession session, SmgrRelation rel) throws IOException {
        BufferWriter w = session.writer();
        long synced = rel.syncedEpoch();
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
        List<Long> tags = new ArrayList<>();
        for (int buf = 0; buf < pool.nbuffers(); buf++) {
            long tag = pool.tags[buf];
            if (tag < 0 || BufferPool.tagRelation(tag) != rel.id()) {
                continue;
            }
            for (;;) {
                long s = pool.state(buf);
                if (pool.tags[buf] != tag || (s & (BufferPool.TAG_VALID | BufferPool.VALID)) != (BufferPool.TAG_VALID | BufferPool.VALID)
                        || pool.writtenEpoch[buf] <= synced) {
                    break; // another page now, or not written since the last good fsync
                }
                if ((s & BufferPool.IO_IN_PROGRESS) != 0) {
                    if (System.nanoTime() - deadline > 0) {
                        return -1; // another session's I/O of it does not end: no repair, the failure stays
                    }
                    long ref = pool.ioRef(buf);
                    if (ref != IoHandle.NO_WAIT_REF) {
                        session.io().awaitRef(ref); // its completion records its epoch (ours may need reaping)
                    } else {
                        Thread.onSpinWait(); // claimed, reference not yet published: a short window
                    }
                    continue;
                }
                if ((s & BufferPool.DIRTY) != 0 || pool.casState(buf, s, s | BufferPool.DIRTY)) {
                    tags.add(tag);
                    break;
                }
            }
        }
        for (long tag : tags) {
            int buf = pool.mapping().lookup(tag);
            if (buf >= 0) {
                w.writeBack(buf, IoContext.NORMAL);
            }
        }
        session.io().submitStaged(); // each is waited for below, by its own reference
        for (long tag : tags) {
            if (!verifyWritten(pool, w, tag, deadline)) {
                return -1;
            }
        }
        return tags.size();
    }
}
