package org.pageio.bufmgr;

import org.pageio.api.IoCallback;
import org.pageio.api.IoHandle;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.posix.Errno;

/**
 * The buffer manager's completion callback on a write (what PostgreSQL would call
 * {@code shared_buffer_writev}; PostgreSQL 18 and 19 still write synchronously). The write's
 * buffers were claimed (IO_IN_PROGRESS, one pin owned by the I/O) by {@link BufferWriter}.
 *
 * <p>completeShared (any thread): the blocks the kernel wrote become clean; the others (an errno,
 * or a short write, counted as ENOSPC as md.c does) stay dirty with the errno in
 * {@code writeErrno[]}, to be written again by the next write-back or checkpoint; the blocks written
 * become UNSYNCED, and their segment is registered for an fsync again. Either way the
 * write's pin is dropped and IO_IN_PROGRESS cleared. A failure is logged at once naming relation,
 * blocks and errno: the issuer (eviction, background writer) may never look. Never throws, never
 * allocates on success.
 *
 * <p>Result: the raw byte count on success; ERROR with the errno as error data otherwise.
 */
final class SharedBufferWritev implements IoCallback {

    private static final System.Logger LOG = System.getLogger("org.pageio.bufmgr");

    private final BufferPool pool;

    SharedBufferWritev(BufferPool pool) {
        this.pool = pool;
    }

    @Override
    public String name() {
        return "shared_buffer_writev";
    }

    @Override
    public long completeShared(IoHandle h, long result, int flags) {
        int raw = h.rawResult();
        int n = h.handleDataLength();
        int written = raw > 0 ? Math.min(n, raw / BufferPool.BLCKSZ) : 0;
        int errno = raw < 0 ? -raw : written < n ? Errno.ENOSPC : 0;
        if (written > 0) {
            // Registered again now that the write returned, before its epoch is read: a sync that
            // took the segment after the write started but fsynced it before the write reached the
            // file would otherwise leave it unregistered, and the next sync would count the write
            // durable without fsyncing it.
            SmgrRelation rel = (SmgrRelation) h.target();
            rel.registerDirtySegment(SmgrRelation.targetBlock(h.targetData()) / rel.segmentBlocks());
        }
        for (int i = 0; i < n; i++) {
            BufferWriter.terminateWrite(pool, (int) h.handleData(i), i < written ? 0 : errno);
        }
        if (errno == 0) {
            return result;
        }
        try {
            LOG.log(System.Logger.Level.WARNING, message(h.target(), h.targetData(), written, raw, errno,
                    h.length()));
        } catch (Throwable ignore) {
            // logging must never break completion
        }
        return IoResult.of(IoResult.ERROR, raw, IoResult.CALLBACK_CORE, errno);
    }

    static String message(org.pageio.api.IoTarget target, long targetData, int written, int raw, int errno, long length) {
        long first = SmgrRelation.targetBlock(targetData) + written;
        int left = SmgrRelation.targetBlocks(targetData) - written;
        String what = raw >= 0 ? "wrote only " + raw + " of " + length + " bytes (" + Errno.name(errno) + ")"
                : Errno.name(errno) + " (" + Errno.message(errno) + ")";
        return "could not write " + target.describe(SmgrRelation.targetData(first, left)) + ": " + what
                + "; the buffer" + (left > 1 ? "s stay" : " stays") + " dirty and will be written again";
    }

    @Override
    public String report(IoReturn ret) {
        long r = ret.result();
        int raw = IoResult.result(r);
        int n = SmgrRelation.targetBlocks(ret.targetData());
        int written = raw > 0 ? Math.min(n, raw / BufferPool.BLCKSZ) : 0;
        return message(ret.target(), ret.targetData(), written, raw, IoResult.errorData(r), ret.length());
    }
}
