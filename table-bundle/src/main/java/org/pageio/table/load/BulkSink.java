package org.pageio.table.load;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.BulkWriter;
import org.pageio.bufmgr.smgr.SmgrRelation;

/**
 * {@link PageSink#bulk}: the loader's chunks written asynchronously through the buffer manager's
 * I/O method by a {@link BulkWriter} fed from the caller's memory (no copy: the loader's chunk
 * ring is the bulk-write ring). The session is opened in {@link #BulkSink} — by the loader's
 * writer thread, which calls every other method too — and closed in {@link #close}, after the
 * writer drained what is in flight (so the loader may free its chunks). A write that fails after
 * the writer's retries surfaces as the writer's {@link org.pageio.api.AioException} (relation, blocks,
 * file, errno).
 */
final class BulkSink implements PageSink {

    /** Pages per write by default: 128 = 1 MiB (see the table README, "Which sink"). */
    static final int DEFAULT_WRITE_BLOCKS = 128;
    /** Writes in flight by default on {@code O_DIRECT} descriptors (the device wants a queue). */
    static final int DEFAULT_IN_FLIGHT = 8;
    /**
     * Writes in flight by default on buffered descriptors: the copy into the page cache of one
     * file is serialized by the file's inode lock whoever does it, so more than one write queued
     * behind the one copying only makes I/O workers contend for that lock (see the table README, "Which sink").
     */
    static final int BUFFERED_IN_FLIGHT = 2;
    /** {@code inFlight} argument meaning: {@link #DEFAULT_IN_FLIGHT} with O_DIRECT, {@link #BUFFERED_IN_FLIGHT} otherwise. */
    static final int IN_FLIGHT_BY_DESCRIPTORS = -1;
    /**
     * Blocks between early fsyncs ({@link BulkWriter#syncEvery}) when the I/O method runs I/O
     * asynchronously: 16384 = 128 MiB (see the table README, "Which sink").
     */
    static final long ASYNC_SYNC_EVERY = 16384;
    /** {@code syncEvery} argument meaning: {@link #ASYNC_SYNC_EVERY} unless the method is {@code sync}, then 0. */
    static final long SYNC_EVERY_BY_METHOD = -1;

    private final SmgrRelation rel;
    private final BufferSession session;
    private final BulkWriter writer;
    private final long syncEvery;

    BulkSink(BufferPool pool, String kind, SmgrRelation rel, long blocks, int writeBlocks, int inFlight, long syncEvery)
            throws IOException {
        this.rel = rel;
        if (syncEvery == SYNC_EVERY_BY_METHOD) {
            // with io_method=sync an early fsync would block the issuer with nothing to overlap,
            // and costs more than one fsync at the end (PostgreSQL's bulk_write.c: one
            // smgrimmedsync at the end); the asynchronous methods run it while pages are built
            syncEvery = pool.defersReads() ? 0 : ASYNC_SYNC_EVERY; // the pool's own io_method=sync test
        }
        this.syncEvery = syncEvery;
        if (inFlight == IN_FLIGHT_BY_DESCRIPTORS) {
            inFlight = pool.storage().directIo() ? DEFAULT_IN_FLIGHT : BUFFERED_IN_FLIGHT;
        }
        this.session = pool.openSession(kind);
        BulkWriter w = null;
        try {
            w = new BulkWriter(session, rel, 0, writeBlocks, inFlight, false).syncEvery(syncEvery);
            // the whole relation allocated up front, file sizes set: no write extends a file, so
            // O_DIRECT writes run in parallel (ext4 waits for each extending one)
            w.extendTo(blocks);
        } catch (IOException | RuntimeException e) {
            if (w != null) {
                w.close();
            }
            session.close();
            throw e;
        }
        this.writer = w;
    }

    @Override
    public void write(long block, MemorySegment pages, int n) throws IOException {
        if (block != writer.nextBlockNumber()) {
            throw new IllegalStateException("bulk sink of relation " + rel + ": block " + block + " written after block "
                    + (writer.nextBlockNumber() - 1) + "; pages must come in block order");
        }
        writer.write(pages, n);
    }

    @Override
    public long writtenThrough() throws IOException {
        return writer.writtenThrough();
    }

    @Override
    public void awaitWritten(long end) throws IOException {
        writer.awaitWritten(end);
    }

    @Override
    public void finish() throws IOException {
        writer.finish();
    }

    /** Blocks between early fsyncs this sink used (0: one fsync per segment at the end). */
    long syncEvery() {
        return syncEvery;
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
