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
import org.pageio.bufmgr.stats.StatIo.IoObject;
import org.pageio.posix.PosixException;

/**
 * Bulk loading of a new relation through asynchronous writes (PostgreSQL's {@code bulk_write.c},
 * which writes synchronously; here the writes go through the session's I/O handles): a private
 * ring of {@code slots × writeBlocks} pages, 4096-aligned (so O_DIRECT works), outside the shared
 * buffers, as PostgreSQL's bulk writer is. The caller fills pages in block order
 * ({@link #nextPage}, {@link #pageFilled}); each full slot (or a slot cut at a segment end) becomes
 * one {@code writev} in flight while the next slot is filled; a slot is reused after its write
 * completed. Checksums are computed when a slot is written. Space is reserved ahead in steps of
 * {@link #RESERVE_BLOCKS} with {@code fallocate(KEEP_SIZE)}. {@link #finish} waits for every
 * write and fsyncs the segments written, through the method's fsync handles.
 *
 * <p>A failed write is retried ({@link #WRITE_ATTEMPTS} in all) from the slot, which still holds
 * the pages; then the load fails naming relation, blocks and errno. stat_io counts the writes as
 * extends of the bulkwrite context (new blocks, as PostgreSQL counts them). Confined to the
 * session's thread; no allocation per page or per write.
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
    private final int slots;
    private final Arena arena;
    private final MemorySegment ring;
    private final long[] refs;
    private final IoReturn[] rets;
    private final long[] slotFirst;
    private final int[] slotCount;
    private final long[] addresses;
    private final int statBase;
    private int slot;
    private int filled;
    private long nextBlock;
    private long reservedTo;
    private long writes;
    private boolean finished;

    /**
     * @param firstBlock  the relation's current size (the first block to write)
     * @param writeBlocks pages per write (e.g. {@code io_combine_limit}: 16 = 128 kB)
     * @param inFlight    writes in flight at most (ring slots), e.g. 16
     */
    public BulkWriter(BufferSession session, SmgrRelation rel, long firstBlock, int writeBlocks, int inFlight) {
        if (writeBlocks < 1 || writeBlocks > session.pool().settings().ioMaxCombineLimit() * 64 || inFlight < 1) {
            throw new IllegalArgumentException("bulk write of " + writeBlocks + " blocks × " + inFlight + " in flight");
        }
        this.session = session;
        this.io = session.io();
        this.rel = rel;
        this.checksums = session.pool().settings().dataChecksums();
        this.writeBlocks = writeBlocks;
        this.slots = inFlight + 1; // one being filled
        this.arena = Arena.ofShared();
        this.ring = arena.allocate((long) slots * writeBlocks * Page.SIZE, 4096);
        this.refs = new long[slots];
        this.rets = new IoReturn[slots];
        this.slotFirst = new long[slots];
        this.slotCount = new int[slots];
        this.addresses = new long[writeBlocks];
        for (int i = 0; i < slots; i++) {
            refs[i] = IoHandle.NO_WAIT_REF;
            rets[i] = new IoReturn();
        }
        this.statBase = StatIo.base(session.kind(), IoObject.RELATION, IoContext.BULKWRITE);
        this.nextBlock = firstBlock;
        this.reservedTo = firstBlock;
    }

    /**
     * The page to fill for block {@link #nextBlockNumber()}: waits, if needed, for the write that
     * last used its slot.
     *
     * @throws AioException naming relation, blocks and errno when that write failed for good
     */
    public MemorySegment nextPage() throws java.io.IOException {
        if (filled == 0) {
            awaitSlot(slot);
            slotFirst[slot] = nextBlock;
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
        slotCount[slot] = filled;
        start(slot);
        slot = (slot + 1) % slots;
        filled = 0;
    }

    private void start(int s) throws PosixException {
        long first = slotFirst[s];
        int n = slotCount[s];
        if (first + n > reservedTo) {
            long step = Math.max(RESERVE_BLOCKS, first + n - reservedTo);
            rel.reserve(reservedTo, step);
            reservedTo += step;
        }
        long base = ring.address() + (long) s * writeBlocks * Page.SIZE;
        for (int i = 0; i < n; i++) {
            if (checksums) {
                MemorySegment page = ring.asSlice(((long) s * writeBlocks + i) * Page.SIZE, Page.SIZE);
                if (!Page.isNew(page)) {
                    Page.setChecksum(page, first + i);
                }
            }
            addresses[i] = base + (long) i * Page.SIZE;
        }
        int fd = rel.fd(first);
        IoHandle h = io.acquire();
        h.setReturn(rets[s]);
        refs[s] = h.waitRef();
        StatIo stats = session.pool().stats();
        stats.add(statBase, Column.EXTENDS, 1);
        stats.add(statBase, Column.EXTEND_BYTES, (long) n * Page.SIZE);
        writes++;
        rel.startWritev(h, fd, first, addresses, n);
    }

    /** Waits for the write of slot {@code s}, retrying it when it failed. */
    private void awaitSlot(int s) throws java.io.IOException {
        for (int attempt = 1; refs[s] != IoHandle.NO_WAIT_REF; attempt++) {
            long ref = refs[s];
            refs[s] = IoHandle.NO_WAIT_REF;
            io.awaitRef(ref);
            long r = rets[s].result();
            int status = IoResult.status(r);
            if (status == IoResult.OK) {
                return;
            }
            if (attempt >= WRITE_ATTEMPTS) {
                int errno = IoResult.result(r) < 0 ? -IoResult.result(r) : org.pageio.posix.Errno.ENOSPC;
                throw new AioException("bulk write failed after " + attempt + " attempts: " + rets[s].message(), errno,
                        rets[s].failure());
            }
            start(s); // the slot still holds the pages; a short write is written whole again
        }
    }

    /**
     * Writes what is left, waits for every write, then fsyncs the segments written (through the
     * method's fsync handles). Returns the number of blocks the relation has now.
     */
    public long finish() throws java.io.IOException {
        issue();
        for (int i = 0; i < slots; i++) {
            awaitSlot(i);
        }
        IoReturn ret = rets[0];
        for (long seg : rel.takeDirtySegments()) {
            long first = seg * rel.segmentBlocks();
            int fd = rel.fd(first);
            IoHandle h = io.acquire();
            h.setReturn(ret).setTarget(rel, SmgrRelation.targetData(first, 0));
            long ref = h.waitRef();
            h.startFsync(fd, false);
            io.awaitRef(ref);
            session.pool().stats().add(statBase, Column.FSYNCS, 1);
            if (IoResult.status(ret.result()) != IoResult.OK) {
                rel.registerDirtySegment(seg);
                throw new AioException("bulk write failed: could not fsync file " + rel.segmentPath(first) + ": "
                        + ret.message(), -IoResult.result(ret.result()), ret.failure());
            }
        }
        finished = true;
        return nextBlock;
    }

    /** Write I/Os issued so far. */
    public long writes() {
        return writes;
    }

    /** Waits for writes still in flight (without fsync) and frees the ring. */
    @Override
    public void close() {
        if (!finished) {
            io.drain();
        }
        arena.close();
    }
}
