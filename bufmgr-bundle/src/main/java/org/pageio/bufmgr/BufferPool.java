package org.pageio.bufmgr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;
import org.pageio.api.AioContext;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.posix.PosixException;

/**
 * The shared buffer pool (PostgreSQL's bufmgr.c, buf_init.c, freelist.c): {@code shared_buffers}
 * pages of 8 KiB in one off-heap mapping aligned to 2 MB (so O_DIRECT can read into it, and the
 * kernel can back it with huge pages: {@code huge_pages}, {@link #hugePages()}),
 * buffer descriptors as parallel arrays (no object per buffer on the hot path), the mapping
 * table, and the clock sweep.
 *
 * <h2>The state word</h2>
 * One {@code long} per buffer, changed only by compare-and-set (volatile):
 * <pre>
 *  bits  0..17  pin count (shared; one per pin, plus one held by the AIO subsystem while a read is in flight)
 *  bits 18..21  usage count, 0..5 (ring buffers at most 1)
 *  bit  22 DIRTY   23 VALID   24 TAG_VALID   25 IO_IN_PROGRESS   26 IO_ERROR   27 LOCKED   28 UNSYNCED
 * </pre>
 * UNSYNCED: the page's last write may not be durable yet. Set by the completion of a successful
 * write in the CAS that clears DIRTY; cleared by CAS ({@link #settleUnsynced}) once a good fsync
 * covered that write ({@code writtenEpoch[b]} ≤ the relation's synced epoch) or the relation was
 * marked not durable, and when the buffer is dropped with its relation. A buffer with it is not
 * evicted: a failed fsync can always be repaired from shared buffers (dirty until durable). A
 * buffer without it was never written since it took its identity, or its last write is durable.
 * IO_IN_PROGRESS on a VALID buffer is a write (reads only fill buffers that are not valid).
 * LOCKED is the content lock a modifier holds ({@link BufferSession#beginModify}); a write
 * claims only unlocked buffers and a modifier waits for a write in flight, so the page image a
 * write sends (and its checksum, computed when the write is issued) never changes under it.
 * The tag ({@code tags[]}) and the I/O wait reference ({@code ioRefs[]}) are written before the
 * state CAS that publishes them (the CAS is a release) and read after a state read (acquire).
 *
 * <h2>Who may change what</h2>
 * <ul>
 *   <li>Anyone pins and unpins (CAS on the pin count).</li>
 *   <li>Only the session that set IO_IN_PROGRESS (and then the thread completing its I/O) clears
 *       it, together with setting VALID or IO_ERROR and dropping the AIO pin
 *       ({@link #terminateIo}).</li>
 *   <li>Only a session holding the only pin on a buffer whose usage count reached 0 retags it
 *       (eviction), after clearing TAG_VALID by CAS from "pinned once, clean".</li>
 * </ul>
 *
 * <h2>Lock order</h2>
 * One mapping partition lock at a time, never held while waiting for I/O or touching another
 * partition. No buffer header lock exists: everything is a CAS on the state word.
 *
 * <p>Thread-safe. Sessions ({@link BufferSession}) are per thread.
 */
public final class BufferPool implements AutoCloseable {

    static final int BLCKSZ = StorageManager.BLCKSZ;

    static final long REFCOUNT_ONE = 1L;
    static final long REFCOUNT_MASK = (1L << 18) - 1;
    static final int USAGE_SHIFT = 18;
    static final long USAGE_ONE = 1L << USAGE_SHIFT;
    static final long USAGE_MASK = 0xFL << USAGE_SHIFT;
    static final int MAX_USAGE = 5;
    static final long DIRTY = 1L << 22;
    static final long VALID = 1L << 23;
    static final long TAG_VALID = 1L << 24;
    static final long IO_IN_PROGRESS = 1L << 25;
    static final long IO_ERROR = 1L << 26;
    /** Content lock for modification; see {@link BufferWriter} for the write rules. */
    static final long LOCKED = 1L << 27;
    /** Written, but not yet known durable: not reusable for another block (see the class comment). */
    static final long UNSYNCED = 1L << 28;
    /**
     * With {@link #LOCKED}: the cleanup lock ({@link BufferSession#conditionalLockForCleanup}), taken
     * by the buffer's only pinner; no new pin is taken while it is set, so the holder may move
     * tuples on the page that readers (who take no content lock) would otherwise be reading.
     */
    static final long CLEANUP = 1L << 29;

    static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final System.Logger LOG = System.getLogger("org.pageio.bufmgr");

    private final BufMgrSettings settings;
    private final StorageManager smgr;
    private final AioContext aio;
    private final StatIo stats;
    private final int nbuffers;
    private final Arena arena;
    private final PoolMemory memory;
    private final MemorySegment pages;
    private final MemorySegment[] pageSegments;
    /**
     * The same pages without the arena's scope, for the read completion's page check only
     * ({@link #completionPage}): a {@code ByteBuffer} view of a scoped segment makes every
     * {@code CRC32C.update} acquire and release the shared arena (two CASes on one word that the
     * issuer and every I/O worker share, per page), and every access checks the arena is alive.
     */
    private final MemorySegment[] completionPages;
    final long[] states;
    /** Buffer tag: relation id (22 bits) << 40 | block (40 bits); -1 when none. */
    final long[] tags;
    /** Packed wait reference of the read in flight ({@link IoHandle#NO_WAIT_REF} when none). */
    final long[] ioRefs;
    /**
     * errno of the last write of each buffer (0 = it succeeded); written by the write's completion
     * before the state CAS that ends the write (release), read after a state read (acquire).
     */
    final int[] writeErrno;
    /**
     * The storage manager's sync epoch when buffer b's last successful write completed, 0 if its
     * page was not written since it took its identity: whether a failed fsync can still be repaired
     * from it. Written by the write's completion before the state CAS that ends the write (release),
     * read after a state read (acquire); reset when the buffer takes another identity.
     */
    final long[] writtenEpoch;
    /** Victims claimed by the clock sweep, for the background writer's estimate. */
    final AtomicLong allocations = new AtomicLong();
    /** Relation syncs sessions ran to get written buffers back ({@link #syncForReuse}). */
    private final java.util.concurrent.atomic.LongAdder reuseSyncs = new java.util.concurrent.atomic.LongAdder();
    /** Pages read whose checksum did not match ({@link #checksumFailures}). */
    private final java.util.concurrent.atomic.LongAdder checksumFailures = new java.util.concurrent.atomic.LongAdder();
    /** What the read streams that ended did ({@link #streamTotals}). */
    private final ReadStreamTotals streamTotals = new ReadStreamTotals();
    /** One checkpoint at a time. */
    final Object checkpointLock = new Object();
    /** Set by the first {@link #close}. */
    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
    private final BufferMapping mapping;
    /** Finding buffers for blocks: lookup, victims, the clock sweep. */
    private final BufferAlloc alloc;
    /** io_method=sync: reads run in the wait phase. Volatile: the method is swapped live ({@link #methodSwapped}). */
    private volatile boolean deferReads;
    /**
     * Per handle index: the JFR event begun when its read was staged, and when (nanoTime), or null and 0
     * while the event is off. Plain: written by the issuer at staging, before the I/O is submitted,
     * which publishes the handle to the thread that completes it; cleared by that thread.
     */
    final jdk.jfr.Event[] ioEvents;
    final long[] ioStartNanos;

    /**
     * @param aio the AIO core whose method executes reads; the pool does not own it
     */
    BufferPool(BufMgrSettings settings, StorageManager smgr, AioContext aio, StatIo stats) {
        this.settings = settings;
        this.smgr = smgr;
        this.aio = aio;
        this.stats = stats;
        this.nbuffers = settings.sharedBuffers();
        // The pages are faulted in at once: a pool larger than the memory the kernel can give now
        // would fail in mmap or madvise, or worse, wake the OOM killer; refuse it before mapping.
        SharedMemory.Limit limit = SharedMemory.limit(0);
        String refusal = SharedMemory.refusal(nbuffers, limit);
        if (refusal != null) {
            throw new IllegalStateException("could not map anonymous shared memory: ENOMEM (refused before mmap): " + refusal);
        }
        this.arena = Arena.ofShared();
        try {
            this.memory = PoolMemory.map((long) nbuffers * BLCKSZ, settings.hugePages(), arena);
        } catch (PosixException e) {
            arena.close();
            throw new IllegalStateException(mapFailure(nbuffers, e, SharedMemory.limit(0)));
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        this.pages = memory.pages;
        this.pageSegments = new MemorySegment[nbuffers];
        this.completionPages = new MemorySegment[nbuffers];
        this.states = new long[nbuffers];
        this.tags = new long[nbuffers];
        this.ioRefs = new long[nbuffers];
        this.writeErrno = new int[nbuffers];
        this.writtenEpoch = new long[nbuffers];
        // one restricted reinterpret for the whole pool, then plain slices: a reinterpret per page
        // checks the caller's native access each time (about 10 µs each before the JIT, 2048 of them
        // for a 16 MB pool: most of a fresh JVM's pool start-up)
        MemorySegment unscopedPages = unscoped(pages);
        for (int b = 0; b < nbuffers; b++) {
            pageSegments[b] = pages.asSlice((long) b * BLCKSZ, BLCKSZ);
            completionPages[b] = unscopedPages.asSlice((long) b * BLCKSZ, BLCKSZ);
            tags[b] = -1;
            ioRefs[b] = IoHandle.NO_WAIT_REF;
        }
        this.mapping = new BufferMapping(nbuffers);
        this.alloc = new BufferAlloc(this);
        // PostgreSQL special-cases io_method=sync: StartReadBuffers starts nothing (it may give
        // advice), WaitReadBuffers reads. Same here.
        this.deferReads = "sync".equals(aio.method().name());
        this.ioEvents = new jdk.jfr.Event[aio.handleCount()];
        this.ioStartNanos = new long[aio.handleCount()];
        if (settings.registeredBuffers()) {
            // before any session of this pool opens its method state (io_uring: its ring)
            aio.registerBuffers(pages);
        }
        SharedMemory.mapped(pages.byteSize());
    }

    /**
     * The one line for a pool whose mapping failed: PostgreSQL's "could not map anonymous shared
     * memory", the size, the call and errno, what the machine can give and how to lower
     * {@code shared_buffers}.
     */
    static String mapFailure(int nbuffers, PosixException e, SharedMemory.Limit limit) {
        return "could not map anonymous shared memory: shared_buffers = " + nbuffers + " ("
                + SharedMemory.size((long) nbuffers * BLCKSZ) + "): " + e.getMessage()
                + (limit.bytes() == Long.MAX_VALUE ? "" : "; this machine can give at most " + SharedMemory.size(limit.bytes())
                        + " now (" + limit.basis() + ")")
                + "; " + SharedMemory.fix(limit);
    }

    /**
     * Called by whoever swapped the AIO context's method (the buffer manager component): reads
     * follow the new method's rules from their next start or wait.
     */
    public void methodSwapped() {
        deferReads = aio.methodBound() && "sync".equals(aio.method().name());
    }

    public BufMgrSettings settings() {
        return settings;
    }

    public StorageManager storage() {
        return smgr;
    }

    public AioContext aio() {
        return aio;
    }

    public IoMethod method() {
        return aio.method();
    }

    public StatIo stats() {
        return stats;
    }

    public int nbuffers() {
        return nbuffers;
    }

    /** True when reads are executed in the wait phase (io_method=sync), as PostgreSQL does. */
    public boolean defersReads() {
        return deferReads;
    }

    /** Opens a session for the calling thread. */
    public BufferSession openSession(String kind) {
        return new BufferSession(this, aio.openSession(kind), stats.kind(kind));
    }

    /** A ring of the given type, sized by PostgreSQL 18's rules. */
    public BufferAccessStrategy strategy(BufferAccessStrategy.Type type) {
        return new BufferAccessStrategy(type, BufferAccessStrategy.ringSize(type, settings));
    }

    /**
     * A ring of {@code kb} kilobytes ({@code GetAccessStrategyWithSize}, what {@code VACUUM
     * (BUFFER_USAGE_LIMIT …)} and {@code vacuum_buffer_usage_limit} choose): at least 128 kB, at most
     * an eighth of shared buffers, as PostgreSQL caps it; 0 means no ring (null: the normal strategy).
     *
     * @throws IllegalArgumentException when {@code kb} is neither 0 nor 128 .. 16 GB
     */
    public BufferAccessStrategy strategy(BufferAccessStrategy.Type type, long kb) {
        if (kb == 0) {
            return null;
        }
        if (kb < 128 || kb > 16L * 1024 * 1024) {
            throw new IllegalArgumentException("BUFFER_USAGE_LIMIT = " + kb + "kB is out of range: valid values are 0 (no ring) or"
                    + " 128kB .. 16GB");
        }
        return new BufferAccessStrategy(type, (int) Math.max(16, Math.min(kb / 8, settings.sharedBuffers() / 8)));
    }

    // ------------------------------------------------------------------ descriptors

    /** The page of buffer {@code buf}. Valid while the caller holds a pin. */
    public MemorySegment page(int buf) {
        return pageSegments[buf];
    }

    /**
     * Buffer {@code buf}'s page for the completion of a read into it, with no arena scope (no
     * liveness check, no acquire for native access). Safe only while the buffer's read is in
     * progress: the pool closes after the AIO context, which closes only once every session
     * closed, and a session closes only once its I/O completed, callbacks included; the kernel
     * writes the same memory in that window.
     */
    MemorySegment completionPage(int buf) {
        return completionPages[buf];
    }

    @SuppressWarnings("restricted") // the pool's own mapping, alive until close(); see completionPage
    private static MemorySegment unscoped(MemorySegment pages) {
        return MemorySegment.ofAddress(pages.address()).reinterpret(pages.byteSize());
    }

    /** Native address of buffer {@code buf}'s page. */
    long pageAddress(int buf) {
        return pages.address() + (long) buf * BLCKSZ;
    }

    long state(int buf) {
        return (long) LONGS.getVolatile(states, buf);
    }

    boolean casState(int buf, long expect, long update) {
        return LONGS.compareAndSet(states, buf, expect, update);
    }

    static long tagKey(SmgrRelation rel, long block) {
        return ((long) rel.id() << 40) | (block & 0xFF_FFFF_FFFFL);
    }

    static long tagBlock(long tag) {
        return tag & 0xFF_FFFF_FFFFL;
    }

    static int tagRelation(long tag) {
        return (int) (tag >>> 40);
    }

    public static int refcount(long state) {
        return (int) (state & REFCOUNT_MASK);
    }

    static int usage(long state) {
        return (int) ((state & USAGE_MASK) >>> USAGE_SHIFT);
    }

    /** Whether buffer {@code buf} holds a valid page (for tests and views). */
    public boolean isValid(int buf) {
        return (state(buf) & VALID) != 0;
    }

    /** Current pin count of buffer {@code buf} (for tests and views). */
    public int pinCount(int buf) {
        return refcount(state(buf));
    }

    /** Number of buffers pinned by anyone (for tests: zero when nothing leaks). */
    public int pinnedBuffers() {
        int n = 0;
        for (int b = 0; b < nbuffers; b++) {
            if (refcount(state(b)) > 0) {
                n++;
            }
        }
        return n;
    }

    // ------------------------------------------------------------------ pinning

    /**
     * Pins {@code buf} if it still holds {@code key}; bumps the usage count (to at most 1 for ring
     * buffers). Returns false, holding no pin, if the buffer was retagged in between.
     */
    boolean pinIfTagged(int buf, long key, boolean ring) {
        for (;;) {
            long s = state(buf);
            if ((s & CLEANUP) != 0) {
                Thread.yield(); // the only pinner is rearranging the page: short, and it takes no pin of ours
                continue;
            }
            long n = s + REFCOUNT_ONE;
            int usage = usage(s);
            if (usage < (ring ? 1 : MAX_USAGE)) {
                n += USAGE_ONE;
            }
            if (casState(buf, s, n)) {
                break;
            }
            Thread.onSpinWait();
        }
        // The CAS above (volatile) orders this read after the pin: an evictor can no longer retag.
        if ((state(buf) & TAG_VALID) != 0 && tags[buf] == key) {
            return true;
        }
        unpin(buf);
        return false;
    }

    /**
     * {@code ConditionalLockBufferForCleanup}: takes the content lock of {@code buf} with
     * {@link #CLEANUP} when the caller's is its only pin, it is valid, not locked and not under
     * I/O; false, taking nothing, otherwise.
     */
    boolean tryLockForCleanup(int buf) {
        for (;;) {
            long s = state(buf);
            if (refcount(s) != 1 || (s & VALID) == 0 || (s & (LOCKED | IO_IN_PROGRESS)) != 0) {
                return false;
            }
            if (casState(buf, s, s | LOCKED | CLEANUP)) {
                return true;
            }
        }
    }

    /** Adds a pin to a buffer the caller already pins (the AIO pin). */
    void pinAgain(int buf) {
        for (;;) {
            long s = state(buf);
            if (casState(buf, s, s + REFCOUNT_ONE)) {
                return;
            }
        }
    }

    void unpin(int buf) {
        for (;;) {
            long s = state(buf);
            if (refcount(s) == 0) {
                throw new IllegalStateException("buffer " + buf + " unpinned more often than pinned");
            }
            if (casState(buf, s, s - REFCOUNT_ONE)) {
                return;
            }
            Thread.onSpinWait();
        }
    }

    /**
     * Pins the buffer for {@code block} of {@code rel}, finding it in the pool or claiming a
     * victim ({@link BufferAlloc#pinBufferForBlock}).
     */
    int pinBufferForBlock(BufferSession session, SmgrRelation rel, long block, BufferAccessStrategy strategy)
            throws PosixException {
        return alloc.pinBufferForBlock(session, rel, block, strategy);
    }

    /**
     * The background writer asks to be woken at the next clock-sweep allocation ({@code t}), or
     * withdraws ({@code null}); PostgreSQL's {@code StrategyNotifyBgWriter}.
     */
    void notifyBgWriter(Thread t) {
        alloc.notifyBgWriter(t);
    }

    /** Pins {@code buf} if unpinned with usage count at most {@code maxUsage}. */
    boolean tryPinUnused(int buf, int maxUsage) {
        long s = state(buf);
        return refcount(s) == 0 && usage(s) <= maxUsage && (s & IO_IN_PROGRESS) == 0
                && casState(buf, s, s + REFCOUNT_ONE);
    }

    /**
     * Marks a buffer dirty whose content lock the caller holds ({@link BufferSession#beginModify}).
     *
     * @throws IllegalStateException if the buffer is not pinned, valid and locked
     */
    public void markDirty(int buf) {
        for (;;) {
            long s = state(buf);
            if (refcount(s) == 0 || (s & (VALID | LOCKED)) != (VALID | LOCKED)) {
                throw new IllegalStateException("markDirty of buffer " + buf
                        + " that is not pinned, valid and locked for modification (BufferSession.beginModify)");
            }
            if (casState(buf, s, s | DIRTY)) {
                return;
            }
        }
    }

    /** Whether buffer {@code buf} is dirty (for tests and views). */
    public boolean isDirty(int buf) {
        return (state(buf) & DIRTY) != 0;
    }

    /** Number of dirty buffers (for tests and views; a racy count). */
    public int dirtyBuffers() {
        int n = 0;
        for (int b = 0; b < nbuffers; b++) {
            if ((state(b) & DIRTY) != 0) {
                n++;
            }
        }
        return n;
    }

    /** {@code pg_buffercache_summary()}: used, unused, dirty and pinned buffers, in one pass (for views; racy). */
    public BufferCacheSummary summary() {
        int used = 0;
        int dirty = 0;
        int pinned = 0;
        long usage = 0;
        for (int b = 0; b < nbuffers; b++) {
            long s = state(b);
            if ((s & VALID) != 0) {
                used++;
                usage += usage(s);
            }
            if ((s & DIRTY) != 0) {
                dirty++;
            }
            if (refcount(s) > 0) {
                pinned++;
            }
        }
        return new BufferCacheSummary(used, nbuffers - used, dirty, pinned, used == 0 ? 0 : (double) usage / used);
    }

    /**
     * Pages read whose checksum did not match ({@code pg_stat_database.checksum_failures}), those
     * used anyway ({@code ignore_checksum_failure}) or zeroed ({@code zero_damaged_pages}) included.
     */
    public long checksumFailures() {
        return checksumFailures.sum();
    }

    /** What the pool's read streams did, summed over the streams that ended. */
    public ReadStreamTotals streamTotals() {
        return streamTotals;
    }

    /** Counts one page whose checksum did not match; completion path, error case only. */
    void checksumFailed() {
        checksumFailures.increment();
    }

    /**
     * Writes every dirty buffer in file order, then fsyncs every segment written since the last
     * checkpoint, and only then returns (PostgreSQL's {@code CheckPointBuffers} +
     * {@code ProcessSyncRequests}). Runs in the calling thread with its own session (kind
     * {@code checkpointer}); one checkpoint at a time.
     *
     * @throws java.io.IOException naming relation, block (or file) and errno when a write still
     *         fails after retries or an fsync fails; the buffers stay dirty then
     */
    public CheckpointResult checkpoint() throws java.io.IOException {
        return Checkpointer.run(this);
    }

    BufferMapping mapping() {
        return mapping;
    }

    /** Position of the clock hand (for the background writer). */
    long clockHand() {
        return alloc.clockHand();
    }

    // ------------------------------------------------------------------ dropping every buffer

    /**
     * What {@link #evictAll} did, as PostgreSQL 18's {@code pg_buffercache_evict_all()} reports it.
     *
     * @param evicted buffers whose page was dropped (they are empty now)
     * @param flushed dirty buffers written before they were dropped (including neighbours a
     *                combined write took along)
     * @param skipped buffers that stay: pinned, under I/O, locked for modification, or dirty
     *                because their write failed (the errno is kept, as for any failed write)
     */
    public record EvictAllResult(int evicted, int flushed, int skipped) {
    }

    /**
     * Drops every unpinned buffer from the pool (PostgreSQL 18's {@code pg_buffercache_evict_all},
     * {@code EvictAllUnpinnedBuffers}): afterwards the pool is as empty as a new one for every
     * buffer nobody pinned, without allocating and zeroing a new one. The drill uses it to empty
     * shared buffers between runs.
     *
     * <p><b>Dirty buffers are written first</b>, through {@code session}'s write-back, and waited
     * for, as PostgreSQL does (it flushes, then invalidates): refusing would make the operation
     * useless after any modification, and discarding would lose data ({@code DropRelationBuffers}
     * discards only because the relation is gone). <b>Then the relations whose written pages are
     * not yet durable are fsynced</b> ({@link #syncForReuse}, waiting for a checkpoint's fsync of
     * the same relation), and those pages dropped too: a page leaves shared buffers only once its
     * write is durable. A buffer whose write fails stays, dirty, and is counted as skipped, as is
     * one whose relation's segment could not be opened for the fsync. Pinned buffers and buffers
     * under I/O are skipped, never waited for. Call it holding no content lock.
     *
     * <p>Runs in the calling thread (the thread of {@code session}); concurrent sessions are
     * safe: a buffer is dropped only by the CAS from "pinned once by us, clean, durable, not under
     * I/O, not locked" to untagged, the same rule as eviction, so a session that pins it first
     * keeps it. Not counted as evictions in {@code stat_io} (as PostgreSQL does not), writes and
     * fsyncs are.
     *
     * @throws PosixException when a dirty buffer's segment file cannot be opened (buffers
     *         handled before it stay dropped)
     */
    public EvictAllResult evictAll(BufferSession session) throws PosixException {
        int evicted = 0;
        int skipped = 0;
        BufferWriter writer = session.writer();
        long written = writer.blocksIssued;
        java.util.BitSet unsyncedRelations = null; // relations to fsync; buffers waiting for it
        java.util.BitSet unsyncedBuffers = null;
        for (int buf = 0; buf < nbuffers; buf++) {
            if ((state(buf) & TAG_VALID) == 0) {
                continue; // empty
            }
            if (!tryPinUnused(buf, MAX_USAGE)) {
                skipped++;
                continue;
            }
            try {
                // Twice at most: a combined write that failed is retried alone (a block whose last
                // write failed is written by itself), so one bad neighbour cannot keep it dirty.
                for (int attempt = 0; attempt < 2 && (state(buf) & DIRTY) != 0; attempt++) {
                    writer.writeVictim(buf, null, true);
                }
                long s = state(buf);
                if (dropPinnedOnce(buf)) {
                    evicted++;
                } else if ((s & (TAG_VALID | DIRTY | UNSYNCED)) == (TAG_VALID | UNSYNCED)) {
                    if (unsyncedRelations == null) {
                        unsyncedRelations = new java.util.BitSet();
                        unsyncedBuffers = new java.util.BitSet(nbuffers);
                    }
                    unsyncedRelations.set(tagRelation(tags[buf])); // pinned: the tag is stable
                    unsyncedBuffers.set(buf);
                } else if ((state(buf) & TAG_VALID) != 0) {
                    skipped++; // still dirty (the write failed), or pinned or locked meanwhile
                }
            } finally {
                unpin(buf);
            }
        }
        if (unsyncedRelations != null) {
            for (int id = unsyncedRelations.nextSetBit(0); id >= 0; id = unsyncedRelations.nextSetBit(id + 1)) {
                try {
                    syncForReuse(session, smgr.relation(id), true);
                } catch (PosixException e) {
                    LOG.log(System.Logger.Level.WARNING, "evicting every buffer: " + e.getMessage()
                            + "; the written pages of that relation stay in shared buffers until an fsync covers them");
                }
            }
            for (int buf = unsyncedBuffers.nextSetBit(0); buf >= 0; buf = unsyncedBuffers.nextSetBit(buf + 1)) {
                if ((state(buf) & TAG_VALID) == 0) {
                    continue; // dropped meanwhile
                }
                if (!tryPinUnused(buf, MAX_USAGE)) {
                    skipped++;
                    continue;
                }
                try {
                    if (dropPinnedOnce(buf)) {
                        evicted++;
                    } else if ((state(buf) & TAG_VALID) != 0) {
                        skipped++;
                    }
                } finally {
                    unpin(buf);
                }
            }
        }
        return new EvictAllResult(evicted, (int) (writer.blocksIssued - written), skipped);
    }

    /**
     * Untags {@code buf} if the caller's pin is its only one and it is clean, idle, unlocked and
     * its last write is durable (eviction's rule, also used by {@link #evictAll}); false otherwise,
     * or if it has no tag.
     */
    boolean dropPinnedOnce(int buf) {
        long s = state(buf);
        if ((s & UNSYNCED) != 0) {
            if (!settleUnsynced(buf, s)) {
                return false; // written, not yet durable: it stays until an fsync covers it
            }
            s = state(buf);
        }
        if ((s & TAG_VALID) == 0 || refcount(s) != 1 || (s & (DIRTY | IO_IN_PROGRESS | LOCKED | UNSYNCED)) != 0) {
            return false;
        }
        long oldTag = tags[buf];
        // CAS (volatile) from "pinned only by us, clean, durable": a reader pinning after it sees no tag.
        if (!casState(buf, s, s & ~(TAG_VALID | VALID | IO_ERROR | USAGE_MASK))) {
            return false;
        }
        mapping.remove(oldTag, buf);
        tags[buf] = -1;
        writtenEpoch[buf] = 0; // published with the tag by the next state CAS
        return true;
    }

    /**
     * For a buffer whose state {@code s} has UNSYNCED: clears the bit by CAS when the page's last
     * write needs no fsync any more ({@link SmgrRelation#settled}). Returns true when it did, false
     * when the write is not yet durable or the state changed meanwhile (look again later). Any
     * thread; the tag and the epoch are read after the state (acquire); no lock, no allocation.
     */
    boolean settleUnsynced(int buf, long s) {
        long tag = tags[buf];
        if (tag < 0 || !smgr.relation(tagRelation(tag)).settled(writtenEpoch[buf])) {
            return false;
        }
        return casState(buf, s, s & ~UNSYNCED);
    }

    /** Whether buffer {@code buf}'s last write is not yet known durable (for tests and views). */
    public boolean isUnsynced(int buf) {
        return (state(buf) & UNSYNCED) != 0;
    }

    /**
     * Relation fsyncs that sessions ran to get written buffers back: the clock sweep or a ring that
     * found only such victims, and {@link #evictAll} (also counted as fsyncs in stat_io, under the
     * session's kind).
     */
    public long reuseSyncs() {
        return reuseSyncs.sum();
    }

    /** How long {@link #syncForReuse} without {@code wait} waits for another sync of the relation. */
    static final long SYNC_BUSY_WAIT_NANOS = 2_000_000;

    /**
     * Makes the written buffers of {@code rel} reusable: fsyncs its registered segments under the
     * relation's sync lock, with the epoch rule and the checkpoint's repair of a failed fsync
     * ({@link Checkpointer#syncRelation}). When another sync of the relation holds the lock (a
     * checkpoint's, another session's), it waits for it and returns true without an fsync of its
     * own (that sync made what it covered reusable; the caller looks again), and with {@code wait}
     * false it waits at most {@link #SYNC_BUSY_WAIT_NANOS} and then returns false: a session that
     * may hold a content lock never waits without a deadline for a sync (a repair waits for content
     * locks, for a bounded time too). When the fsync fails and cannot be repaired,
     * the relation is marked not durable (one WARNING) and its buffers become reusable: nothing
     * can make their writes durable any more, and keeping them would only shrink the pool.
     *
     * @throws PosixException naming the file when a segment cannot be opened (nothing is reported
     *         durable; the buffers stay)
     */
    boolean syncForReuse(BufferSession session, SmgrRelation rel, boolean wait) throws PosixException {
        java.util.concurrent.locks.ReentrantLock lock = rel.syncLock();
        boolean contended = !lock.tryLock();
        if (contended) {
            if (wait) {
                lock.lock();
            } else {
                try {
                    if (!lock.tryLock(SYNC_BUSY_WAIT_NANOS, java.util.concurrent.TimeUnit.NANOSECONDS)) {
                        return false;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
        try {
            if (!contended && rel.fsyncFailure() == null) {
                reuseSyncs.increment();
                Checkpointer.FsyncFailure why = Checkpointer.syncRelation(this, session, rel, null);
                if (why != null) {
                    LOG.log(System.Logger.Level.WARNING, why.message() + " (this fsync was run by a session of kind \""
                            + session.io().kind() + "\" to reuse the relation's buffers; they are reusable again)");
                }
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ buffer I/O claims

    static final int IO_READY = 0;
    static final int IO_DONE = 1;
    static final int IO_BUSY = 2;

    /**
     * Claims a pinned buffer for reading (PostgreSQL 19's {@code StartBufferIO}): READY (we set
     * IO_IN_PROGRESS), DONE (already valid), or BUSY (someone's I/O is in flight; its wait
     * reference, if published, is in {@code ioRefs[buf]}).
     */
    int startBufferIo(int buf) {
        for (;;) {
            long s = state(buf);
            if ((s & VALID) != 0) {
                return IO_DONE; // valid: any I/O in progress is a write of it
            }
            if ((s & IO_IN_PROGRESS) != 0) {
                return IO_BUSY;
            }
            if (casState(buf, s, (s | IO_IN_PROGRESS) & ~IO_ERROR)) {
                return IO_READY;
            }
        }
    }

    /**
     * Ends a read on {@code buf}: clears IO_IN_PROGRESS, sets VALID or IO_ERROR, drops the AIO
     * pin, clears the wait reference (PostgreSQL's {@code TerminateBufferIO}). Any thread.
     */
    void terminateIo(int buf, boolean valid) {
        LONGS.setRelease(ioRefs, buf, IoHandle.NO_WAIT_REF);
        for (;;) {
            long s = state(buf);
            long n = (s & ~(IO_IN_PROGRESS | IO_ERROR)) | (valid ? VALID : IO_ERROR);
            n -= REFCOUNT_ONE;
            if (casState(buf, s, n)) {
                return;
            }
        }
    }

    long ioRef(int buf) {
        return (long) LONGS.getAcquire(ioRefs, buf);
    }

    void publishIoRef(int buf, long ref) {
        LONGS.setRelease(ioRefs, buf, ref);
    }

    /** Number of mapped blocks (for tests). */
    int mappedBlocks() {
        return mapping.size();
    }

    /**
     * What {@code huge_pages} gave the pool, as PostgreSQL's {@code huge_pages_status} plus sizes and,
     * when fewer than asked, why: {@code "on: 512 MB of 512 MB in 2 MB pages"},
     * {@code "off: huge_pages = off"}, {@code "partial: …"} (reads {@code /proc/self/smaps} on the
     * first call).
     */
    public String hugePages() {
        return memory.status();
    }

    /** Frees the pool's memory; again, nothing. Every session must be closed. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            aio.unregisterBuffers(pages); // before the memory goes: rings stop using it
            arena.close();
            SharedMemory.mapped(-pages.byteSize());
        }
    }
}
