package org.pageio.bufmgr.smgr;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.pageio.api.IoHandle;
import org.pageio.api.IoTarget;
import org.pageio.posix.CallState;
import org.pageio.posix.DirectIo;
import org.pageio.posix.Errno;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;
import org.pageio.posix.PosixException;

/**
 * One fork of a relation and its files (PostgreSQL's {@code SMgrRelation} + md.c, one object per
 * fork): block → (segment, offset),
 * lazily opened segment descriptors, extension, size, and starting vectored reads on an AIO
 * handle. Also the handle's {@link IoTarget}: the target data packs the first block and the
 * block count of an I/O, so a message can name them.
 *
 * <p><b>Forks.</b> {@link StorageManager#open(RelFileLocator)} gives the main fork;
 * {@link #fork(ForkNumber)} (or {@link StorageManager#open(RelFileLocator, ForkNumber)}) another
 * fork of the same relation, an object of its own with an {@link #id()} of its own, so buffer tags
 * (which store the id) tell fork pages apart. Its files are named as PostgreSQL names them
 * ({@code <relNumber>_vm}, {@code <relNumber>_vm.1}, …) and its messages say which fork
 * ({@code fork vm}). The main fork stands for the relation: {@link #unlink()} on it removes every
 * fork's files, and the buffer manager's {@code dropRelationBuffers} on it drops every fork's buffers.
 *
 * <p>Thread-safe. The descriptor table is copy-on-grow behind a volatile reference: lookups on
 * the read path take no lock; opening a segment takes this relation's lock.
 */
public final class SmgrRelation implements IoTarget {

    static final int MAX_RELATIONS = 1 << 22;
    private static final int BLCKSZ = StorageManager.BLCKSZ;

    private final StorageManager smgr;
    private final int id;
    private final RelFileLocator locator;
    private final ForkNumber fork;
    /** On the main fork: the other forks opened so far, by fork number (null: not opened). Replaced under the storage manager's lock. */
    private volatile SmgrRelation[] forks = new SmgrRelation[ForkNumber.values().length];
    private final Tablespace tablespace;
    private final Path basePath;
    private final long segmentBlocks;
    /** Segment descriptors, -1 = not open. Replaced (never mutated after publication) under {@code this}. */
    private volatile int[] fds = new int[0];

    SmgrRelation(StorageManager smgr, int id, RelFileLocator locator, ForkNumber fork, Tablespace tablespace) {
        this.smgr = smgr;
        this.id = id;
        this.locator = locator;
        this.fork = fork;
        this.tablespace = tablespace;
        this.basePath = tablespace.directory().resolve(fork.fileName(locator.relNumber()));
        this.segmentBlocks = smgr.segmentBlocks();
    }

    public int id() {
        return id;
    }

    public RelFileLocator locator() {
        return locator;
    }

    /**
     * Which fork of the relation this is.
     *
     * @since 1.5.0
     */
    public ForkNumber forkNumber() {
        return fork;
    }

    /**
     * The fork {@code f} of this relation ({@code this} for its own fork): opened once, then the same
     * object, with an id of its own. Its files are created by {@link #create()} or by extending it.
     *
     * @since 1.5.0
     */
    public SmgrRelation fork(ForkNumber f) {
        return f == fork ? this : smgr.open(locator, f);
    }

    /**
     * On the main fork: itself and every other fork of the relation opened so far (what has buffers
     * or open files); on another fork: itself. A snapshot.
     *
     * @since 1.5.0
     */
    public java.util.List<SmgrRelation> openForks() {
        if (fork != ForkNumber.MAIN_FORKNUM) {
            return java.util.List.of(this);
        }
        java.util.List<SmgrRelation> all = new java.util.ArrayList<>(2);
        all.add(this);
        for (SmgrRelation r : forks) {
            if (r != null) {
                all.add(r);
            }
        }
        return all;
    }

    /** Records another fork of this (main) relation; the storage manager calls it under its lock, one at a time. */
    void addFork(SmgrRelation r) {
        SmgrRelation[] f = forks.clone();
        f[r.fork.ordinal()] = r;
        forks = f;
    }

    public Tablespace tablespace() {
        return tablespace;
    }

    public long segmentBlocks() {
        return segmentBlocks;
    }

    /** The file that holds {@code block}. */
    public Path segmentPath(long block) {
        long seg = block / segmentBlocks;
        return seg == 0 ? basePath : basePath.resolveSibling(basePath.getFileName() + "." + seg);
    }

    /** The files that hold blocks {@code [0, nblocks)}, segment 0 first. */
    public java.util.List<Path> segmentPaths(long nblocks) {
        java.util.List<Path> paths = new java.util.ArrayList<>();
        for (long b = 0; b < nblocks; b += segmentBlocks) {
            paths.add(segmentPath(b));
        }
        return paths;
    }

    /** Byte offset of {@code block} in its segment file. */
    public long segmentOffset(long block) {
        return (block % segmentBlocks) * BLCKSZ;
    }

    /** How many blocks from {@code block} one I/O may cover without crossing a segment (mdmaxcombine). */
    public int maxCombine(long block) {
        return (int) Math.min(Integer.MAX_VALUE, segmentBlocks - block % segmentBlocks);
    }

    public boolean exists() {
        return Files.exists(basePath);
    }

    /** Creates the first segment file if it does not exist. */
    public void create() throws PosixException {
        fd(0, true);
    }

    /**
     * Number of blocks: full segments plus the last one's size. A trailing partial block does
     * not count. Reads the file sizes each time.
     */
    public long nblocks() throws PosixException {
        long blocks = 0;
        for (long seg = 0; ; seg++) {
            Path p = segmentPath(seg * segmentBlocks);
            long size;
            try {
                size = Files.size(p);
            } catch (NoSuchFileException e) {
                if (seg == 0) {
                    throw new PosixException("stat", p, Errno.ENOENT, "relation " + this + " does not exist");
                }
                return blocks;
            } catch (IOException e) {
                throw new PosixException("stat", p, Errno.EIO, e.getMessage());
            }
            long inSeg = size / BLCKSZ;
            blocks += Math.min(inSeg, segmentBlocks);
            if (inSeg < segmentBlocks) {
                return blocks;
            }
        }
    }

    /**
     * The descriptor of the segment that holds {@code block}, opening it if needed.
     *
     * @throws PosixException naming the file and the block when the segment cannot be opened
     */
    public int fd(long block) throws PosixException {
        return fd(block, false);
    }

    /** Segments this user could open only for reading, with the errno opening them for writing gave. */
    private final java.util.Map<Integer, Integer> readOnly = new java.util.concurrent.ConcurrentHashMap<>();

    private int open(Path p, int flags) throws PosixException {
        return smgr.directIo() ? DirectIo.open(p, flags, 0600) : Posix.open(p, flags, 0600);
    }

    /**
     * {@link #fd(long)} for a write: refuses, naming the file, the errno and what to do, when the
     * segment could be opened only for reading (a read-only file system, a file of another user).
     */
    public int fdForWrite(long block) throws PosixException {
        int fd = fd(block);
        refuseIfReadOnly(block, false);
        return fd;
    }

    private void refuseIfReadOnly(long block, boolean extending) throws PosixException {
        if (smgr.readOnly()) {
            throw readOnlyStorage(extending ? "extend" : "write", block);
        }
        Integer errno = readOnly.get((int) (block / segmentBlocks));
        if (errno != null) {
            throw new PosixException("open for writing", segmentPath(block), errno, "relation " + this
                    + (extending ? " cannot be extended to block " + block : ", block " + block + " cannot be written")
                    + ": make the data directory writable for this user (or mount it read-write); "
                    + (extending ? "nothing was added" : "the change stays in shared buffers, dirty") + ", and reads go on");
        }
    }

    /** {@link #fd(long)}, creating the segment file first with {@code create}. */
    int fd(long block, boolean create) throws PosixException {
        int seg = (int) (block / segmentBlocks);
        int[] f = fds;
        if (seg < f.length && f[seg] >= 0) {
            if (create) {
                refuseIfReadOnly(block, true); // creating or extending writes: not through a read-only descriptor
            }
            return f[seg];
        }
        synchronized (this) {
            f = fds;
            if (seg < f.length && f[seg] >= 0) {
                if (create) {
                    refuseIfReadOnly(block, true);
                }
                return f[seg];
            }
            Path p = segmentPath(block);
            int fd;
            if (smgr.readOnly()) {
                if (create) {
                    throw readOnlyStorage("create", block);
                }
                try {
                    fd = open(p, OpenFlags.O_RDONLY);
                } catch (PosixException e) {
                    throw openFailed(p, e.errno(), seg, " (read-only)", block, e.context());
                }
                return publish(f, seg, fd);
            }
            int flags = OpenFlags.O_RDWR | (create ? OpenFlags.O_CREAT : 0);
            try {
                // With O_DIRECT, a file system that refuses it (EINVAL) is named with the way out.
                fd = open(p, flags);
            } catch (PosixException e) {
                if (create || (e.errno() != Errno.EROFS && e.errno() != Errno.EACCES)) {
                    throw openFailed(p, e.errno(), seg, "", block, e.context());
                }
                // A read-only file system, or a file this user may only read: serve reads, and
                // refuse writes naming why (fdForWrite).
                try {
                    fd = open(p, (flags & ~OpenFlags.O_RDWR) | OpenFlags.O_RDONLY);
                } catch (PosixException again) {
                    throw openFailed(p, e.errno(), seg, "", block, null);
                }
                readOnly.put(seg, e.errno());
            }
            return publish(f, seg, fd);
        }
    }

    /** The failure to open segment {@code seg} ({@code how}: how it was opened, if not read-write), needed for {@code block}. */
    private PosixException openFailed(Path p, int errno, int seg, String how, long block, String context) {
        return new PosixException("open", p, errno, "segment " + seg + " of relation " + this + how + ", needed for block " + block
                + (context == null ? "" : "; " + context));
    }

    /** Publishes {@code fd} as segment {@code seg}'s descriptor; under {@code this}, with {@code f} the table read under it. */
    private int publish(int[] f, int seg, int fd) {
        int[] grown = java.util.Arrays.copyOf(f, Math.max(f.length, seg + 1));
        for (int i = f.length; i < grown.length; i++) {
            grown[i] = -1;
        }
        grown[seg] = fd;
        fds = grown; // volatile publication
        return fd;
    }

    /** The refusal of a change to a relation of a read-only storage manager ({@link StorageManager#readOnly}). */
    private PosixException readOnlyStorage(String what, long block) {
        return new PosixException("open for writing", segmentPath(block), Errno.EROFS, "relation " + this
                + " is opened read-only (a directory pageio reads and never changes): cannot " + what + " block " + block);
    }

    /**
     * Writes {@code n} pages from {@code src} at {@code block} synchronously, creating segment
     * files as needed (relation extension, and writes outside the buffer pool such as tests and
     * bulk loads). Splits at segment boundaries; loops on short writes.
     */
    public void write(long block, MemorySegment src, int n) throws PosixException {
        wroteAroundPool();
        try (Arena a = Arena.ofConfined()) {
            CallState cs = CallState.allocate(a);
            long done = 0;
            while (done < n) {
                long b = block + done;
                int chunk = (int) Math.min(n - done, maxCombine(b));
                int fd = fd(b, true);
                long off = segmentOffset(b);
                long len = (long) chunk * BLCKSZ;
                long pos = 0;
                while (pos < len) {
                    long r = Posix.pwrite(cs, fd, src.asSlice(done * BLCKSZ + pos, len - pos), len - pos, off + pos);
                    if (r < 0) {
                        throw new PosixException("pwrite", segmentPath(b), (int) -r,
                                "blocks " + b + ".." + (b + chunk - 1) + " of relation " + this);
                    }
                    pos += r;
                }
                registerDirtySegment(b / segmentBlocks);
                done += chunk;
            }
        }
    }

    /**
     * A bulk writer of new pages straight to this relation's files, around the buffer pool: whole
     * runs of pages at block offsets, segment files created (and, with
     * {@link SmgrBulkWriter#PREALLOCATE}, allocated) as the writes reach them, an fsync of every
     * segment written at {@link SmgrBulkWriter#finish}. Creates segment 0. The calling thread owns it.
     *
     * @param expectedBlocks the size the relation will have when the writing is done (what
     *                       preallocation allocates); 0 when not known
     * @param flags          {@link SmgrBulkWriter#DIRECT}, {@link SmgrBulkWriter#PREALLOCATE},
     *                       {@link SmgrBulkWriter#START_WRITEBACK}, or 0: buffered {@code pwrite}s only
     * @throws PosixException naming the file and the errno when segment 0 cannot be opened
     * @since 1.3.0
     */
    public SmgrBulkWriter bulkWriter(long expectedBlocks, int flags) throws PosixException {
        return new SmgrBulkWriter(this, expectedBlocks, flags);
    }

    /** fsyncs every open segment. */
    public void sync() throws PosixException {
        int[] f = fds;
        for (int seg = 0; seg < f.length; seg++) {
            if (f[seg] >= 0) {
                Posix.fsyncOrThrow(f[seg], segmentPath(seg * segmentBlocks));
            }
        }
    }

    /**
     * Starts a vectored read of {@code nblocks} blocks from {@code block} into the pages at
     * {@code addresses[0..nblocks)} on a handed-out handle (PostgreSQL's {@code mdstartreadv}):
     * pages adjacent in memory become one iovec, the target is set, the {@link MdReadv} callback is
     * registered, and the read starts. The read must not cross a segment boundary.
     * Issuer thread; no allocation.
     */
    public void startReadv(IoHandle h, int fd, long block, long[] addresses, int nblocks) {
        int iov = define(h, "read", block, addresses, nblocks);
        h.addCallback(MdReadv.INSTANCE, 0);
        h.startReadv(fd, iov, segmentOffset(block));
    }

    /**
     * Checks the segment boundary, merges pages adjacent in memory into iovecs, sets target and
     * flags. Returns the iovec count. Issuer thread; no allocation.
     */
    private int define(IoHandle h, String what, long block, long[] addresses, int nblocks) {
        if (nblocks < 1 || nblocks > maxCombine(block)) {
            throw new IllegalArgumentException(what + " of " + nblocks + " blocks at block " + block + " of relation " + this
                    + " would cross a segment boundary (segment size " + segmentBlocks + " blocks)");
        }
        int iov = 0;
        long start = addresses[0];
        long len = BLCKSZ;
        for (int i = 1; i < nblocks; i++) {
            if (addresses[i] == start + len) {
                len += BLCKSZ;
            } else {
                h.setIovec(iov++, start, len);
                start = addresses[i];
                len = BLCKSZ;
            }
        }
        h.setIovec(iov++, start, len);
        h.setTarget(this, targetData(block, nblocks));
        if (!smgr.directIo()) {
            h.setFlags(IoHandle.FLAG_BUFFERED);
        }
        return iov;
    }

    /**
     * Starts a vectored write of {@code nblocks} pages at {@code addresses[0..nblocks)} to
     * {@code block} on a handed-out handle (PostgreSQL's {@code mdstartwritev}): pages adjacent in
     * memory become one iovec, the target is set, the segment is remembered for the next
     * checkpoint's fsync ({@link #takeDirtySegments}), and the write starts. The caller registered
     * its completion callback. Must not cross a segment boundary. Issuer thread; no allocation.
     */
    public void startWritev(IoHandle h, int fd, long block, long[] addresses, int nblocks) {
        int iov = define(h, "write", block, addresses, nblocks);
        registerDirtySegment(block / segmentBlocks);
        h.startWritev(fd, iov, segmentOffset(block));
    }

    // ------------------------------------------------------------------ a failed fsync

    /**
     * Why this relation cannot be made durable any more, or null: set by the first fsync of one of
     * its segments that failed, and kept while this storage manager runs. After a failed fsync
     * Linux may have dropped the dirty pages of the failed write-back and report the next fsync
     * as a success, so no later fsync may count (PostgreSQL PANICs here). Volatile: set by a
     * checkpointing thread, read by any.
     */
    private volatile String fsyncFailure;

    /** Every write of this relation that recorded an epoch up to this one is durable (an fsync of all its segments covered it). */
    private volatile long syncedEpoch;
    /** The highest epoch of a write of a page dropped from shared buffers before it was known durable; 0: none. */
    private final java.util.concurrent.atomic.AtomicLong droppedEpoch = new java.util.concurrent.atomic.AtomicLong();
    /** The highest epoch of a write made around the buffer pool (no copy of it stays to write again); 0: none. */
    private final java.util.concurrent.atomic.AtomicLong aroundPoolEpoch = new java.util.concurrent.atomic.AtomicLong();
    /**
     * Held by whoever fsyncs this relation's registered segments and records the outcome
     * ({@link #takeDirtySegments}, the fsyncs, {@link #synced} or {@link #markFsyncFailed}): a
     * checkpoint, or a session that needs its buffers back. So one sync's segments are never
     * taken by another that would then report them durable. Its holder never waits without a
     * deadline for anything but I/O.
     */
    private final java.util.concurrent.locks.ReentrantLock syncLock = new java.util.concurrent.locks.ReentrantLock();

    /** The lock every sync of this relation holds (see the field). */
    public java.util.concurrent.locks.ReentrantLock syncLock() {
        return syncLock;
    }

    /** The epoch up to which this relation's writes are known durable. Any thread. */
    public long syncedEpoch() {
        return syncedEpoch;
    }

    /** Every segment of this relation was fsynced, covering writes up to {@code epoch}. Syncing thread. */
    public void synced(long epoch) {
        if (epoch > syncedEpoch) {
            syncedEpoch = epoch;
        }
    }

    /**
     * Whether a write of this relation that recorded {@code writeEpoch} needs no fsync any more: a
     * good one covered it, or the relation is marked not durable (no fsync of it counts again, so
     * keeping its page would not make it durable). Any thread; two volatile reads.
     */
    public boolean settled(long writeEpoch) {
        return writeEpoch <= syncedEpoch || fsyncFailure != null;
    }

    /**
     * A page of this relation written at {@code writeEpoch} was dropped from shared buffers
     * ({@code dropRelationBuffers}: the relation goes away): if that write is not known durable, a
     * failed fsync can no longer be repaired by writing it again. Any thread.
     */
    public void leftBuffersUnsynced(long writeEpoch) {
        if (writeEpoch > syncedEpoch) {
            droppedEpoch.accumulateAndGet(writeEpoch, Math::max);
        }
    }

    /** A write around the buffer pool (loads, tests): nothing to write again after a failed fsync. Any thread. */
    public void wroteAroundPool() {
        aroundPoolEpoch.accumulateAndGet(smgr.currentEpoch(), Math::max);
    }

    /**
     * Whether every write not yet known durable still has its page in shared buffers, so that a
     * failed fsync can be repaired by writing those pages again and fsyncing again. The buffer pool
     * keeps every page it wrote until a good fsync covers it; writes around it, and pages dropped
     * with their relation, break the rule.
     */
    public boolean unsyncedWritesAllBuffered() {
        long synced = syncedEpoch;
        return aroundPoolEpoch.get() <= synced && droppedEpoch.get() <= synced;
    }

    /** Records that an fsync of this relation failed; the first message stays. Any thread. */
    public void markFsyncFailed(String message) {
        if (fsyncFailure == null) {
            fsyncFailure = message;
        }
    }

    /** Why the relation cannot be made durable (a failed fsync, what to do), or null. Any thread. */
    public String fsyncFailure() {
        return fsyncFailure;
    }

    // ------------------------------------------------------------------ fsync requests (md.c's register_dirty_segment)

    /** Segments 0..63 written since the last checkpoint took them: a bit each (fast path, no lock). */
    private final java.util.concurrent.atomic.AtomicLong dirtyLow = new java.util.concurrent.atomic.AtomicLong();
    /** Segments from 64 on, guarded by itself. */
    private final java.util.BitSet dirtyHigh = new java.util.BitSet();

    /**
     * Remembers that segment {@code seg} was written and needs an fsync at the next checkpoint. Any
     * thread; no allocation for segments below 64.
     */
    public void registerDirtySegment(long seg) {
        if (seg < 64) {
            long bit = 1L << seg;
            for (long v = dirtyLow.get(); (v & bit) == 0; v = dirtyLow.get()) { // no allocation: write completions call it
                if (dirtyLow.compareAndSet(v, v | bit)) {
                    return;
                }
            }
            return;
        }
        synchronized (dirtyHigh) {
            dirtyHigh.set((int) seg);
        }
    }

    /** The segments registered since the last call, ascending; clears them. */
    public long[] takeDirtySegments() {
        long low = dirtyLow.getAndSet(0);
        java.util.BitSet high;
        synchronized (dirtyHigh) {
            high = (java.util.BitSet) dirtyHigh.clone();
            dirtyHigh.clear();
        }
        long[] segs = new long[Long.bitCount(low) + high.cardinality()];
        int n = 0;
        for (long v = low; v != 0; v &= v - 1) {
            segs[n++] = Long.numberOfTrailingZeros(v);
        }
        for (int i = high.nextSetBit(0); i >= 0; i = high.nextSetBit(i + 1)) {
            segs[n++] = i;
        }
        return segs;
    }

    /**
     * Grows the relation by {@code n} zero blocks from {@code first} (which must be its current
     * size), creating segment files as needed: {@code fallocate} reserves the space in one call
     * per segment (PostgreSQL's {@code mdzeroextend}), falling back to writing zeros where the
     * file system does not support it. The new blocks are valid new (all-zero) pages.
     */
    public void extend(long first, long n) throws PosixException {
        long done = 0;
        while (done < n) {
            long b = first + done;
            long chunk = Math.min(n - done, maxCombine(b));
            int fd = fd(b, true);
            long off = segmentOffset(b);
            long len = chunk * BLCKSZ;
            try {
                Posix.fallocate(fd, 0, off, len, segmentPath(b));
            } catch (PosixException e) {
                if (e.errno() != Errno.EOPNOTSUPP) {
                    throw new PosixException("fallocate", segmentPath(b), e.errno(),
                            "extending relation " + this + " by blocks " + b + ".." + (b + chunk - 1));
                }
                try (Arena a = Arena.ofConfined()) {
                    MemorySegment zeros = a.allocate((long) chunk * BLCKSZ, 4096);
                    write(b, zeros, (int) chunk);
                }
            }
            registerDirtySegment(b / segmentBlocks);
            done += chunk;
        }
    }

    /**
     * Reserves disk space for blocks {@code [first, first + n)} without changing the file size
     * ({@code fallocate(FALLOC_FL_KEEP_SIZE)}), one call per segment, so that a bulk load that
     * then writes them sequentially extends its files in large, unfragmented steps. Does nothing
     * where the file system cannot (EOPNOTSUPP). Creates segment files as needed.
     */
    public void reserve(long first, long n) throws PosixException {
        long done = 0;
        while (done < n) {
            long b = first + done;
            long chunk = Math.min(n - done, maxCombine(b));
            try {
                Posix.fallocate(fd(b, true), org.pageio.posix.Fallocate.FALLOC_FL_KEEP_SIZE, segmentOffset(b),
                        chunk * BLCKSZ, segmentPath(b));
            } catch (PosixException e) {
                if (e.errno() == Errno.EOPNOTSUPP) {
                    return;
                }
                throw new PosixException("fallocate", segmentPath(b), e.errno(),
                        "reserving blocks " + b + ".." + (b + chunk - 1) + " of relation " + this);
            }
            done += chunk;
        }
    }

    /** Target data of an I/O of {@code nblocks} blocks from {@code block}. */
    public static long targetData(long block, int nblocks) {
        return (block & 0xFF_FFFF_FFFFL) | ((long) nblocks << 40);
    }

    /** First block of an I/O, from its target data. */
    public static long targetBlock(long targetData) {
        return targetData & 0xFF_FFFF_FFFFL;
    }

    /** Block count of an I/O, from its target data. */
    public static int targetBlocks(long targetData) {
        return (int) (targetData >>> 40);
    }

    /**
     * Messages: {@code blocks 8..15 of relation pg_default/16384 fork main (file /…/base/16384.1)},
     * {@code block 3 of relation pg_default/16384 fork vm (file /…/base/16384_vm)}.
     */
    @Override
    public String describe(long targetData) {
        long first = targetBlock(targetData);
        int n = targetBlocks(targetData);
        String blocks = n <= 1 ? "block " + first : "blocks " + first + ".." + (first + n - 1);
        return blocks + " of relation " + locator + " fork " + fork.forkName() + " (file " + segmentPath(first) + ")";
    }

    /**
     * Puts every open segment descriptor into O_DIRECT mode, or out of it, as the storage manager's
     * {@link StorageManager#setDirectIo} says; under this relation's lock, so that a segment opened
     * meanwhile is opened after the storage manager's flag changed, and so in the new mode.
     * Returns one line per descriptor left as it was (a file system refusing O_DIRECT: the file,
     * the file-system type and the way out), or an empty list.
     */
    synchronized java.util.List<String> switchDirect(CallState cs, boolean direct) {
        java.util.List<String> refused = java.util.List.of();
        int[] f = fds;
        for (int seg = 0; seg < f.length; seg++) {
            if (f[seg] < 0) {
                continue;
            }
            int r = FileStatusFlags.setDirect(cs, f[seg], direct);
            if (r < 0) {
                if (refused.isEmpty()) {
                    refused = new java.util.ArrayList<>();
                }
                Path p = segmentPath(seg * segmentBlocks);
                String why = direct && r == -Errno.EINVAL ? DirectIo.refusal(p.toString(), DirectIo.fileSystemType(f[seg]), Errno.EINVAL)
                        : "fcntl(" + p + ", F_SETFL) failed: " + Errno.name(-r) + " (" + Errno.message(-r) + ")";
                refused.add("segment " + seg + " of relation " + this + " stays " + (direct ? "buffered" : "in O_DIRECT mode")
                        + ": " + why);
            }
        }
        return refused;
    }

    /**
     * Closes the open segment files, on the main fork those of every other fork opened too. Callers
     * make sure no I/O is in flight on them.
     */
    public void close() {
        for (SmgrRelation r : openForks()) {
            r.closeFiles();
        }
    }

    private synchronized void closeFiles() {
        int[] f = fds;
        fds = new int[0];
        for (int seg = 0; seg < f.length; seg++) {
            if (f[seg] >= 0) {
                try {
                    Posix.close(f[seg], segmentPath(seg * segmentBlocks));
                } catch (PosixException e) {
                    // close errors on read-only use are not actionable; the next open reports real problems
                }
            }
        }
    }

    /**
     * Closes and deletes every segment file; on the main fork, every other fork's too (opened or
     * not: a fork left by an earlier run is found by its file), as PostgreSQL's
     * {@code smgrdounlinkall} removes all forks. Dropping the buffers first is the caller's job
     * ({@code dropRelationBuffers} on the main fork drops every fork's).
     */
    public void unlink() throws IOException {
        if (smgr.readOnly()) {
            throw readOnlyStorage("unlink", 0);
        }
        if (fork == ForkNumber.MAIN_FORKNUM) {
            for (ForkNumber f : ForkNumber.values()) {
                if (f != ForkNumber.MAIN_FORKNUM && (forks[f.ordinal()] != null
                        || Files.exists(tablespace.directory().resolve(f.fileName(locator.relNumber()))))) {
                    fork(f).unlinkFiles();
                }
            }
        }
        unlinkFiles();
    }

    private void unlinkFiles() throws IOException {
        closeFiles();
        for (long seg = 0; ; seg++) {
            if (!Files.deleteIfExists(segmentPath(seg * segmentBlocks))) {
                return;
            }
        }
    }

    /** {@code pg_default/16384} for the main fork, {@code pg_default/16384 fork vm} for another. */
    @Override
    public String toString() {
        return fork == ForkNumber.MAIN_FORKNUM ? locator.toString() : locator + " fork " + fork.forkName();
    }
}
