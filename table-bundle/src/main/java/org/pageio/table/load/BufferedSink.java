package org.pageio.table.load;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;
import org.pageio.posix.Fallocate;
import org.pageio.posix.Posix;
import org.pageio.posix.PosixException;

/**
 * {@link PageSink#buffered()} (and {@link PageSink#plain()}): writes through
 * {@link SmgrRelation#write}; with {@code preallocate}, allocates each segment with
 * {@code fallocate(KEEP_SIZE)} when the first write reaches it; with {@code early}, starts
 * writeback of every write right after it with
 * {@code sync_file_range(SYNC_FILE_RANGE_WRITE)}. Without that, the kernel starts writing a new
 * file only when dirty memory passes {@code dirty_background_ratio} (gigabytes on a large
 * machine), so the whole table would go to disk inside the final fsync, after building.
 * Writer thread only.
 */
final class BufferedSink implements PageSink {

    private final SmgrRelation rel;
    private final long blocks;
    private final boolean preallocate;
    private final boolean early;
    private final Arena arena = Arena.ofConfined();
    private final CallState cs = CallState.allocate(arena);
    private long allocatedSegments;
    private boolean fallocateWorks = true;
    private boolean syncFileRangeWorks = true;

    BufferedSink(SmgrRelation rel, long blocks, boolean preallocate, boolean early) {
        this.rel = rel;
        this.blocks = blocks;
        this.preallocate = preallocate;
        this.early = early;
    }

    @Override
    public void write(long block, MemorySegment pages, int n) throws PosixException {
        rel.write(block, pages, n); // creates the segment files it reaches
        if (preallocate) {
            preallocate(block + n);
        }
        if (early && syncFileRangeWorks) {
            for (long b = block; b < block + n; ) {
                int part = (int) Math.min(block + n - b, rel.maxCombine(b));
                long r = SyncFileRange.call(cs, rel.fd(b), rel.segmentOffset(b), (long) part * Page.SIZE,
                        SyncFileRange.WRITE);
                if (r < 0) {
                    // a hint only: without it the final fsync does the writing
                    syncFileRangeWorks = false;
                    break;
                }
                b += part;
            }
        }
    }

    /**
     * fallocate of every segment that blocks below {@code end} reach, once each, right after the
     * first write into it created the file: the rest of the segment is allocated in one go.
     */
    private void preallocate(long end) throws PosixException {
        long seg = rel.segmentBlocks();
        while (fallocateWorks && allocatedSegments * seg < end) {
            long first = allocatedSegments * seg;
            long len = Math.min(seg, blocks - first) * Page.SIZE;
            try {
                Posix.fallocate(rel.fd(first), Fallocate.FALLOC_FL_KEEP_SIZE, 0, len, rel.segmentPath(first));
            } catch (PosixException e) {
                if (e.errno() != Errno.EOPNOTSUPP) {
                    throw e; // ENOSPC and friends: better now than in the middle of the segment
                }
                fallocateWorks = false;
            }
            allocatedSegments++;
        }
    }

    @Override
    public void finish() throws PosixException {
        rel.sync();
    }

    @Override
    public void close() {
        arena.close();
    }
}
