package org.pageio.table.load;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import org.pageio.api.AioException;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.BulkWriter;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.posix.Errno;
import org.pageio.posix.PosixException;

/**
 * {@link PageSink#bulk}: the loader's chunks written asynchronously through the buffer manager's
 * I/O method by a {@link BulkWriter} fed from the caller's memory (no copy: the loader's chunk
 * ring is the bulk-write ring). The session is opened in {@link #BulkSink} — by the loader's
 * writer thread, which calls every other method too — and closed in {@link #close}, after the
 * writer drained what is in flight (so the loader may free its chunks). A write that fails after
 * the writer's retries surfaces as a {@link PosixException} whose message is the writer's (relation,
 * blocks, file, errno).
 */
final class BulkSink implements PageSink {

    /** Pages per write by default: 128 = 1 MiB (see the table README, "Which sink"). */
    static final int DEFAULT_WRITE_BLOCKS = 128;
    /** Writes in flight by default. */
    static final int DEFAULT_IN_FLIGHT = 8;

    private final SmgrRelation rel;
    private final BufferSession session;
    private final BulkWriter writer;

    BulkSink(BufferPool pool, String kind, SmgrRelation rel, long blocks, int writeBlocks, int inFlight) throws PosixException {
        this.rel = rel;
        this.session = pool.openSession(kind);
        BulkWriter w = null;
        try {
            w = new BulkWriter(session, rel, 0, writeBlocks, inFlight, false);
            // the whole relation allocated up front, file sizes set: no write extends a file, so
            // O_DIRECT writes run in parallel (ext4 waits for each extending one)
            w.extendTo(blocks);
        } catch (PosixException | RuntimeException e) {
            if (w != null) {
                w.close();
            }
            session.close();
            throw e;
        }
        this.writer = w;
    }

    @Override
    public void write(long block, MemorySegment pages, int n) throws PosixException {
        if (block != writer.nextBlockNumber()) {
            throw new IllegalStateException("bulk sink of relation " + rel + ": block " + block + " written after block "
                    + (writer.nextBlockNumber() - 1) + "; pages must come in block order");
        }
        try {
            writer.write(pages, n);
        } catch (IOException e) {
            throw wrap(e);
        }
    }

    @Override
    public long writtenThrough() throws PosixException {
        try {
            return writer.writtenThrough();
        } catch (IOException e) {
            throw wrap(e);
        }
    }

    @Override
    public void awaitWritten(long end) throws PosixException {
        try {
            writer.awaitWritten(end);
        } catch (IOException e) {
            throw wrap(e);
        }
    }

    @Override
    public void finish() throws PosixException {
        try {
            writer.finish();
        } catch (IOException e) {
            throw wrap(e);
        }
    }

    private PosixException wrap(IOException e) {
        if (e instanceof PosixException p) {
            return p;
        }
        int errno = e instanceof AioException a ? a.errno() : Errno.EIO;
        PosixException p = new PosixException("writev", null, errno, e.getMessage());
        p.initCause(e);
        return p;
    }

    @Override
    public void close() {
        try {
            writer.close(); // waits for the writes in flight: the loader frees its chunks after this
        } finally {
            session.close();
        }
    }
}
