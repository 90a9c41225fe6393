package org.pageio.bufmgr;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import org.pageio.api.AioException;
import org.pageio.api.IoHandle;
import org.pageio.api.IoResult;
import org.pageio.api.IoSession;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.bufmgr.stats.StatIo.IoContext;
import org.pageio.bufmgr.stats.StatIo.IoObject;
import org.pageio.posix.Fadvise;
import org.pageio.posix.Posix;
import org.pageio.posix.PosixException;

/**
 * One thread's access to the buffer pool: its {@link IoSession}, its pins, its statistics row.
 * The two-phase read API lives here (PostgreSQL's {@code StartReadBuffers} /
 * {@code WaitReadBuffers}), as does the simple {@link #readBuffer} and read streams.
 *
 * <p>Confined to the thread that opened it, like the I/O session it wraps.
 *
 * <h2>Reading, and who reads a block</h2>
 * Only one session ever reads a given block at a time: a session claims a buffer's
 * IO_IN_PROGRESS by CAS before reading it. A session that finds a buffer under someone else's
 * read adopts that read's wait reference instead (PostgreSQL 19) and waits for it in
 * {@code waitReadBuffers}; if that read failed, it reads the block itself. Before blocking, a
 * session submits its own staged I/O (the AIO core does so in every wait).
 */
public final class BufferSession implements StreamingReads, AutoCloseable {

    private final BufferPool pool;
    private final IoSession io;
    private final StatIo stats;
    private final int kind;
    private final SharedBufferReadv readCallback;
    private final ReadBuffersOperation single;
    private final int[] singleBuffer = new int[1];
    private int pins;
    private BufferWriter writer;
    /** The method {@link #statSlot} belongs to; owner only. */
    private org.pageio.api.IoMethod statMethod;
    /** stat_io's slot of {@link #statMethod}, -1 before the first count; owner only. */
    private int statSlot = -1;
    /** Set by the clock sweep when it found only buffers pinned by I/O: one such I/O's wait reference. */
    long sweepBusyRef = IoHandle.NO_WAIT_REF;
    /**
     * Victims the current allocation passed over because their last write is not yet durable, and
     * the relation of the first (-1: none); the clock sweep's, reset per allocation.
     */
    int sweepUnsynced;
    int sweepUnsyncedRelation = -1;

    BufferSession(BufferPool pool, IoSession io, int kind) {
        this.pool = pool;
        this.io = io;
        this.stats = pool.stats();
        this.kind = kind;
        this.readCallback = new SharedBufferReadv(pool);
        this.single = new ReadBuffersOperation(this, 1);
    }

    public BufferPool pool() {
        return pool;
    }

    @Override
    public ReadStreamTotals streamTotals() {
        return pool.streamTotals();
    }

    @Override
    public IoSession io() {
        return io;
    }

    /** Pins this session holds now. */
    public int pinnedCount() {
        return pins;
    }

    /**
     * How many more buffers this session should pin (PostgreSQL's
     * {@code GetAdditionalPinLimit}): its proportional share of {@code shared_buffers}
     * ({@code shared_buffers / max_sessions}) minus the pins it holds; may be 0. Read streams size
     * their look-ahead with it, so one session cannot pin the whole pool.
     */
    @Override
    public int additionalPinLimit() {
        return Math.max(0, pool.settings().maxProportionalPins() - pins);
    }

    /** A reusable read operation for up to {@code maxBlocks} blocks. */
    @Override
    public ReadBuffersOperation newOperation(int maxBlocks) {
        return new ReadBuffersOperation(this, maxBlocks);
    }

    /** The page of a buffer this session pins. */
    public MemorySegment page(int buf) {
        return pool.page(buf);
    }

    @Override
    public BufMgrSettings settings() {
        return pool.settings();
    }

    @Override
    public org.pageio.api.IoMethod method() {
        return pool.method();
    }

    @Override
    public boolean defersReads() {
        return pool.defersReads();
    }

    // ------------------------------------------------------------------ simple reads

    /**
     * Returns a pinned, valid buffer holding {@code block} of {@code rel}, reading it if needed.
     *
     * @throws IOException naming the relation, block and what failed; nothing stays pinned then
     */
    public int readBuffer(SmgrRelation rel, long block, BufferAccessStrategy strategy) throws IOException {
        return readBuffer(rel, block, strategy, 0);
    }

    /**
     * {@link #readBuffer(SmgrRelation, long, BufferAccessStrategy)} with read flags
     * ({@link ReadBuffersOperation#STRICT}: the page as stored, whatever {@code zero_damaged_pages}
     * says).
     *
     * @throws IOException naming the relation, block and what failed; nothing stays pinned then
     * @since 2.5.0
     */
    public int readBuffer(SmgrRelation rel, long block, BufferAccessStrategy strategy, int flags) throws IOException {
        ReadBuffersOperation op = single;
        if (startReadBuffers(op, singleBuffer, 0, 0, rel, block, 1, ReadBuffersOperation.SYNCHRONOUSLY | flags, strategy)) {
            try {
                waitReadBuffers(op);
            } catch (IOException | RuntimeException e) {
                releaseBuffer(singleBuffer[0]);
                throw e;
            }
        }
        return singleBuffer[0];
    }

    /** Drops a pin. */
    @Override
    public void releaseBuffer(int buf) {
        pool.unpin(buf);
        pins--;
    }

    /**
     * Marks a buffer dirty whose content lock this session holds (between {@link #beginModify}
     * and {@link #endModify}).
     */
    public void markDirty(int buf) {
        pool.markDirty(buf);
    }

    // ------------------------------------------------------------------ modifying pages

    /**
     * Takes the content lock of a buffer this session pins, to change its page (PostgreSQL's
     * {@code LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE)}): waits while a write of the page is in flight
     * and while another session modifies it. Change the page, then {@link #endModify}.
     *
     * <p><b>Readers and the content lock.</b> Readers take no lock of their own; they read pinned
     * pages. Under this lock a change keeps every byte a reader may be reading meaningful at each
     * store (a tuple's header fields change in place, a new tuple is written before the line pointer
     * that points at it, and that line pointer before {@code pd_lower}); moving tuples (pruning's
     * defragmentation) needs {@link #conditionalLockForCleanup}, which no other pin may coexist with.
     */
    public void beginModify(int buf) {
        refuseIfNotDurable(pool.storage().relation(BufferPool.tagRelation(pool.tags[buf]))); // the tag is stable: pinned
        writer().lockForModify(buf);
    }

    /**
     * Makes the page of a buffer this session pins durable now ({@code FlushOneBuffer}, then the
     * relation's fsync): written through the bound method if dirty, waited for, and its segment
     * fsynced ({@code syncForReuse}, which a checkpoint's fsync of the same relation also
     * satisfies). What a system without WAL needs to order two page writes: a page that another
     * page will point at is flushed before the pointer is written. Call it holding the pin, not
     * the content lock.
     *
     * @throws IOException naming the relation, block and errno when the write still fails after a
     *         retry, or the fsync fails
     */
    public void flushBuffer(int buf) throws IOException {
        long tag = pool.tags[buf];
        SmgrRelation rel = pool.storage().relation(BufferPool.tagRelation(tag)); // the tag is stable: pinned
        for (int attempt = 0; attempt < 3 && (pool.state(buf) & BufferPool.DIRTY) != 0; attempt++) {
            writer().writeVictim(buf, null, true);
        }
        if ((pool.state(buf) & BufferPool.DIRTY) != 0) {
            int errno = pool.writeErrno[buf];
            throw new PosixException("pwritev", rel.segmentPath(BufferPool.tagBlock(tag)), errno,
                    "flushing block " + BufferPool.tagBlock(tag) + " of relation " + rel.locator());
        }
        long st = pool.state(buf);
        if ((st & BufferPool.UNSYNCED) != 0) {
            pool.syncForReuse(this, rel, true);
            if (rel.fsyncFailure() != null) {
                throw new IOException("flushing block " + BufferPool.tagBlock(tag) + " of relation " + rel.locator()
                        + ": it was written but cannot be made durable: " + rel.fsyncFailure());
            }
            st = pool.state(buf);
            if ((st & BufferPool.UNSYNCED) != 0) {
                pool.settleUnsynced(buf, st); // the fsync covered its write: no longer waiting for one
            }
        }
    }

    /**
     * Takes the cleanup lock of a buffer this session pins once, if it can at once (PostgreSQL's
     * {@code ConditionalLockBufferForCleanup}): the content lock, taken only when no other pin
     * exists, and held so that no other session pins the buffer until {@link #endModify} (a pin
     * asked for meanwhile waits). The holder may then move tuples on the page (pruning's
     * {@code PageRepairFragmentation}), which sessions that read pinned pages without a content lock
     * could otherwise see half moved. Returns false, holding nothing more than the pin, when another
     * session pins the buffer, modifies it or a write of it is in flight; the caller skips the work,
     * as {@code heap_page_prune_opt} does. Keep the section short and take no pin of this buffer in it.
     */
    public boolean conditionalLockForCleanup(int buf) {
        refuseIfNotDurable(pool.storage().relation(BufferPool.tagRelation(pool.tags[buf])));
        return pool.tryLockForCleanup(buf);
    }

    /**
     * A page of a relation whose fsync failed is not changed: the change could never be made
     * durable, and reporting it done would lose it silently.
     *
     * @throws IllegalStateException naming the relation, the failed fsync and what to do
     */
    private static void refuseIfNotDurable(SmgrRelation rel) {
        String why = rel.fsyncFailure();
        if (why != null) {
            throw new IllegalStateException("cannot modify relation " + rel.locator() + ": " + why);
        }
    }

    /**
     * Releases the content lock taken by {@link #beginModify} (or the cleanup lock taken by
     * {@link #conditionalLockForCleanup}), marking the buffer dirty when
     * {@code changed} (PostgreSQL's {@code MarkBufferDirty} + unlock). The checksum is computed when
     * the page is written, not here.
     */
    public void endModify(int buf, boolean changed) {
        writer().unlockModified(buf, changed);
    }

    /**
     * The relation is going away (PostgreSQL's {@code DropRelationBuffers} and its forgotten fsync
     * requests): every buffer of {@code rel} is invalidated — dirty ones discarded, not written —
     * after any I/O in flight on it completed, and the segments it registered for the next
     * checkpoint's fsync are forgotten; on the main fork, every other fork's buffers and requests too
     * (PostgreSQL's {@code DropRelationsAllBuffers}). Call it before unlinking the files, holding no pin on the
     * relation; others' pins are waited for (see {@code RelationBuffers}). Returns the number of
     * buffers dropped.
     *
     * @throws IllegalStateException naming relation, block and buffer when one stays pinned
     */
    public int dropRelationBuffers(SmgrRelation rel) {
        return dropRelationBuffers(rel, Duration.ofNanos(RelationBuffers.PIN_WAIT_NANOS));
    }

    /**
     * {@link #dropRelationBuffers(SmgrRelation)} waiting at most {@code pinWait} (instead of 30 s) for
     * other sessions' pins. When a buffer of {@code rel} is pinned by another session from the
     * start to the end of that wait, it fails before any buffer was dropped (so a caller that then
     * keeps the relation loses nothing) and the fsync requests stay.
     */
    public int dropRelationBuffers(SmgrRelation rel, Duration pinWait) {
        long[] dirty = new long[1];
        int n = RelationBuffers.drop(this, rel, dirty, pinWait.toNanos());
        for (SmgrRelation f : rel.openForks()) {
            f.takeDirtySegments();
        }
        return n;
    }

    /**
     * Extends {@code rel} by {@code n} blocks (PostgreSQL's {@code ExtendBufferedRelBy}): under the
     * relation's extension lock, reserves the space in one step ({@code fallocate}), then pins a
     * zeroed, valid buffer for each new block into {@code buffers[0..n)}. The caller initialises
     * the pages ({@link #beginModify} ... {@link #endModify}) and releases them; write-back puts
     * them on disk. Counted as one extend of {@code n × 8 kB} in stat_io.
     *
     * @return the first new block number
     * @throws PosixException naming the file and errno when the space cannot be reserved
     */
    public long extendBy(SmgrRelation rel, int n, int[] buffers, BufferAccessStrategy strategy) throws PosixException {
        refuseIfNotDurable(rel);
        if (n < 1 || n > buffers.length) {
            throw new IllegalArgumentException("extendBy " + n + " blocks with room for " + buffers.length);
        }
        long first;
        synchronized (rel) { // the relation extension lock
            if (!rel.exists()) {
                rel.create();
            }
            first = rel.nblocks();
            rel.extend(first, n);
        }
        int i = 0;
        try {
            for (; i < n; i++) {
                int buf = pool.pinBufferForBlock(this, rel, first + i, strategy);
                pins++;
                buffers[i] = buf;
                if (pool.startBufferIo(buf) == BufferPool.IO_READY) {
                    pool.page(buf).fill((byte) 0);
                    pool.pinAgain(buf); // terminateIo drops the I/O's pin
                    pool.terminateIo(buf, true);
                }
            }
        } catch (PosixException | RuntimeException e) {
            for (int j = 0; j < i; j++) {
                releaseBuffer(buffers[j]);
            }
            throw e;
        }
        int base = statBase(strategy == null ? IoContext.NORMAL : strategy.context());
        stats.add(base, Column.EXTENDS, 1);
        stats.add(base, Column.EXTEND_BYTES, (long) n * BufferPool.BLCKSZ);
        return first;
    }

    /** This session's kind in stat_io. */
    int kind() {
        return kind;
    }

    /**
     * Where this session's stat_io row for {@code context} starts: its kind, on the method its I/O
     * goes to now (the one it is bound to, before its first binding the pool's). The method's slot
     * is looked up only when the method changed: a volatile load and a compare per call, no
     * allocation. Owner only.
     */
    int statBase(IoContext context) {
        org.pageio.api.IoMethod m = io.boundMethod();
        if (m == null) {
            m = pool.method();
        }
        if (m != statMethod || statSlot < 0) {
            statSlot = stats.method(m == null ? null : m.name());
            statMethod = m;
        }
        return StatIo.base(statSlot, kind, IoObject.RELATION, context);
    }

    /** This session's write-back (created on first use). */
    BufferWriter writer() {
        BufferWriter w = writer;
        if (w == null) {
            w = writer = new BufferWriter(pool, this);
        }
        return w;
    }

    // ------------------------------------------------------------------ two-phase reads

    /**
     * Pins buffers for up to {@code nblocks} consecutive blocks from {@code block} into
     * {@code buffers[offset..]} and starts reading the ones not valid yet (PostgreSQL's
     * {@code StartReadBuffers}). The first {@code forwarded} entries are already pinned (left
     * over from a previous call that was cut short) and are used as they are.
     *
     * <p>Returns {@code false} when the first block is already valid: then the operation covers
     * that one block, and nothing needs waiting. Otherwise the operation covers
     * {@link ReadBuffersOperation#nblocks()} blocks, possibly fewer than asked: the run stops
     * before a block that is already valid (that buffer stays pinned in the next entry, to be
     * forwarded) and at a segment boundary. Call {@link #waitReadBuffers} before using them.
     *
     * @throws PosixException when a segment file cannot be opened (pins taken here are released)
     */
    @Override
    public boolean startReadBuffers(ReadBuffersOperation op, int[] buffers, int offset, int forwarded, SmgrRelation rel,
            long block, int nblocks, int flags, BufferAccessStrategy strategy) throws PosixException {
        int n = Math.min(nblocks, rel.maxCombine(block));
        BufMgrSettings s = pool.settings();
        if ((flags & ReadBuffersOperation.STRICT) != 0) {
            flags &= ~(ReadBuffersOperation.ZERO_ON_ERROR | ReadBuffersOperation.IGNORE_CHECKSUM_FAILURES);
        } else {
            if (s.zeroDamagedPages()) {
                flags |= ReadBuffersOperation.ZERO_ON_ERROR;
            }
            if (s.ignoreChecksumFailure()) {
                flags |= ReadBuffersOperation.IGNORE_CHECKSUM_FAILURES;
            }
        }
        op.rel = rel;
        op.strategy = strategy;
        op.flags = flags;
        op.buffers = buffers;
        op.offset = offset;
        op.blockNum = block;
        op.nblocksDone = 0;
        op.ownRef = IoHandle.NO_WAIT_REF;
        op.foreignRef = IoHandle.NO_WAIT_REF;
        op.readIssued = false;
        op.advised = false;
        int i = 0;
        for (; i < n; i++) {
            int buf;
            if (i < forwarded) {
                buf = buffers[offset + i];
            } else {
                try {
                    buf = pool.pinBufferForBlock(this, rel, block + i, strategy);
                } catch (PosixException | RuntimeException e) {
                    for (int j = forwarded; j < i; j++) {
                        releaseBuffer(buffers[offset + j]);
                    }
                    throw e;
                }
                pins++;
                buffers[offset + i] = buf;
            }
            if (pool.isValid(buf)) {
                if (i == 0) {
                    op.nblocks = 1;
                    op.nblocksDone = 1;
                    op.pinnedEntries = Math.max(forwarded, 1);
                    stats.add(statBase(strategy == null ? IoContext.NORMAL : strategy.context()), Column.HITS, 1);
                    return false;
                }
                op.pinnedEntries = Math.max(forwarded, i + 1); // the hit stays pinned, to be forwarded
                break;
            }
        }
        if (i == n) {
            op.pinnedEntries = Math.max(forwarded, n);
        }
        op.nblocks = i;
        if ((flags & ReadBuffersOperation.ISSUE_ADVICE) != 0) {
            op.advised = advise(rel, block, i); // only the blocks that need I/O, as PostgreSQL's StartReadBuffers
        }
        if (!pool.defersReads()) { // with io_method=sync the wait phase reads, as in PostgreSQL
            int fd;
            IoHandle h;
            try {
                fd = rel.fd(block);
                h = acquireReadHandle();
            } catch (PosixException | RuntimeException e) {
                // a segment file that cannot be opened, or no I/O possible (no method bound within
                // the gate wait timeout), fails before any buffer is claimed: drop the pins taken
                // here (the forwarded ones stay the caller's), as promised above
                for (int j = forwarded; j < op.pinnedEntries; j++) {
                    releaseBuffer(buffers[offset + j]);
                }
                throw e;
            }
            asyncReadBuffers(op, fd, h);
        }
        return true;
    }

    /**
     * Finishes a read started by {@link #startReadBuffers}: waits for the I/O (or, with
     * io_method=sync, performs it), retries the blocks a partial read did not deliver, and reads
     * blocks whose adopted foreign read failed. Returns whether it had to wait.
     *
     * @throws IOException naming the relation, block and what failed (bad page, errno, short
     *         read); the buffers stay pinned by the caller, not valid
     */
    @Override
    public boolean waitReadBuffers(ReadBuffersOperation op) throws IOException {
        boolean waited = false;
        boolean timing = pool.settings().trackIoTiming();
        while (op.nblocksDone < op.nblocks) {
            if (op.ownRef == IoHandle.NO_WAIT_REF && op.foreignRef == IoHandle.NO_WAIT_REF) {
                if (pool.defersReads()) {
                    op.flags |= ReadBuffersOperation.SYNCHRONOUSLY;
                    waited = true; // synchronous execution counts as a wait (PostgreSQL 19)
                }
                asyncReadBuffers(op);
                continue;
            }
            if (op.foreignRef != IoHandle.NO_WAIT_REF) {
                long ref = op.foreignRef;
                op.foreignRef = IoHandle.NO_WAIT_REF;
                waited |= awaitRef(ref, timing, op);
                int buf = op.buffers[op.offset + op.nblocksDone];
                if (pool.isValid(buf)) {
                    op.nblocksDone++;
                    stats.add(statBase(op), Column.HITS, 1);
                }
                continue; // not valid: the foreign read failed; read it ourselves
            }
            long ref = op.ownRef;
            if (awaitRef(ref, timing, op) || (op.flags & ReadBuffersOperation.SYNCHRONOUSLY) != 0) {
                waited = true; // synchronous execution counts as a wait (PostgreSQL 19)
            }
            op.ownRef = IoHandle.NO_WAIT_REF;
            long r = op.ret.result();
            int status = IoResult.status(r);
            if (status == IoResult.ERROR) {
                int errno = IoResult.result(r) < 0 ? -IoResult.result(r) : 0;
                throw new AioException(op.ret.message(), errno, op.ret.failure());
            }
            // IoResult.WARNING (pages zeroed or a checksum ignored): SharedBufferReadv logged each page once, on completion
            op.nblocksDone += status == IoResult.PARTIAL ? IoResult.result(r) : op.ioBlocks;
        }
        return waited;
    }

    /**
     * Whether nothing of {@code op} is in flight: the I/O that {@link #startReadBuffers} issued
     * for it is over, or none is (io_method=sync defers its reads to the wait). Reads the handle's
     * state only: no poll of the method, no blocking (a completion io_uring has not reaped yet
     * does not count). Errors are not looked at: {@link #waitReadBuffers} reports them, and may
     * still have to read blocks that a partial or failed read did not deliver. Owner only.
     */
    @Override
    public boolean readBuffersIoOver(ReadBuffersOperation op) {
        if (op.nblocksDone >= op.nblocks) {
            return true;
        }
        long ref = readRef(op);
        return ref == IoHandle.NO_WAIT_REF || io.peekRefDone(ref);
    }

    /** The wait reference of {@code op}'s I/O in flight: its own read, else an adopted one. */
    private static long readRef(ReadBuffersOperation op) {
        return op.ownRef != IoHandle.NO_WAIT_REF ? op.ownRef : op.foreignRef;
    }

    /**
     * Blocks until {@code op}'s I/O is over or a completion is ready, then processes at most
     * {@code max} ready completions ({@link IoSession#awaitRefProgress}); returns at once if the
     * I/O is over or none was issued. Owner only.
     */
    @Override
    public void awaitReadProgress(ReadBuffersOperation op, int max) {
        long ref = readRef(op);
        if (op.nblocksDone < op.nblocks && ref != IoHandle.NO_WAIT_REF) {
            io.awaitRefProgress(ref, max);
        }
    }

    /**
     * Waits for a read unless it is already done (reclaiming it when it is ours); with
     * {@code track_io_timing} the wait is charged to stat_io's read_time. Returns whether it
     * blocked.
     */
    private boolean awaitRef(long ref, boolean timing, ReadBuffersOperation op) {
        if (io.checkRefDone(ref)) {
            return false;
        }
        long t0 = timing ? System.nanoTime() : 0;
        io.awaitRef(ref);
        if (timing) {
            stats.add(statBase(op), Column.READ_TIME, System.nanoTime() - t0);
        }
        return true;
    }

    /**
     * Starts one I/O for the first not-done blocks of {@code op} (PostgreSQL's
     * {@code AsyncReadBuffers}): handle first (never block while holding a claimed buffer),
     * then claim the head buffer (or adopt its in-flight read, or count it done), then extend
     * the I/O over the following buffers that can be claimed without waiting.
     */
    /**
     * {@code posix_fadvise(WILLNEED)} for {@code n} blocks from {@code block} (PostgreSQL's
     * {@code smgrprefetch}); whether the kernel took it. Advice is a hint: a failure is not an error
     * (the read reports real ones).
     */
    private static boolean advise(SmgrRelation rel, long block, int n) {
        try {
            Posix.fadvise(rel.fd(block), rel.segmentOffset(block), (long) n * BufferPool.BLCKSZ, Fadvise.POSIX_FADV_WILLNEED,
                    rel.segmentPath(block));
            return true;
        } catch (PosixException e) {
            return false;
        }
    }

    private void asyncReadBuffers(ReadBuffersOperation op) throws PosixException {
        int fd = op.rel.fd(op.blockNum + op.nblocksDone); // fails cleanly, naming the file, before any state changes
        asyncReadBuffers(op, fd, acquireReadHandle());
    }

    /**
     * A handle for a read: a free one, else after submitting what is staged, the oldest once it
     * is reclaimed. Waits at the method gate while no method is bound, and throws
     * {@link IllegalStateException} ("no I/O started: …") after the gate wait timeout. Changes no
     * buffer's state.
     */
    private IoHandle acquireReadHandle() {
        IoHandle h = io.acquireNb();
        if (h == null) {
            io.submitStaged();
            h = io.acquire();
        }
        return h;
    }

    /** Starts {@code op}'s next read on {@code fd} with handle {@code h}: claims the buffers' I/O, stages it. */
    private void asyncReadBuffers(ReadBuffersOperation op, int fd, IoHandle h) {
        int first = op.nblocksDone;
        long block = op.blockNum + first;
        int head = op.buffers[op.offset + first];
        for (;;) {
            int claim = pool.startBufferIo(head);
            if (claim == BufferPool.IO_DONE) {
                h.release();
                op.nblocksDone++;
                stats.add(statBase(op), Column.HITS, 1);
                return;
            }
            if (claim == BufferPool.IO_BUSY) {
                long ref = pool.ioRef(head);
                if (ref != IoHandle.NO_WAIT_REF) {
                    h.release();
                    op.foreignRef = ref;
                    return;
                }
                Thread.onSpinWait(); // claimed, wait reference not yet published: a short window
                continue;
            }
            break;
        }
        int n = 1;
        op.addresses[0] = pool.pageAddress(head);
        h.setHandleData(0, head);
        int max = Math.min(op.nblocks - first, op.addresses.length);
        while (n < max) {
            int buf = op.buffers[op.offset + first + n];
            if (pool.startBufferIo(buf) != BufferPool.IO_READY) {
                break;
            }
            op.addresses[n] = pool.pageAddress(buf);
            h.setHandleData(n, buf);
            n++;
        }
        h.setReturn(op.ret).addCallback(readCallback, op.flags);
        if ((op.flags & ReadBuffersOperation.SYNCHRONOUSLY) != 0) {
            h.setFlags(IoHandle.FLAG_SYNCHRONOUS);
        }
        if (op.advised) {
            h.setFlags(IoHandle.FLAG_ADVISED);
        }
        op.ownRef = h.waitRef();
        op.ioBlocks = n;
        op.readIssued = true;
        int base = statBase(op);
        stats.add(base, Column.READS, 1);
        stats.add(base, Column.READ_BYTES, (long) n * BufferPool.BLCKSZ);
        op.rel.startReadv(h, fd, block, op.addresses, n);
    }

    private int statBase(ReadBuffersOperation op) {
        return statBase(op.strategy == null ? IoContext.NORMAL : op.strategy.context());
    }

    void countEviction(BufferAccessStrategy strategy, boolean reuse) {
        int base = statBase(strategy == null ? IoContext.NORMAL : strategy.context());
        stats.add(base, reuse ? Column.REUSES : Column.EVICTIONS, 1);
    }

    /**
     * Closes the session: waits for its I/O and closes the I/O session.
     *
     * @throws IllegalStateException if pins are still held (they leak otherwise), after closing
     */
    @Override
    public void close() {
        io.close();
        if (pins != 0) {
            throw new IllegalStateException("buffer session closed with " + pins + " buffer pin(s) still held");
        }
    }
}
