package org.pageio.measure.drill;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.pageio.bufmgr.smgr.StorageManager;

/**
 * The limit a scan of a table in shared buffers is held against: the table's pages copied once from
 * its segment files into one off-heap {@link MemorySegment}, and a loop that counts their tuples
 * with the scan's own per-page work ({@link SliceScan#countPage}), with no buffer manager: no
 * mapping lookup, no pin, no stream. Its pages are slices made once, as the buffer pool keeps one
 * per buffer, so the loop allocates nothing.
 *
 * <p>The pages are read-only once copied; any number of threads may count at once. {@link #close}
 * frees the memory (no count may run then).
 */
final class PlainPages implements AutoCloseable {

    private final Arena arena;
    private final MemorySegment[] pages;

    /**
     * Copies {@code blocks} pages of a relation whose segment files are {@code files}
     * ({@code segmentBlocks} blocks each).
     *
     * @throws IOException when a file is shorter than its blocks
     */
    PlainPages(List<Path> files, long segmentBlocks, long blocks) throws IOException {
        if (blocks > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(blocks + " blocks: too many to hold as one table in memory");
        }
        arena = Arena.ofShared();
        try {
            MemorySegment all = arena.allocate(blocks * StorageManager.BLCKSZ, StorageManager.BLCKSZ);
            long at = 0;
            for (int seg = 0; seg < files.size() && at < blocks; seg++) {
                long want = Math.min(segmentBlocks, blocks - at) * StorageManager.BLCKSZ;
                try (FileChannel ch = FileChannel.open(files.get(seg), StandardOpenOption.READ)) {
                    ByteBuffer dst = all.asSlice(at * StorageManager.BLCKSZ, want).asByteBuffer();
                    while (dst.hasRemaining()) {
                        if (ch.read(dst, dst.position()) < 0) {
                            throw new IOException(files.get(seg) + " ends after " + dst.position() + " bytes, before its "
                                    + want / StorageManager.BLCKSZ + " blocks");
                        }
                    }
                }
                at += want / StorageManager.BLCKSZ;
            }
            if (at != blocks) {
                throw new IOException(files.size() + " segment file(s) hold " + at + " of the " + blocks + " blocks");
            }
            pages = new MemorySegment[(int) blocks];
            for (int i = 0; i < pages.length; i++) {
                pages[i] = all.asSlice((long) i * StorageManager.BLCKSZ, StorageManager.BLCKSZ);
            }
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    long blocks() {
        return pages.length;
    }

    /**
     * The tuples of blocks {@code [first, first + count)}.
     *
     * @throws IllegalStateException when a page is not all-visible, as {@link SliceScan} would
     */
    long count(long first, long count) {
        long rows = 0;
        int end = (int) (first + count);
        for (int b = (int) first; b < end; b++) {
            int n = SliceScan.countPage(pages[b]);
            if (n < 0) {
                throw new IllegalStateException("block " + b + " is not all-visible");
            }
            rows += n;
        }
        return rows;
    }

    @Override
    public void close() {
        arena.close();
    }
}
