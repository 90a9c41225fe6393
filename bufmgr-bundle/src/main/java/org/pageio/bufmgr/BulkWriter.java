package org.pageio.bufmgr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pageio.api.AioException;
import org.pageio.api.IoHandle;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.api.IoSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.bufmgr.stats.StatIo.IoContext;

/**
 * Bulk loading of a new relation through asynchronous writes (PostgreSQL's {@code bulk_write.c},
 * which writes synchronously; here the writes go through the session's I/O handles). Two ways to
 * hand it pages, both in ascending block order, not mixed in one load:
 * <ul>
 *   <li><b>Its own ring</b> ({@link #nextPage}, {@link #pageFilled}): a private ring of
 *       {@code (inFlight + 1) × writeBlocks} pages, 4096-aligned (so O_DIRECT works), outside the
 *       shared buffers, as PostgreSQL's bulk writer is. Each full slot (or a slot cut at a segment
 *       end) becomes one {@code writev} in flight while the next slot is filled; a slot is reused
 *       after its write completed. Checksums are computed when a slot is written.</li>
 *   <li><b>The caller's memory</b> ({@link #write}, {@link #writtenThrough}, {@link #awaitWritten}):
 *       runs of finished pages (checksums already set) in 4096-aligned memory the caller keeps
 *       untouched until {@link #writtenThrough} passes them; each run is cut into writes of
 *       {@code writeBlocks} (and at segment ends), at most {@code inFlight} in flight. No copy:
 *       the table loader's chunk ring is the bulk-write ring then.</li>
 * </ul>
 * Space is reserved ahead in steps of {@link #RESERVE_BLOCKS} with {@code fallocate(KEEP_SIZE)}, or
 * all at once with the file sizes set when the caller knows the final size ({@link #extendTo}:
 * needed for asynchronous {@code O_DIRECT} writes to run in parallel).
 * {@link #finish} waits for every write and fsyncs the segments written, through the method's
 * fsync handles.
 *
 * <p>A failed write is retried ({@link #WRITE_ATTEMPTS} in all) from the same memory, which still
 * holds the pages; then the load fails naming relation, blocks and errno. stat_io counts the
 * writes as extends of the bulkwrite context (new blocks, as PostgreSQL counts them). Confined to
 * the session's thread (the session is owner-bound); no allocation per page or per write.
 */
public final class BulkWriter implements AutoCloseable {

    /** Space reserved ahead per fallocate: 64 MiB. */
    public static final long RESERVE_BLOCKS = 8192;
    static final int WRITE_ATTEMPTS = 3;

    private final BufferSession session;
    private final IoSession io;
    private final SmgrRelation rel;
    private final boolean checksums;
    private final int writeBlocks;
    private final int inFlight;
    private final int slots;
    private final Arena arena;
    private final MemorySegment ring;
    private final long[] addresses;

    // The writes in flight, oldest first: a FIFO of `slots` entries (head, count). Entry i's write
    // covers blocks qFirst[i] .. qFirst[i] + qCount[i] - 1 from memory at qAddr[i]; qRef[i] is its
    // wait reference (NO_WAIT_REF once complete), rets[i] receives its outcome.
    private final long[] qRef;
    private final IoReturn[] rets;
    private final long[] qFirst;
    private final int[] qCount;
    private final long[] qAddr;
    private final int[] qAttempts;
    private int qHead;
    private int qSize;

    // Early fsyncs (syncEvery > 0): at most one fsync in flight, of segment syncSeg, started when
    // every block below syncThrough was written; once it succeeds, blocks below durableThrough are
    // durable and finish() skips the segments that lie wholly below it.
    private long syncEvery;
    private long syncRef = IoHandle.NO_WAIT_REF;
    private final IoReturn syncRet = new IoReturn();
    private long syncSeg;
    private long syncThrough;
    private long durableThrough;
    private final long firstBlock;
    private long earlyFsyncs;

    private int slot;
    private int filled;
    private long slotFirst;
    private long nextBlock;
    private long reservedTo;
    private long writes;
    private boolean finished;

    /**
     * @param firstBlock  the relation's current size (the first block to write)
     * @param writeBlocks pages per write (e.g. {@code io_combine_limit}: 16 = 128 kB; 128 = 1 MiB)
     * @param inFlight    writes in flight at most, e.g. 16
     */
    public BulkWriter(BufferSession session, SmgrRelation rel, long firstBlock, int writeBlocks, int inFlight) {
        this(session, rel, firstBlock, writeBlocks, inFlight, true);
    }

    /**
     * @param ownRing whether to allocate the private ring ({@link #nextPage}); {@code false} for a
     *                writer fed only through {@link #write} from the caller's memory
     */
    public BulkWriter(BufferSession session, SmgrRelation rel, long firstBlock, int writeBlocks, int inFlight,
            boolean ownRing) {
        if (writeBlocks < 1 || writeBlocks > session.pool().settings().ioMaxCombineLimit() * 64 || inFlight < 1) {
            throw new IllegalArgumentException("bulk write of " + writeBlocks + " blocks × " + inFlight + " in flight");
        }
        this.session = session;
        this.io = session.io();
        this.rel = rel;
        this.checksums = session.pool().settings().dataChecksums();
        this.writeBlocks = writeBlocks;
        this.inFlight = inFlight;
        this.slots = inFlight + 1; // one being filled
        this.arena = Arena.ofShared();
        this.ring = ownRing ? arena.allocate((long) slots * writeBlocks * Page.SIZE, 4096) : null;
        this.addresses = new long[writeBlocks];
        this.qRef = new long[slots];
        this.rets = new IoReturn[slots];
        this.qFirst = new long[slots];
        this.qCount = new int[slots];
        this.qAddr = new long[slots];
        this.qAttempts = new int[slots];
        for (int i = 0; i < slots; i++) {
            qRef[i] = IoHandle.NO_WAIT_REF;
            rets[i] = new IoReturn();
        }
        this.nextBlock = firstBlock;
        this.reservedTo = firstBlock;
        this.durableThrough = firstBlock;
        this.firstBlock = firstBlock;
    }

    /**
     * Makes the writes durable while the load goes on instead of all at the end: whenever every
     * block of a segment has been written, or {@code blocks} more blocks of the current segment
     * have, an fsync of that segment is started through the method (one at a time), and
     * {@link #finish} fsyncs only the segments not wholly covered by a completed one. With an
     * asynchronous method the fsync — the device transfer of what the page cache holds — runs
     * while the caller builds and writes the next pages; with {@code io_method=sync} it runs in
     * the issuing thread, as every other I/O does. The durability rule is unchanged: a segment
     * counts as synced only by an fsync started after its writes completed, and {@link #finish}
     * returns only when every block written is covered by a completed fsync. {@code 0} (the
     * default): fsync only in {@link #finish}. Call before the first write.
     */
    public BulkWriter syncEvery(long blocks) {
        if (blocks < 0) {
            throw new IllegalArgumentException("syncEvery = " + blocks + " blocks: 0 (only at the end) or more");
        }
        this.syncEvery = blocks;
        return this;
    }

    /** Fsyncs started before {@link #finish} ({@link #syncEvery}). */
    public long earlyFsyncs() {
        return earlyFsyncs;
    }

    /**
     * The caller knows the relation's final size: allocates blocks {@code [nextBlockNumber(), end)}
     * now, one {@code fallocate} per segment that sets the file sizes (PostgreSQL's
     * {@code mdzeroextend}; zeros written where the file system cannot), instead of reserving
     * ahead with {@code KEEP_SIZE}. So no write extends a file: ext4 completes an
     * {@code O_DIRECT} write that moves the end of file before returning (each waits, whatever the
     * queue depth: fio on this machine's ext4, kernel 6.18, 466 MiB/s with the file allocated, 106
     * without), which keeps a direct load at one write in flight. Until they are written,
     * the blocks read as new (all-zero) pages.
     */
    public void extendTo(long end) throws org.pageio.posix.PosixException {
        if (end > reservedTo) {
            rel.extend(reservedTo, end - reservedTo);
            reservedTo = end;
        }
    }

    // ------------------------------------------------------------------ the private ring

    /**
     * The page to fill for block {@link #nextBlockNumber()}: waits, if needed, for the write that
     * last used its slot.
     *
     * @throws AioException naming relation, blocks and errno when that write failed for good
     */
    public MemorySegment nextPage() throws java.io.IOException {
        if (ring == null) {
            throw new IllegalStateException("this bulk writer has no ring of its own: hand it pages with write()");
        }
        if (filled == 0) {
            // slot `slot` is in flight only when every slot is: its write is then the oldest
            while (qSize > inFlight) {
                awaitOldest();
            }
            slotFirst = nextBlock;
        }
        return ring.asSlice(((long) slot * writeBlocks + filled) * Page.SIZE, Page.SIZE);
    }

    /** The block the next page will be. */
    public long nextBlockNumber() {
        return nextBlock;
    }

    /** The page from {@link #nextPage} is filled: counts it, and writes the slot when it is full. */
    public void pageFilled() throws java.io.IOException {
        filled++;
        nextBlock++;
        if (filled == writeBlocks || nextBlock % rel.segmentBlocks() == 0) {
            issue();
        }
    }

    /** Writes the slot being filled and moves to the next one. */
    private void issue() throws java.io.IOException {
        if (filled == 0) {
            return;
        }
        long base = ring.address() + (long) slot * writeBlocks * Page.SIZE;
        if (checksums) {
            for (int i = 0; i < filled; i++) {
                MemorySegment page = ring.asSlice(((long) slot * writeBlocks + i) * Page.SIZE, Page.SIZE);
                if (!Page.isNew(page)) {
                    Page.setChecksum(page, slotFirst + i);
                }
            }
        }
        push(slotFirst, filled, base);
        slot = (slot + 1) % slots;
        filled = 0;
    }

    // ------------------------------------------------------------------ the caller's memory

    /**
     * Starts writing {@code n} finished pages (checksums set) from {@code pages} ({@code n × 8192}
     * bytes, 4096-aligned) at block {@link #nextBlockNumber()}, in writes of {@code writeBlocks}
     * cut at segment ends, waiting for the oldest writes while {@code inFlight} are in flight. The
     * caller must not change {@code pages} until {@link #writtenThrough} ≥ the first block +
     * {@code n} (or {@link #awaitWritten}, {@link #finish}, {@link #close} returned).
     *
     * @throws AioException naming relation, blocks and errno when a write failed for good
     */
    public void write(MemorySegment pages, int n) throws java.io.IOException {
        if (filled != 0) {
            throw new IllegalStateException("write() while a page of the private ring is being filled");
        }
        if ((pages.address() & 4095) != 0 || pages.byteSize() < (long) n * Page.SIZE) {
            throw new IllegalArgumentException("bulk write of " + n + " pages from memory at 0x" + Long.toHexString(pages.address())
                    + " (" + pages.byteSize() + " bytes): needs n × 8192 bytes, 4096-aligned");
        }
        long base = pages.address();
        int done = 0;
        while (done < n) {
            long b = nextBlock;
            int part = (int) Math.min(Math.min(n - done, writeBlocks), rel.maxCombine(b));
            while (qSize >= inFlight) {
                awaitOldest();
            }
            push(b, part, base + (long) done * Page.SIZE);
            nextBlock += part;
            done += part;
        }
    }

    /**
     * Every block below the returned one is written (its write completed): polls the writes in
     * flight, oldest first, without blocking. A failed write is started again.
     *
     * @throws AioException naming relation, blocks and errno when a write failed for good
     */
    public long writtenThrough() throws java.io.IOException {
        while (qSize > 0) {
            int i = qHead;
            if (!io.checkRefDone(qRef[i])) {
                break;
            }
            qRef[i] = IoHandle.NO_WAIT_REF;
            if (!completed(i)) {
                break; // started again
            }
            pop();
        }
        long through = qSize > 0 ? qFirst[qHead] : nextBlock;
        syncAhead(through);
        return through;
    }

    /** Waits until every block below {@code end} is written. */
    public void awaitWritten(long end) throws java.io.IOException {
        while (qSize > 0 && qFirst[qHead] < end) {
            awaitOldest();
        }
    }

    // ------------------------------------------------------------------ the writes in flight

    private void push(long first, int n, long address) throws java.io.IOException {
        int i = (qHead + qSize) % slots;
        qFirst[i] = first;
        qCount[i] = n;
        qAddr[i] = address;
        qAttempts[i] = 0;
        qSize++;
        start(i);
        if (syncEvery > 0) {
            writtenThrough(); // reaps what completed, so an early fsync starts as soon as it is due
        }
    }

    private void pop() {
        qHead = (qHead + 1) % slots;
        qSize--;
    }

    private void start(int i) throws org.pageio.posix.PosixException {
        long first = qFirst[i];
        int n = qCount[i];
        if (first + n > reservedTo) {
            long step = Math.max(RESERVE_BLOCKS, first + n - reservedTo);
            rel.reserve(reservedTo, step);
            reservedTo += step;
        }
        for (int k = 0; k < n; k++) {
            addresses[k] = qAddr[i] + (long) k * Page.SIZE;
        }
        int fd = rel.fd(first);
        IoHandle h = io.acquire();
        h.setReturn(rets[i]);
        qRef[i] = h.waitRef();
        qAttempts[i]++;
        StatIo stats = session.pool().stats();
        int statBase = session.statBase(IoContext.BULKWRITE); // after the handle: the method that does this write
        stats.add(statBase, Column.EXTENDS, 1);
        stats.add(statBase, Column.EXTEND_BYTES, (long) n * Page.SIZE);
        writes++;
        rel.wroteAroundPool(); // pages outside shared buffers: nothing to write again after a failed fsync
        rel.startWritev(h, fd, first, addresses, n);
    }

    /** Waits for the oldest write, starting it again while it fails, and removes it. */
    private void awaitOldest() throws java.io.IOException {
        int i = qHead;
        do {
            long ref = qRef[i];
            qRef[i] = IoHandle.NO_WAIT_REF;
            io.awaitRef(ref);
        } while (!completed(i));
        pop();
        syncAhead(qSize > 0 ? qFirst[qHead] : nextBlock);
    }

    /**
     * With {@link #syncEvery}: takes the outcome of the fsync in flight if it completed (polls,
     * never blocks), then starts the next one that is due, given that every block below
     * {@code written} has been written.
     *
     * @throws AioException naming the file and errno when an fsync failed
     */
    private void syncAhead(long written) throws java.io.IOException {
        if (syncEvery == 0) {
            return;
        }
        if (syncRef != IoHandle.NO_WAIT_REF) {
            if (!io.checkRefDone(syncRef)) {
                return;
            }
            syncDone();
        }
        long segBlocks = rel.segmentBlocks();
        long seg = durableThrough / segBlocks;
        long segEnd = (seg + 1) * segBlocks;
        if (written >= segEnd || written - durableThrough >= syncEvery) {
            startSync(seg, Math.min(written, segEnd));
        }
    }

    private void startSync(long seg, long through) throws org.pageio.posix.PosixException {
        long first = seg * rel.segmentBlocks();
        int fd = rel.fd(first);
        IoHandle h = io.acquire();
        h.setReturn(syncRet).setTarget(rel, SmgrRelation.targetData(first, 0));
        syncRef = h.waitRef();
        syncSeg = seg;
        syncThrough = through;
        earlyFsyncs++;
        h.startFsync(fd, false);
    }

    /** The fsync in flight is complete: blocks below its start mark are durable, or it failed. */
    private void syncDone() throws java.io.IOException {
        syncRef = IoHandle.NO_WAIT_REF;
        session.pool().stats().add(session.statBase(IoContext.BULKWRITE), Column.FSYNCS, 1);
        if (IoResult.status(syncRet.result()) != IoResult.OK) {
            rel.registerDirtySegment(syncSeg);
            throw new AioException("bulk write failed: could not fsync file " + rel.segmentPath(syncSeg * rel.segmentBlocks())
                    + ": " + syncRet.message(), -IoResult.result(syncRet.result()), syncRet.failure());
        }
        durableThrough = syncThrough;
    }

    /**
     * The outcome of write {@code i}, which is complete: true when it succeeded; false when it
     * failed and was started again (the memory still holds the pages; a short write is written
     * whole again).
     *
     * @throws AioException after {@link #WRITE_ATTEMPTS} failures
     */
    private boolean completed(int i) throws java.io.IOException {
        long r = rets[i].result();
        if (IoResult.status(r) == IoResult.OK) {
            return true;
        }
        if (qAttempts[i] >= WRITE_ATTEMPTS) {
            int errno = IoResult.result(r) < 0 ? -IoResult.result(r) : org.pageio.posix.Errno.ENOSPC;
            throw new AioException("bulk write failed after " + qAttempts[i] + " attempts: " + rets[i].message(), errno,
                    rets[i].failure());
        }
        start(i);
        return false;
    }

    // ------------------------------------------------------------------ the end

    /**
     * Writes what is left, waits for every write, then fsyncs the segments written (through the
     * method's fsync handles). Returns the number of blocks the relation has now.
     */
    public long finish() throws java.io.IOException {
        if (ring != null) {
            issue();
        }
        while (qSize > 0) {
            awaitOldest();
        }
        if (syncRef != IoHandle.NO_WAIT_REF) {
            long ref = syncRef;
            io.awaitRef(ref);
            syncDone();
        }
        IoReturn ret = rets[0];
        for (long seg : rel.takeDirtySegments()) {
            long first = seg * rel.segmentBlocks();
            if (first >= firstBlock - firstBlock % rel.segmentBlocks() && first + rel.segmentBlocks() <= durableThrough) {
                continue; // wholly written by this writer before an fsync that completed (syncEvery)
            }
            int fd = rel.fd(first);
            IoHandle h = io.acquire();
            h.setReturn(ret).setTarget(rel, SmgrRelation.targetData(first, 0));
            long ref = h.waitRef();
            h.startFsync(fd, false);
            io.awaitRef(ref);
            session.pool().stats().add(session.statBase(IoContext.BULKWRITE), Column.FSYNCS, 1);
            if (IoResult.status(ret.result()) != IoResult.OK) {
                rel.registerDirtySegment(seg);
                throw new AioException("bulk write failed: could not fsync file " + rel.segmentPath(first) + ": "
                        + ret.message(), -IoResult.result(ret.result()), ret.failure());
            }
        }
        finished = true;
        return nextBlock;
    }

    /** Write I/Os issued so far (retries included). */
    public long writes() {
        return writes;
    }

    /**
     * Waits for writes still in flight (without fsync: after a failure nothing is made durable) and
     * frees the ring. After it returns no write reads the caller's memory any more.
     */
    @Override
    public void close() {
        if (!finished) {
            io.drain();
        }
        arena.close();
    }
}
