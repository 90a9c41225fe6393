package org.pageio.table.load;

import java.lang.foreign.MemorySegment;
import org.pageio.posix.PosixException;

/**
 * Where the loader's finished pages go: the seam between building pages and writing them. The
 * loader's writer thread calls {@link #write} with runs of whole pages in ascending block order,
 * then {@link #finish} once, then {@link #close} (also after a failure). An implementation may
 * write synchronously ({@link #buffered}, {@link #direct}) or start asynchronous writes and wait
 * for them in {@link #finish} — but it must not keep {@code pages} after {@code write} returns
 * unless it copies them: the loader refills the memory as soon as {@code write} returns.
 *
 * <p>One thread (the loader's writer) calls every method.
 */
public interface PageSink extends AutoCloseable {

    /**
     * Writes {@code n} pages from {@code pages} ({@code n × 8192} bytes, 4096-aligned) at
     * {@code block}. Errors name the call, the file and the blocks.
     */
    void write(long block, MemorySegment pages, int n) throws PosixException;

    /** Makes everything written durable (fsync of every segment written). */
    void finish() throws PosixException;

    /** Releases descriptors the sink opened itself; never throws. */
    @Override
    void close();

    /** Creates the sink for one load of {@code blocks} blocks into a new relation. */
    @FunctionalInterface
    interface Factory {
        PageSink open(org.pageio.bufmgr.smgr.SmgrRelation rel, long blocks) throws PosixException;
    }

    /**
     * Buffered {@code pwrite} through the relation's own descriptors, each segment preallocated with
     * {@code fallocate}, and writeback of every chunk started at once with
     * {@code sync_file_range(SYNC_FILE_RANGE_WRITE)} so the disk works while pages are built and
     * the final fsync has little left to do.
     */
    static Factory buffered() {
        return buffered(true, true);
    }

    /** {@link #buffered()} with its two measures chosen (for benchmarks): preallocation, early writeback. */
    static Factory buffered(boolean preallocate, boolean startWriteback) {
        return (rel, blocks) -> new BufferedSink(rel, blocks, preallocate, startWriteback);
    }

    /**
     * {@code O_DIRECT} writes on descriptors of the sink's own (no page-cache copy, and the disk
     * writes while pages are built), fsync at the end; {@link #buffered()} where the file system
     * refuses {@code O_DIRECT}. The loader's default.
     */
    static Factory direct() {
        return DirectSink::open;
    }

    /** Plain buffered {@code pwrite}s and one fsync at the end (the old loader; for comparison). */
    static Factory plain() {
        return buffered(false, false);
    }
}
