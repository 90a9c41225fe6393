package org.pageio.method.posixaio;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.pageio.api.AioContext;
import org.pageio.api.IoHandle;
import org.pageio.api.IoSession;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;
import org.pageio.posix.Iovec;

/**
 * What {@code io_method=posix_aio} keeps per session ({@code IoSession.methodState()}): a pool of
 * control blocks allocated once, {@code io_max_concurrency × io_max_combine_limit} of them in the
 * session's own {@link Arena}, and the bookkeeping that turns glibc's per-block results into one
 * completion per handle.
 *
 * <h2>Submission (the owner)</h2>
 * Handle {@code h} of the session owns blocks {@code [slot × S, slot × S + S)}, where
 * {@code slot = h.index() − base} and {@code S = io_max_combine_limit}. A read or write fills one
 * block per run of adjacent iovecs (iovecs that continue each other in memory become one block;
 * POSIX has no vectored request) and lists it; an fsync fills one block and, after the listed
 * blocks are queued (so that it covers them, as POSIX orders {@code aio_fsync} after the requests
 * queued before it), is queued with {@code aio_fsync}. The list is queued with one
 * {@code lio_listio(LIO_NOWAIT)} per batch, or {@code aio_read}/{@code aio_write} when it holds
 * one block. A read's blocks go round robin to its file's descriptors, the handle's own and
 * duplicates of it ({@link Duplicates}), validated once per call and descriptor and acquired per
 * handle ({@link #slotFile}); the reaper releases the entry before it completes the handle. Writes
 * and syncs stay on the handle's descriptor. A block glibc refused to queue (its error field still {@link Aiocb#NOT_QUEUED} after a
 * failed call) is marked over with the call's errno, so the reaper reads it like any result. Last,
 * the owner publishes each handle's generation in {@link #enqueued} (release store): from then on
 * its blocks are glibc's until they are over, and reapers may look at them.
 *
 * <h2>Completion (whoever waits)</h2>
 * Glibc notifies nobody ({@code SIGEV_NONE}): completion is learnt by asking. {@link #reapReady()},
 * under the session's completion lock, walks the published slots, asks {@code aio_error} of each
 * slot's pending blocks, and completes every handle whose blocks are all over, in the calling
 * thread: the shared completion callbacks run there, as with io_uring's reaper. A waiter
 * ({@link #waitFor}) reaps, then, when its handle is not done, sleeps in {@code aio_suspend} on the
 * last of its handle's blocks that is in progress, without the lock, so that several waiters sleep
 * at once and none keeps another from reaping; it wakes when that block is over (or after a
 * {@value #SUSPEND_SLICE_SECONDS} s slice) and reaps again. {@link #poll()} reaps if the lock is free.
 *
 * <h2>Invariants</h2>
 * <ul>
 *   <li>A slot's blocks, {@link #segments} and {@link #firstPending} are written by the owner only
 *       while the slot's {@link #enqueued} is 0, and read by the lock holder only while it is not:
 *       the release store that publishes a generation and the acquire load that reads it order
 *       them. The reaper stores 0 before it completes the handle, and the owner reuses the slot
 *       only after it reclaimed that completion.</li>
 *   <li>Exactly one completion per I/O: only the lock holder completes, and only a slot it found
 *       published, which it unpublishes first.</li>
 *   <li>glibc's memory: a block is written only while glibc does not hold it; the sigevent never
 *       after the pool is made ({@link Aiocb}). Results are read after {@code aio_error} said the
 *       request is over, behind an acquire fence.</li>
 *   <li>Close ({@link #close}, the owner, after the session drained) marks the pool closed under the
 *       lock, waits until no thread is inside {@code aio_suspend} on its blocks ({@link #suspenders}),
 *       takes glibc's request lock once (an {@code aio_suspend} on a block that is over), so that no
 *       glibc thread is still reading a block it finished, and only then frees the arena.</li>
 * </ul>
 *
 * <p>No allocation per I/O: blocks, the list, the waiters' scratch memory ({@link Scratch}, one per
 * thread) are made once; pointers go to glibc as addresses ({@code long}).
 */
final class AioSession {

    /** How long one {@code aio_suspend} sleeps at most before its waiter looks again. */
    static final int SUSPEND_SLICE_SECONDS = 1;
    /**
     * How long a waiter in another thread parks when it finds the handle SUBMITTED but not yet
     * published (the owner is inside {@code submit}, between the core's state change and the end
     * of its {@code lio_listio}).
     */
    static final long PUBLISH_WAIT_NANOS = TimeUnit.MICROSECONDS.toNanos(20);

    private static final VarHandle ENQUEUED = MethodHandles.arrayElementVarHandle(long[].class);

    /**
     * Per waiting thread: an errno capture, a one-entry list for {@code aio_suspend} and its
     * timeout. Made once per thread (GC-managed arena), never per wait.
     */
    static final class Scratch {
        final CallState callState;
        final MemorySegment list;
        final MemorySegment timeout;

        Scratch() {
            Arena arena = Arena.ofAuto();
            callState = CallState.allocate(arena);
            list = arena.allocate(ValueLayout.ADDRESS);
            timeout = arena.allocate(16, 8);
            timeout.set(ValueLayout.JAVA_LONG, 0, SUSPEND_SLICE_SECONDS); // tv_sec
            timeout.set(ValueLayout.JAVA_LONG, 8, 0L); // tv_nsec
        }
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private final Arena arena;
    /** The index of the session's first handle in its context. */
    private final int base;
    private final int slots;
    /** Blocks per handle: {@code io_max_combine_limit}. */
    private final int perSlot;
    private final MemorySegment pool;
    private final long poolAddress;
    /** The batch's blocks, as pointers, for {@code lio_listio}. Owner only. */
    private final MemorySegment list;
    private final IoHandle[] handles;
    /** The method's policy for reads the page cache holds. */
    private final CachedReadsInline cachedReads;
    /** The method's duplicates of the descriptors reads are queued on. */
    private final Duplicates duplicates;
    /** {@code struct stat} for validating a file's duplicates. Owner only. */
    private final MemorySegment stat;
    /** The duplicates entry each slot's read acquired, or null. Owner writes before publishing; lock holder reads. */
    private final Duplicates.Entry[] slotFile;

    /** Blocks in use by the slot's I/O. Owner writes before publishing; lock holder reads. */
    private final int[] segments;
    /** The generation whose blocks glibc holds, per slot; 0: none. Release stores, acquire loads. */
    private final long[] enqueued;
    /** The slot's first block not known to be over. Lock holder (the owner resets it before publishing). */
    private final int[] firstPending;

    // The batch being built: owner only.
    private final int[] batchSlots = new int[IoSession.SUBMIT_BATCH_SIZE];
    private int batchCount;
    private int listCount;
    /** The descriptor validated in this submit call (-1: none) and its entry (null: read through it alone). */
    private int checkedFd = -1;
    private Duplicates.Entry checked;

    private final ReentrantLock completionLock = new ReentrantLock();
    private final Condition noSuspenders = completionLock.newCondition();
    // Under completionLock:
    private boolean closed;
    private int suspenders;
    private long reaped;
    private long suspends;

    // Owner only: how the session's requests went to glibc.
    private long listioCalls;
    private long singleCalls;
    /** Reads completed at submission from the page cache ({@link CachedReadsInline}). */
    private long cachedCompletions;
    /** This session's back-off after reads the page cache did not hold. */
    private final CachedReadsInline.Backoff cachedBackoff = new CachedReadsInline.Backoff();
    private long fsyncCalls;
    private long refusedBlocks;

    AioSession(IoSession session, Duplicates duplicates, CachedReadsInline cachedReads) {
        this.cachedReads = cachedReads;
        AioContext ctx = session.context();
        this.slots = ctx.config().ioMaxConcurrency();
        this.perSlot = ctx.config().ioMaxCombineLimit();
        this.base = session.id() * slots;
        this.arena = Arena.ofShared();
        long blocks = (long) slots * perSlot;
        this.pool = arena.allocate(blocks * Aiocb.SIZE, Aiocb.ALIGNMENT);
        this.pool.fill((byte) 0);
        Aiocb.initPool(pool, blocks);
        this.poolAddress = pool.address();
        this.list = arena.allocate((long) IoSession.SUBMIT_BATCH_SIZE * perSlot * ValueLayout.ADDRESS.byteSize(), 8);
        this.handles = new IoHandle[slots];
        this.duplicates = duplicates;
        this.stat = arena.allocate(Duplicates.STAT_SIZE, 8);
        this.slotFile = new Duplicates.Entry[slots];
        for (int i = 0; i < slots; i++) {
            handles[i] = ctx.handle(base + i);
        }
        this.segments = new int[slots];
        this.enqueued = new long[slots];
        this.firstPending = new int[slots];
    }

    private long blockAddress(int slot, int j) {
        return poolAddress + ((long) slot * perSlot + j) * Aiocb.SIZE;
    }

    private long block(int slot, int j) {
        return (long) slot * perSlot + j;
    }

    // ------------------------------------------------------------------ submission (owner)

    /** Queues {@code hs[0..count)} with glibc; never throws for an I/O error. Owner only. */
    void submit(IoHandle[] hs, int count, CallState cs) {
        for (int i = 0; i < count; i++) {
            IoHandle h = hs[i];
            int slot = h.index() - base;
            switch (h.op()) {
                case IoHandle.OP_READV, IoHandle.OP_WRITEV -> {
                    if (h.op() == IoHandle.OP_READV && cachedReads.tryComplete(h, cs, cachedBackoff)) {
                        cachedCompletions++; // completed from the page cache: never glibc's, never published
                        continue;
                    }
                    prepare(h, slot, cs);
                    batchSlots[batchCount++] = slot;
                }
                case IoHandle.OP_FSYNC, IoHandle.OP_FDATASYNC -> {
                    flush(cs); // queued after the writes before it in the batch, which it then covers
                    fsync(h, slot, cs);
                }
                default -> {
                    long b = block(slot, 0);
                    Aiocb.define(pool, b, h.fd(), Aiocb.LIO_NOP, 0, 0, 0);
                    Aiocb.refused(pool, b, Errno.EINVAL);
                    slotFile[slot] = null;
                    segments[slot] = 1;
                    firstPending[slot] = 0;
                    publish(slot, h);
                }
            }
        }
        flush(cs);
        checkedFd = -1; // the next call's descriptors are validated afresh
        checked = null;
    }

    /**
     * One block per run of adjacent iovecs, listed for the next {@link #flush}. A read's blocks go
     * round robin to the descriptors of its file ({@link Duplicates}); a write's to the handle's
     * descriptor, so that an {@code aio_fsync} on it still comes after them in glibc's queue.
     */
    private void prepare(IoHandle h, int slot, CallState cs) {
        boolean read = h.op() == IoHandle.OP_READV;
        int opcode = read ? Aiocb.LIO_READ : Aiocb.LIO_WRITE;
        MemorySegment iov = h.iovecs();
        int fd = h.fd();
        Duplicates.Entry file = read && duplicates.perFile() > 1 ? file(fd, cs) : null;
        slotFile[slot] = file;
        long offset = h.offset();
        long address = Iovec.base(iov, 0);
        long length = Iovec.length(iov, 0);
        int k = 0;
        for (int i = 1; i < h.iovcnt(); i++) {
            long a = Iovec.base(iov, i);
            long l = Iovec.length(iov, i);
            if (address + length == a) {
                length += l; // continues the previous iovec in memory: the same request
                continue;
            }
            addBlock(slot, k++, file == null ? fd : file.pick(), opcode, address, length, offset);
            offset += length;
            address = a;
            length = l;
        }
        addBlock(slot, k++, file == null ? fd : file.pick(), opcode, address, length, offset);
        segments[slot] = k;
        firstPending[slot] = 0;
    }

    /**
     * {@code fd}'s duplicates entry, acquired for one read, or null (read through {@code fd}): validated
     * once per submit call and descriptor, since the issuer keeps the descriptors of the handles it
     * submits open. Owner only.
     */
    private Duplicates.Entry file(int fd, CallState cs) {
        if (fd == checkedFd && (checked == null || checked.tryAcquire())) {
            return checked;
        }
        Duplicates.Entry e = duplicates.acquire(fd, cs, stat);
        checkedFd = fd;
        checked = e;
        return e;
    }

    private void addBlock(int slot, int j, int fd, int opcode, long address, long length, long offset) {
        Aiocb.define(pool, block(slot, j), fd, opcode, address, length, offset);
        list.setAtIndex(ValueLayout.JAVA_LONG, listCount++, blockAddress(slot, j));
    }

    /** Queues the listed blocks (one call), then publishes their handles. */
    private void flush(CallState cs) {
        if (listCount == 0) {
            return;
        }
        int r;
        if (listCount == 1) {
            long cb = list.getAtIndex(ValueLayout.JAVA_LONG, 0);
            int opcode = pool.get(ValueLayout.JAVA_INT, cb - poolAddress + Aiocb.LIO_OPCODE);
            r = opcode == Aiocb.LIO_READ ? Aio.read(cs, cb) : Aio.write(cs, cb);
            singleCalls++;
        } else {
            r = Aio.listio(cs, list.address(), listCount);
            listioCalls++;
        }
        for (int i = 0; i < batchCount; i++) {
            int slot = batchSlots[i];
            if (r < 0) {
                for (int j = 0; j < segments[slot]; j++) {
                    if (Aiocb.errorField(pool, block(slot, j)) == Aiocb.NOT_QUEUED) {
                        Aiocb.refused(pool, block(slot, j), -r);
                        refusedBlocks++;
                    }
                }
            }
            publish(slot, handles[slot]);
        }
        listCount = 0;
        batchCount = 0;
    }

    private void fsync(IoHandle h, int slot, CallState cs) {
        long b = block(slot, 0);
        Aiocb.define(pool, b, h.fd(), Aiocb.LIO_NOP, 0, 0, 0); // aio_fsync reads the descriptor only
        slotFile[slot] = null;
        segments[slot] = 1;
        firstPending[slot] = 0;
        int r = Aio.fsync(cs, h.op() == IoHandle.OP_FDATASYNC, blockAddress(slot, 0));
        fsyncCalls++;
        if (r < 0) {
            Aiocb.refused(pool, b, -r); // glibc checks the descriptor first: EBADF
            refusedBlocks++;
        }
        publish(slot, h);
    }

    private void publish(int slot, IoHandle h) {
        ENQUEUED.setRelease(enqueued, slot, h.generation());
    }

    // ------------------------------------------------------------------ completion (any thread)

    /**
     * Completes every published handle whose blocks are all over, in this thread. Lock held.
     *
     * @return the handles completed
     */
    private int reapReady() {
        int n = 0;
        for (int slot = 0; slot < slots; slot++) {
            if ((long) ENQUEUED.getAcquire(enqueued, slot) != 0 && over(slot)) {
                int raw = result(slot);
                Duplicates.Entry file = slotFile[slot];
                if (file != null) {
                    file.release(); // its descriptors may be closed once no read is in flight on them
                }
                ENQUEUED.setRelease(enqueued, slot, 0L); // unpublished before the owner can see the completion
                handles[slot].complete(raw);
                reaped++;
                n++;
            }
        }
        return n;
    }

    /** Whether every block of the slot's I/O is over; advances {@link #firstPending}. Lock held. */
    private boolean over(int slot) {
        int k = segments[slot];
        int j = firstPending[slot];
        while (j < k && Aio.error(blockAddress(slot, j)) != Aiocb.EINPROGRESS) {
            j++;
        }
        firstPending[slot] = j;
        return j == k;
    }

    /**
     * The slot's result as one {@code preadv}/{@code pwritev} would give it: the bytes of the blocks
     * up to and including the first short one; the first block's {@code -errno} when it failed, or
     * the bytes before a later block that failed (a short transfer, which the issuer's callbacks
     * retry or report as with any method). {@code aio_return} is called once for every block, as
     * POSIX asks. Lock held; every block is over.
     */
    private int result(int slot) {
        VarHandle.acquireFence(); // the results glibc stored before the error fields aio_error read
        int k = segments[slot];
        long total = 0;
        int error = 0;
        boolean stopped = false;
        for (int j = 0; j < k; j++) {
            long cb = blockAddress(slot, j);
            int err = Aio.error(cb);
            long ret = Aio.returnValue(cb);
            if (stopped) {
                continue;
            }
            if (err != 0) {
                if (total == 0) {
                    error = err;
                }
                stopped = true;
                continue;
            }
            total += ret;
            if (ret < Aiocb.nbytes(pool, block(slot, j))) {
                stopped = true; // a short block: what follows it is not part of a contiguous transfer
            }
        }
        return error != 0 ? -error : (int) total;
    }

    private static boolean done(IoHandle h, long generation) {
        return h.state() >= IoHandle.COMPLETED_IO || h.generation() != generation;
    }

    /**
     * Waits until the I/O {@code (h, generation)} is complete or the handle was reused: reaps, and
     * sleeps in {@code aio_suspend} on the handle's last block in progress between reaps. Any thread;
     * uninterruptible.
     */
    void waitFor(IoHandle h, long generation) {
        int slot = h.index() - base;
        Scratch sc = null;
        for (;;) {
            if (done(h, generation)) {
                return;
            }
            long wait = 0;
            completionLock.lock();
            try {
                if (closed) {
                    return;
                }
                reapReady();
                if (done(h, generation)) {
                    return;
                }
                if ((long) ENQUEUED.getAcquire(enqueued, slot) == generation) {
                    wait = lastPending(slot);
                    if (wait != 0) {
                        suspenders++;
                        suspends++;
                    }
                }
            } finally {
                completionLock.unlock();
            }
            if (wait == 0) {
                // not published yet: the owner is inside submit (only a thread other than the owner gets here)
                LockSupport.parkNanos(PUBLISH_WAIT_NANOS);
                continue;
            }
            if (sc == null) {
                sc = SCRATCH.get();
            }
            try {
                sc.list.set(ValueLayout.JAVA_LONG, 0, wait);
                Aio.suspend(sc.callState, sc.list.address(), 1, sc.timeout.address()); // 0, EAGAIN or EINTR: look again
            } finally {
                completionLock.lock();
                try {
                    if (--suspenders == 0 && closed) {
                        noSuspenders.signalAll();
                    }
                } finally {
                    completionLock.unlock();
                }
            }
        }
    }

    /**
     * The address of the slot's last block still in progress, or 0 when none is: on one descriptor
     * glibc runs them in order, so that one being over usually means all are; blocks spread over a
     * file's duplicates end in any order, and the waiter sleeps again on the next. Lock held.
     */
    private long lastPending(int slot) {
        for (int j = segments[slot] - 1; j >= firstPending[slot]; j--) {
            long cb = blockAddress(slot, j);
            if (Aio.error(cb) == Aiocb.EINPROGRESS) {
                return cb;
            }
        }
        return 0;
    }

    /** Reaps what is over if nobody holds the completion lock. Any thread; never blocks. */
    void poll() {
        if (completionLock.tryLock()) {
            try {
                if (!closed) {
                    reapReady();
                }
            } finally {
                completionLock.unlock();
            }
        }
    }

    /**
     * Frees the blocks. Owner, after the session drained (every block is over): sweeps the method's
     * duplicates ({@link Duplicates#sweep}), waits for the
     * threads still inside {@code aio_suspend} on its blocks (they return at once), takes glibc's
     * request lock once so that no glibc thread is still reading a finished block, then frees.
     */
    void close() {
        if (!isClosed() && duplicates.perFile() > 1) {
            // the files this session's issuer closed are not kept open by their duplicates
            duplicates.sweep(SCRATCH.get().callState, stat);
        }
        completionLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            while (suspenders > 0) {
                noSuspenders.awaitUninterruptibly();
            }
            Scratch sc = SCRATCH.get();
            sc.list.set(ValueLayout.JAVA_LONG, 0, blockAddress(0, 0)); // over (or never used): returns at once
            Aio.suspend(sc.callState, sc.list.address(), 1, sc.timeout.address());
            arena.close();
        } finally {
            completionLock.unlock();
        }
    }

    // ------------------------------------------------------------------ counters

    /** {@code lio_listio} calls (batches of two blocks and more). Owner only. */
    long listioCalls() {
        return listioCalls;
    }

    /** {@code aio_read}/{@code aio_write} calls (batches of one block). Owner only. */
    long singleCalls() {
        return singleCalls;
    }

    /** Reads this session completed at submission from the page cache. Owner only. */
    long cachedCompletions() {
        return cachedCompletions;
    }

    /** Reads this session tried against the page cache and queued after all. Owner only. */
    long cachedMisses() {
        return cachedBackoff.misses;
    }

    /** {@code aio_fsync} calls. Owner only. */
    long fsyncCalls() {
        return fsyncCalls;
    }

    /** Blocks glibc refused to queue, completed with the call's errno. Owner only. */
    long refusedBlocks() {
        return refusedBlocks;
    }

    /** Handles completed by this session's reapers. Any thread (takes the lock). */
    long reaped() {
        completionLock.lock();
        try {
            return reaped;
        } finally {
            completionLock.unlock();
        }
    }

    /** {@code aio_suspend} calls made by waiters. Any thread (takes the lock). */
    long suspends() {
        completionLock.lock();
        try {
            return suspends;
        } finally {
            completionLock.unlock();
        }
    }

    /** Handles whose blocks glibc holds now. Any thread; a snapshot. */
    int published() {
        int n = 0;
        for (int slot = 0; slot < slots; slot++) {
            if ((long) ENQUEUED.getAcquire(enqueued, slot) != 0) {
                n++;
            }
        }
        return n;
    }

    /** The descriptor block {@code j} of {@code slot} was last queued on. Owner, with the slot's I/O over. */
    int descriptorOf(int slot, int j) {
        return pool.get(ValueLayout.JAVA_INT, block(slot, j) * Aiocb.SIZE + Aiocb.FILDES);
    }

    boolean isClosed() {
        completionLock.lock();
        try {
            return closed;
        } finally {
            completionLock.unlock();
        }
    }
}
