package org.pageio.table.load;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import org.pageio.bufmgr.smgr.SmgrBulkWriter;

/**
 * Where the loader's finished pages go: the seam between building pages and writing them. The
 * loader's writer thread calls {@link #write} with runs of whole pages in ascending block order,
 * then {@link #finish} once, then {@link #close} (also after a failure). An implementation may
 * write synchronously ({@link #buffered}, {@link #direct}) or start asynchronous writes
 * ({@link #bulk}): then it tells the loader, through {@link #writtenThrough} and
 * {@link #awaitWritten}, which pages it no longer reads; the loader refills a chunk only after
 * that. A synchronous sink keeps the defaults (everything written when {@code write} returns).
 *
 * <p>One thread (the loader's writer, which calls {@link Factory#open}) calls every method: an
 * asynchronous sink's I/O session belongs to that thread.
 */
public interface PageSink extends AutoCloseable {

    /**
     * Writes {@code n} pages from {@code pages} ({@code n × 8192} bytes, 4096-aligned) at
     * {@code block}. Errors name the call, the file and the blocks.
     */
    void write(long block, MemorySegment pages, int n) throws IOException;

    /**
     * Every block below the returned one has been written, so the loader may refill its memory;
     * polls, never blocks. A synchronous sink returns {@link Long#MAX_VALUE}.
     */
    default long writtenThrough() throws IOException {
        return Long.MAX_VALUE;
    }

    /** Waits until every block below {@code end} has been written (its memory is free again). */
    default void awaitWritten(long end) throws IOException {
    }

    /** Makes everything written durable (waits for writes in flight, then fsyncs every segment written). */
    void finish() throws IOException;

    /**
     * Waits for writes still in flight (so the loader may free the chunks), releases what the sink
     * opened itself; never throws.
     */
    @Override
    void close();

    /** Creates the sink for one load of {@code blocks} blocks into a new relation. */
    @FunctionalInterface
    interface Factory {
        PageSink open(org.pageio.bufmgr.smgr.SmgrRelation rel, long blocks) throws IOException;
    }

    /**
     * Buffered {@code pwrite} through the relation's own descriptors by the storage manager's
     * {@link SmgrBulkWriter}, each segment preallocated with {@code fallocate(KEEP_SIZE)}, and
     * writeback of every chunk started at once with {@code sync_file_range(SYNC_FILE_RANGE_WRITE)}
     * so the disk works while pages are built and the final fsync has little left to do.
     */
    static Factory buffered() {
        return buffered(true, true);
    }

    /** {@link #buffered()} with its two measures chosen (for benchmarks): preallocation, early writeback. */
    static Factory buffered(boolean preallocate, boolean startWriteback) {
        int flags = (preallocate ? SmgrBulkWriter.PREALLOCATE : 0) | (startWriteback ? SmgrBulkWriter.START_WRITEBACK : 0);
        return (rel, blocks) -> SmgrSink.open(rel, blocks, flags);
    }

    /**
     * {@code O_DIRECT} writes by the storage manager's {@link SmgrBulkWriter} on descriptors of its
     * own (no page-cache copy, and the disk writes while pages are built), each segment allocated
     * at its final size first, fsync at the end; {@link #buffered()}'s writes where the file system
     * refuses {@code O_DIRECT}. The default of {@link Loader#Loader()}.
     */
    static Factory direct() {
        return (rel, blocks) -> SmgrSink.open(rel, blocks,
                SmgrBulkWriter.DIRECT | SmgrBulkWriter.PREALLOCATE | SmgrBulkWriter.START_WRITEBACK);
    }

    /**
     * Asynchronous writes through the buffer manager's I/O method ({@code io_method}): a
     * {@link org.pageio.bufmgr.BulkWriter} on a session of {@code pool} opened by the writer
     * thread, fed straight from the loader's chunks (no copy), {@code writeBlocks} pages per
     * {@code writev}, at most {@code inFlight} in flight, the relation allocated at its final size
     * with {@code fallocate} first (so no write extends a file and O_DIRECT writes run in
     * parallel), fsync through the method at the end. Writes go through the relation's
     * descriptors: buffered, or {@code O_DIRECT} when the method bypasses the page cache
     * ({@code io_method=direct}). Counted in {@code stat_io} (bulkwrite extends, fsyncs) under
     * {@code kind}.
     */
    static Factory bulk(org.pageio.bufmgr.BufferPool pool, String kind, int writeBlocks, int inFlight) {
        return bulk(pool, kind, writeBlocks, inFlight, BulkSink.SYNC_EVERY_BY_METHOD);
    }

    /**
     * {@link #bulk(org.pageio.bufmgr.BufferPool, String, int, int)} with early fsyncs every
     * {@code syncEvery} blocks and at each segment end ({@link org.pageio.bufmgr.BulkWriter#syncEvery};
     * {@code 0}: one fsync per segment at the end only; {@code -1}: 16384 blocks (128 MiB) unless
     * the pool's method is {@code sync}, then 0 — the default).
     */
    static Factory bulk(org.pageio.bufmgr.BufferPool pool, String kind, int writeBlocks, int inFlight, long syncEvery) {
        return (rel, blocks) -> new BulkSink(pool, kind, rel, blocks, writeBlocks, inFlight, syncEvery);
    }

    /**
     * {@link #bulk(org.pageio.bufmgr.BufferPool, String, int, int)} with the defaults: 1 MiB writes, 8 in flight
     * on O_DIRECT descriptors and 2 on buffered ones ({@code inFlight = -1}), an early fsync every
     * 128 MiB through an asynchronous method (none with {@code sync}).
     */
    static Factory bulk(org.pageio.bufmgr.BufferPool pool, String kind) {
        return bulk(pool, kind, BulkSink.DEFAULT_WRITE_BLOCKS, BulkSink.IN_FLIGHT_BY_DESCRIPTORS);
    }

    /** Plain buffered {@code pwrite}s and one fsync at the end (the old loader; for comparison). */
    static Factory plain() {
        return buffered(false, false);
    }
}
