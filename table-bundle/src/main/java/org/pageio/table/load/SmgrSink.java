package org.pageio.table.load;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import org.pageio.bufmgr.smgr.SmgrBulkWriter;
import org.pageio.bufmgr.smgr.SmgrRelation;

/**
 * {@link PageSink#direct()}, {@link PageSink#buffered()} and {@link PageSink#plain()}: synchronous
 * writes through the storage manager's {@link SmgrBulkWriter}, whose flags make the difference
 * ({@code O_DIRECT}, preallocation, early write-back); {@link #finish} is its fsync of every
 * segment written. Writer thread only (it opened the bulk writer).
 */
final class SmgrSink implements PageSink {

    private final SmgrBulkWriter writer;

    private SmgrSink(SmgrBulkWriter writer) {
        this.writer = writer;
    }

    /** A sink for a load of {@code blocks} blocks into {@code rel}, with {@link SmgrBulkWriter}'s {@code flags}. */
    static PageSink open(SmgrRelation rel, long blocks, int flags) throws IOException {
        return new SmgrSink(rel.bulkWriter(blocks, flags));
    }

    @Override
    public void write(long block, MemorySegment pages, int n) throws IOException {
        writer.write(block, pages, n);
    }

    @Override
    public void finish() throws IOException {
        writer.finish();
    }

    @Override
    public void close() {
        writer.close();
    }
}
