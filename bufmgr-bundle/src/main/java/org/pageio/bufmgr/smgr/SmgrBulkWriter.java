package org.pageio.bufmgr.smgr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.BitSet;
import org.pageio.posix.CallState;
import org.pageio.posix.DirectIo;
import org.pageio.posix.Errno;
import org.pageio.posix.Fallocate;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;
import org.pageio.posix.PosixException;

/**
 * Synchronous bulk writes of a new relation's pages straight to its segment files, around the
 * buffer pool (PostgreSQL's {@code smgrextend} of a bulk load, then {@code smgrimmedsync}):
 * {@link #write} writes a run of whole pages at a block offset with {@code pwrite}, split at
 * segment ends, creating each segment file as the run reaches it; {@link #finish} fsyncs every
 * segment written. Made by {@link SmgrRelation#bulkWriter}; {@code flags} choose how:
 * <ul>
 *   <li>{@link #DIRECT}: {@code O_DIRECT} on descriptors of the writer's own, one per segment
 *       (the relation's own may be buffered): pages go from the caller's memory to the device
 *       without a page-cache copy. Where the file system refuses {@code O_DIRECT} ({@code EINVAL}
 *       when segment 0 is opened, e.g. an older tmpfs) the writer writes buffered instead, with the
 *       other flags as given; {@link #direct()} says which.</li>
 *   <li>{@link #PREALLOCATE}: each segment allocated for the blocks {@code expectedBlocks} puts in
 *       it when the writer first reaches it, in one {@code fallocate}. With {@code O_DIRECT} the file
 *       size is set too: ext4 completes an {@code O_DIRECT} write that extends a file before it
 *       returns, and a write inside the file lets the kernel run the pieces of one large write in
 *       parallel. Buffered, the size is kept ({@code FALLOC_FL_KEEP_SIZE}) and grows with the writes.
 *       Does nothing where the file system cannot ({@code EOPNOTSUPP}); any other error
 *       ({@code ENOSPC}) fails the write that needed the segment.</li>
 *   <li>{@link #START_WRITEBACK}: buffered only: after each write, its range's write-back starts at
 *       once ({@code sync_file_range(SYNC_FILE_RANGE_WRITE)}). Without it the kernel starts writing a
 *       new file only when dirty memory passes {@code dirty_background_ratio} (gigabytes on a large
 *       machine), so the whole relation would go to disk inside the final fsync. A hint: if the call
 *       fails, the writer stops making it and the fsync does the work.</li>
 * </ul>
 * Buffered writes go through the relation's descriptors ({@link SmgrRelation#fd}), {@code O_DIRECT}
 * ones if the storage manager opens them so. The pages must be whole {@link StorageManager#BLCKSZ}
 * blocks in memory aligned to {@link DirectIo#ALIGNMENT} (checked with {@code O_DIRECT}).
 *
 * <p>Rules: the blocks written must not be in the buffer pool (a new relation, or blocks past its
 * end nothing has read), since the writer bypasses it; the segments written are not registered for
 * the next checkpoint: {@link #finish} makes them durable, and without it nothing is. Errors are
 * {@link PosixException}s naming the call, the file, the blocks, the relation and the errno.
 * One thread: the one that made the writer calls every method (its call state lives in a confined
 * arena); no allocation per page.
 */
public final class SmgrBulkWriter implements AutoCloseable {

    /** Write with {@code O_DIRECT} on the writer's own descriptors; buffered where the file system refuses it. */
    public static final int DIRECT = 1;
    /** Allocate each segment for the expected blocks when first reached ({@code fallocate}). */
    public static final int PREALLOCATE = 2;
    /** Start write-back of each buffered write at once ({@code sync_file_range}); no effect with {@code O_DIRECT}. */
    public static final int START_WRITEBACK = 4;

    private static final int ALL_FLAGS = DIRECT | PREALLOCATE | START_WRITEBACK;
    private static final int BLCKSZ = StorageManager.BLCKSZ;

    private final SmgrRelation rel;
    private final long expectedBlocks;
    private final boolean preallocate;
    private final boolean startWriteback;
    private final long segmentBlocks;
    private final Arena arena = Arena.ofConfined();
    private final CallState cs = CallState.allocate(arena);
    /** Whether writes go through {@link #directFds}; false after an {@code EINVAL} fallback. */
    private final boolean direct;
    /** The writer's O_DIRECT descriptors by segment, -1 = not open. */
    private int[] directFds = new int[0];
    /** Segments written since the last {@link #finish} (fsynced by it). */
    private final BitSet written = new BitSet();
    /** Segments preallocated (or found not to need it). */
    private final BitSet allocated = new BitSet();
    /** One past the highest block written (for messages). */
    private long end;
    private boolean fallocateWorks = true;
    private boolean syncFileRangeWorks = true;
    private boolean closed;

    SmgrBulkWriter(SmgrRelation rel, long expectedBlocks, int flags) throws PosixException {
        if ((flags & ~ALL_FLAGS) != 0) {
            throw new IllegalArgumentException("bulk writer flags " + flags + ": only DIRECT (1), PREALLOCATE (2)"
                    + " and START_WRITEBACK (4) are known");
        }
        if (expectedBlocks < 0) {
            throw new IllegalArgumentException("expected blocks " + expectedBlocks + " of relation " + rel + " is negative");
        }
        this.rel = rel;
        this.expectedBlocks = expectedBlocks;
        this.preallocate = (flags & PREALLOCATE) != 0;
        this.startWriteback = (flags & START_WRITEBACK) != 0;
        this.segmentBlocks = rel.segmentBlocks();
        boolean d = (flags & DIRECT) != 0;
        try {
            if (d) {
                try {
                    directFd(0);
                } catch (PosixException e) {
                    if (e.errno() != Errno.EINVAL) {
                        throw e;
                    }
                    d = false; // O_DIRECT refused here: buffered, with the other flags
                }
            }
            if (!d) {
                rel.fd(0, true);
            }
        } catch (PosixException | RuntimeException e) {
            close();
            throw e;
        }
        this.direct = d;
    }

    /** The relation written. */
    public SmgrRelation relation() {
        return rel;
    }

    /** Whether the writes go with {@code O_DIRECT} (false when not asked for, or refused by the file system). */
    public boolean direct() {
        return direct;
    }

    /**
     * Writes {@code n} pages from {@code pages} ({@code n × 8192} bytes) at {@code block}, one
     * {@code pwrite} per segment the run touches (looping on short writes), creating segment files
     * (and preallocating them, with {@link #PREALLOCATE}) as it reaches them. Returns when the bytes
     * are written (with {@code O_DIRECT}: on the device, not yet durable; buffered: in the page cache).
     *
     * @throws PosixException naming the call, the file, the blocks, the relation and the errno
     */
    public void write(long block, MemorySegment pages, int n) throws PosixException {
        if (closed) {
            throw new IllegalStateException("bulk writer of relation " + rel + " is closed");
        }
        rel.wroteAroundPool();
        if (n < 0 || block < 0 || pages.byteSize() < (long) n * BLCKSZ) {
            throw new IllegalArgumentException("bulk write of " + n + " pages at block " + block + " of relation " + rel
                    + " from " + pages.byteSize() + " bytes");
        }
        if (direct && pages.address() % DirectIo.ALIGNMENT != 0) {
            throw new IllegalArgumentException("O_DIRECT bulk write at block " + block + " of relation " + rel
                    + ": memory at 0x" + Long.toHexString(pages.address()) + " is not aligned to " + DirectIo.ALIGNMENT);
        }
        long done = 0;
        while (done < n) {
            long b = block + done;
            int part = (int) Math.min(n - done, rel.maxCombine(b));
            long seg = b / segmentBlocks;
            int fd = direct ? directFd(b) : rel.fd(b, true);
            if (preallocate && !allocated.get((int) seg)) {
                preallocate(fd, seg);
            }
            long off = rel.segmentOffset(b);
            long len = (long) part * BLCKSZ;
            long pos = 0;
            while (pos < len) {
                long r = Posix.pwrite(cs, fd, pages.asSlice(done * BLCKSZ + pos, len - pos), len - pos, off + pos);
                if (r <= 0) {
                    long at = b + pos / BLCKSZ;
                    throw new PosixException("pwrite", rel.segmentPath(b), r < 0 ? (int) -r : Errno.EIO,
                            (r < 0 ? "" : "nothing written, ") + "bulk write of blocks " + at + ".." + (b + part - 1)
                                    + " of relation " + rel + (direct ? " (O_DIRECT)" : ""));
                }
                pos += r;
            }
            written.set((int) seg);
            if (startWriteback && !direct && syncFileRangeWorks
                    && SyncFileRange.call(cs, fd, off, len, SyncFileRange.WRITE) < 0) {
                syncFileRangeWorks = false; // a hint only: without it the final fsync does the writing
            }
            end = Math.max(end, b + part);
            done += part;
        }
    }

    /**
     * fsyncs every segment written since the last call (all of them the first time): afterwards the
     * pages written are durable.
     *
     * @throws PosixException naming the file, the segment's blocks, the relation and the errno; the
     *                        segments not yet fsynced stay to be fsynced by another call
     */
    public void finish() throws PosixException {
        if (closed) {
            throw new IllegalStateException("bulk writer of relation " + rel + " is closed");
        }
        for (int seg = written.nextSetBit(0); seg >= 0; seg = written.nextSetBit(seg + 1)) {
            long first = seg * segmentBlocks;
            int fd = direct ? directFds[seg] : rel.fd(first);
            int r = Posix.fsync(cs, fd);
            if (r < 0) {
                throw new PosixException("fsync", rel.segmentPath(first), -r, "segment " + seg + " (blocks " + first + ".."
                        + (Math.min(end, first + segmentBlocks) - 1) + ") of relation " + rel + ", written by a bulk write");
            }
            written.clear(seg);
        }
    }

    /**
     * Closes the writer's own descriptors (the relation's stay open); never throws. Writes not
     * followed by {@link #finish} may be lost in a crash. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int seg = 0; seg < directFds.length; seg++) {
            if (directFds[seg] >= 0) {
                try {
                    Posix.close(directFds[seg], rel.segmentPath(seg * segmentBlocks));
                } catch (PosixException e) {
                    // after fsync succeeded a close error has nothing left to lose; without it the
                    // relation is being given up
                }
                directFds[seg] = -1;
            }
        }
        arena.close();
    }

    /** The writer's O_DIRECT descriptor of the segment holding {@code block}, opened (and created) on first use. */
    private int directFd(long block) throws PosixException {
        int seg = (int) (block / segmentBlocks);
        if (seg >= directFds.length) {
            int old = directFds.length;
            directFds = Arrays.copyOf(directFds, seg + 1);
            Arrays.fill(directFds, old, directFds.length, -1);
        }
        if (directFds[seg] < 0) {
            // the relation's own (buffered) descriptors may also open this file: it is new (or these
            // blocks are past its end), so the page cache holds nothing of what is written here
            try {
                directFds[seg] = Posix.open(rel.segmentPath(block), OpenFlags.O_WRONLY | OpenFlags.O_CREAT | OpenFlags.O_DIRECT,
                        0600);
            } catch (PosixException e) {
                throw new PosixException("open", rel.segmentPath(block), e.errno(), "O_DIRECT, segment " + seg
                        + " of relation " + rel + ", needed for block " + block + " of a bulk write");
            }
        }
        return directFds[seg];
    }

    /** One fallocate for the blocks of segment {@code seg} that the expected size puts in it. */
    private void preallocate(int fd, long seg) throws PosixException {
        allocated.set((int) seg);
        long first = seg * segmentBlocks;
        long blocks = Math.min(segmentBlocks, expectedBlocks - first);
        if (!fallocateWorks || blocks <= 0) {
            return;
        }
        int mode = direct ? Fallocate.FALLOC_FL_DEFAULT : Fallocate.FALLOC_FL_KEEP_SIZE;
        try {
            Posix.fallocate(fd, mode, 0, blocks * BLCKSZ, rel.segmentPath(first));
        } catch (PosixException e) {
            if (e.errno() == Errno.EOPNOTSUPP) {
                fallocateWorks = false;
                return;
            }
            // ENOSPC and friends: better now than in the middle of the segment
            throw new PosixException("fallocate", rel.segmentPath(first), e.errno(), "preallocating blocks " + first + ".."
                    + (first + blocks - 1) + " (segment " + seg + ") of relation " + rel + " for a bulk write");
        }
    }
}
