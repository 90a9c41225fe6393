package org.pageio.uring;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.pageio.uring.Abi.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.pageio.api.AioContext;
import org.pageio.api.IoHandle;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;
import org.pageio.posix.Iovec;
import org.pageio.posix.Mman;
import org.pageio.posix.Posix;
import org.pageio.posix.PosixException;

/**
 * One io_uring instance, driven through the raw system calls ({@code io_uring_setup} 425,
 * {@code io_uring_enter} 426, {@code io_uring_register} 427) and its rings mapped into this
 * process: no liburing, no JNI. It carries {@link IoHandle}s of one {@link AioContext}: the SQE's
 * {@code user_data} is the handle's {@link IoHandle#index() index}, mapped back with
 * {@link AioContext#handle(int)} when its completion is reaped. PostgreSQL's per-backend ring
 * ({@code method_io_uring.c}), one per session.
 *
 * <h2>Threads</h2>
 * <ul>
 *   <li><b>Submission</b> ({@link #prepare}, {@link #submit}) belongs to one thread, the owner
 *       (the session's thread): only it touches the submission queue, without a lock.</li>
 *   <li><b>Completion</b> ({@link #waitFor}, {@link #poll}) may be driven by any thread: it takes
 *       the ring's completion lock, reaps the completion queue and calls
 *       {@link IoHandle#complete(int)}, which runs the shared callbacks in that thread.</li>
 *   <li>{@link #close()} is the owner's, after every I/O completed.</li>
 * </ul>
 *
 * <h2>Memory ordering of the ring indexes</h2>
 * Every access to a ring index goes through a {@code VarHandle} of
 * {@code ValueLayout.JAVA_INT.varHandle()} over the mapped segment; the mode is written next to
 * each access. In short: SQEs are written plainly, then the SQ tail is stored with release
 * (the kernel loads it with acquire); the SQ head, written by the kernel, is loaded with acquire;
 * the CQ tail is loaded with acquire (the kernel stores it with release after writing the CQEs);
 * a CQE is read completely before the CQ head moves past it, with a release store (the kernel
 * may reuse the slot as soon as it sees the new head); the SQ flags word is read opaque (a hint
 * that only decides whether to enter the kernel).
 *
 * <h2>Sizing</h2>
 * {@code entries} SQEs (rounded up to a power of two by the kernel) and twice as many CQEs. A
 * session never has more than {@code io_max_concurrency} I/Os in flight and a handle's completion
 * stays in the CQ until reaped, so with {@code entries = io_max_concurrency} neither queue can
 * overflow; the overflow flag is still checked and flushed.
 */
public final class IoUring implements AutoCloseable {

    /** SQE flag: always punt to an io-wq worker instead of trying inline first. */
    public static final int IOSQE_ASYNC = 1 << 4;
    /** The kernel's limit on SQ entries ({@code IORING_MAX_ENTRIES}). */
    public static final int MAX_ENTRIES = 32768;
    /** Size of the ring the availability probe creates. */
    static final int PROBE_ENTRIES = 8;
    /** How long a waiter blocks in the kernel before it re-checks its handle (kernels with EXT_ARG). */
    static final long WAIT_SLICE_SECONDS = 1;
    /** Retries of io_uring_enter answering EAGAIN/EBUSY on submission, before the I/Os fail. */
    static final int SUBMIT_RETRIES = 2000;
    /** Overflow flushes one reap makes at most before it lets the lock go. */
    static final int MAX_FLUSHES = 16;

    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    /**
     * Bitmap of the descriptors that are rings of this class right now, copy-on-write (changed
     * only when a ring opens or closes, read on every {@link #prepare}).
     */
    private static volatile long[] ringFds = new long[1];
    private static final Object RING_FDS_LOCK = new Object();

    private final AioContext context;
    private final int ringFd;
    private final int setupFlags;
    private final int features;
    private final int sqEntries;
    private final int sqMask;
    private final int cqEntries;
    private final int cqMask;
    /** SQ ring; the same segment as {@link #cqRing} when the kernel offers IORING_FEAT_SINGLE_MMAP. */
    private final MemorySegment sqRing;
    private final MemorySegment cqRing;
    private final MemorySegment sqes;
    private final long sqHeadOff;
    private final long sqTailOff;
    private final long sqFlagsOff;
    private final long cqHeadOff;
    private final long cqTailOff;
    private final long cqOverflowOff;
    private final long cqesOff;
    /** Scratch memory of the completion-lock holder: its errno capture and the wait argument. */
    private final Arena scratch;
    private final CallState lockedCallState;
    private final MemorySegment waitArg;
    private final boolean extArg;
    private final ReentrantLock completionLock = new ReentrantLock();

    // ---- owner thread only ----
    /** SQEs prepared so far (the SQ tail this ring will publish). */
    private int localSqTail;
    /** SQEs the kernel consumed. */
    private long submitted;
    /** io_uring_enter calls made to submit. */
    private long submitCalls;
    /** I/Os failed by the owner because the kernel refused the submission. */
    private long submitFailures;
    /**
     * Sum over submissions of the I/Os the kernel still had in flight just before each one (SQEs
     * it consumed minus completions it posted, read from the CQ tail), and the submissions summed:
     * the device queue depth a submitter keeps, which completed-but-unconsumed I/Os do not fill.
     */
    private long inFlightAtSubmitSum;
    private long submitSamples;
    /**
     * Registered ("fixed") buffers: the region the context offered
     * ({@link AioContext#registeredBuffers}) when this ring last looked, registered or not; its
     * bounds while registered ({@code fixedBase} -1 otherwise); I/Os prepared as
     * {@code READ_FIXED}/{@code WRITE_FIXED}.
     */
    private MemorySegment fixedSeen;
    private long fixedBase = -1;
    private long fixedEnd = -1;
    private long fixedIos;
    /** Whether the ring uses registered buffers, and why not. Volatile: read by views, written by the owner. */
    private volatile String fixedNote = "off: no region offered";

    // ---- guarded by completionLock ----
    private long reaped;
    /** io_uring_enter calls that blocked for a completion (GETEVENTS, min 1). */
    private long waitCalls;
    /** {@link #poll()} calls that took the lock, and those of them that found a completion. */
    private long polls;
    private long fruitfulPolls;
    private long strayCompletions;
    private long waitErrors;
    private int lastWaitErrno;
    private boolean closed;

    /**
     * Creates a ring of {@code entries} SQEs for the handles of {@code context}, in the calling
     * thread, which becomes its owner (the only submitter).
     *
     * @throws IoUringException naming the failed call, the errno and the fix
     */
    public static IoUring open(AioContext context, int entries) {
        if (context == null) {
            throw new NullPointerException("context");
        }
        return new IoUring(context, entries);
    }

    /**
     * Whether rings can be used here: creates a small ring, checks that the kernel supports every
     * operation pageio submits ({@code IORING_REGISTER_PROBE}), and closes it. Never throws; the
     * cause names the failed call, the errno, the likely reason and the fix. The calling thread
     * matters: seccomp filters are per thread.
     */
    public static IoUringProbe probe() {
        IoUring ring;
        try {
            ring = new IoUring(null, PROBE_ENTRIES);
        } catch (IoUringException e) {
            return new IoUringProbe(false, e.errno(), e.getMessage(), 0);
        } catch (RuntimeException | LinkageError e) {
            return new IoUringProbe(false, 0, "io_uring_setup could not be called: " + e, 0);
        }
        try {
            String missing = ring.missingOperations();
            return missing == null ? new IoUringProbe(true, 0, null, ring.features)
                    : new IoUringProbe(false, 0, missing, ring.features);
        } finally {
            try {
                ring.close();
            } catch (IoUringException ignored) {
                // the probe's verdict stands; a failed munmap of a throw-away ring changes nothing
            }
        }
    }

    private IoUring(AioContext context, int entries) {
        if (entries < 1 || entries > MAX_ENTRIES) {
            throw new IllegalArgumentException("io_uring entries = " + entries + " is out of range: valid values are 1.."
                    + MAX_ENTRIES);
        }
        this.context = context;
        int fd;
        int flags = IORING_SETUP_SUBMIT_ALL;
        long sqArrayOff;
        long sqRingMaskOff;
        long cqRingMaskOff;
        try (Arena a = Arena.ofConfined()) {
            CallState cs = CallState.allocate(a);
            MemorySegment p = a.allocate(PARAMS_BYTES, 8);
            long r = setup(cs, entries, p, flags);
            if (r == -Errno.EINVAL) { // SUBMIT_ALL needs Linux 5.18: fall back to no flags
                flags = 0;
                p.fill((byte) 0);
                r = setup(cs, entries, p, flags);
            }
            if (r < 0) {
                int errno = (int) -r;
                String op = "io_uring_setup(" + entries + " entries)";
                throw new IoUringException(op, errno, Diagnosis.failure(op, errno, Diagnosis.setupHint(errno)), null);
            }
            fd = (int) r;
            this.features = p.get(JAVA_INT, P_FEATURES);
            this.sqEntries = p.get(JAVA_INT, P_SQ_ENTRIES);
            this.cqEntries = p.get(JAVA_INT, P_CQ_ENTRIES);
            this.sqHeadOff = uint(p, P_SQ_OFF + SQO_HEAD);
            this.sqTailOff = uint(p, P_SQ_OFF + SQO_TAIL);
            this.sqFlagsOff = uint(p, P_SQ_OFF + SQO_FLAGS);
            sqRingMaskOff = uint(p, P_SQ_OFF + SQO_RING_MASK);
            sqArrayOff = uint(p, P_SQ_OFF + SQO_ARRAY);
            this.cqHeadOff = uint(p, P_CQ_OFF + CQO_HEAD);
            this.cqTailOff = uint(p, P_CQ_OFF + CQO_TAIL);
            this.cqOverflowOff = uint(p, P_CQ_OFF + CQO_OVERFLOW);
            this.cqesOff = uint(p, P_CQ_OFF + CQO_CQES);
            cqRingMaskOff = uint(p, P_CQ_OFF + CQO_RING_MASK);
        }
        this.setupFlags = flags;
        this.ringFd = fd;
        markRingFd(fd, true);
        long sqRingBytes = sqArrayOff + (long) sqEntries * Integer.BYTES;
        long cqRingBytes = cqesOff + (long) cqEntries * CQE_BYTES;
        boolean single = (features & IORING_FEAT_SINGLE_MMAP) != 0;
        List<MemorySegment> mapped = new ArrayList<>(3);
        try {
            // One mapping for both rings when the kernel offers it (5.4+), as liburing does.
            MemorySegment sq = map(single ? Math.max(sqRingBytes, cqRingBytes) : sqRingBytes, IORING_OFF_SQ_RING,
                    "SQ ring", mapped);
            MemorySegment cq = single ? sq : map(cqRingBytes, IORING_OFF_CQ_RING, "CQ ring", mapped);
            MemorySegment e = map((long) sqEntries * SQE_BYTES, IORING_OFF_SQES, "SQE array", mapped);
            this.sqRing = sq;
            this.cqRing = cq;
            this.sqes = e;
        } catch (IoUringException ex) {
            unmapAll(mapped, ex);
            markRingFd(fd, false);
            closeFd(fd, ex);
            throw ex;
        }
        // The masks are constant (entries - 1); plain loads before anybody else knows the ring.
        this.sqMask = sqRing.get(JAVA_INT, sqRingMaskOff);
        this.cqMask = cqRing.get(JAVA_INT, cqRingMaskOff);
        // No IORING_SETUP_NO_SQARRAY: the SQ array is an indirection table; make it the identity
        // once, so that SQE i is always submitted from slot i (as liburing does).
        for (int i = 0; i < sqEntries; i++) {
            sqRing.set(JAVA_INT, sqArrayOff + (long) i * Integer.BYTES, i);
        }
        // Plain load: nobody else knows this ring yet; the kernel starts its SQ tail at 0 too.
        this.localSqTail = (int) INT.get(sqRing, sqTailOff);
        this.scratch = Arena.ofShared();
        this.lockedCallState = CallState.allocate(scratch);
        this.extArg = (features & IORING_FEAT_EXT_ARG) != 0;
        // struct io_uring_getevents_arg {u64 sigmask; u32 sigmask_sz; u32 pad; u64 ts}, then the timespec.
        this.waitArg = scratch.allocate(GETEVENTS_ARG_BYTES + 16, 8);
        MemorySegment ts = waitArg.asSlice(GETEVENTS_ARG_BYTES, 16);
        ts.set(JAVA_LONG, 0, WAIT_SLICE_SECONDS);
        ts.set(JAVA_LONG, 8, 0L);
        waitArg.set(JAVA_LONG, GEA_TS, ts.address());
        if (context != null && context.registeredBuffers() != null) {
            refreshFixed(context.registeredBuffers(), lockedCallState); // nobody else knows the ring yet
        }
    }

    /** Whether {@code fd} is the descriptor of an open ring of this class (any context). Any thread. */
    public static boolean isRingFd(int fd) {
        long[] bits = ringFds;
        int word = fd >>> 6;
        return fd >= 0 && word < bits.length && (bits[word] & (1L << fd)) != 0;
    }

    private static void markRingFd(int fd, boolean ring) {
        synchronized (RING_FDS_LOCK) {
            long[] bits = ringFds;
            int word = fd >>> 6;
            bits = java.util.Arrays.copyOf(bits, Math.max(bits.length, word + 1));
            if (ring) {
                bits[word] |= 1L << fd;
            } else {
                bits[word] &= ~(1L << fd);
            }
            ringFds = bits;
        }
    }

    private static long uint(MemorySegment params, long offset) {
        return params.get(JAVA_INT, offset) & 0xffffffffL;
    }

    private static long setup(CallState cs, int entries, MemorySegment params, int flags) {
        params.set(JAVA_INT, P_FLAGS, flags);
        return Posix.syscall(cs, SYS_IO_URING_SETUP, entries, params.address(), 0, 0, 0, 0);
    }

    private MemorySegment map(long bytes, long offset, String what, List<MemorySegment> mapped) {
        try {
            MemorySegment seg = Posix.mmap(bytes, Mman.PROT_READ | Mman.PROT_WRITE, Mman.MAP_SHARED | Mman.MAP_POPULATE,
                    ringFd, offset, null);
            mapped.add(seg);
            return seg;
        } catch (PosixException e) {
            String op = "mmap(io_uring " + what + ", " + bytes + " bytes)";
            throw new IoUringException(op, e.errno(), Diagnosis.failure(op, e.errno(), Diagnosis.mmapHint(e.errno())), e);
        }
    }

    // ------------------------------------------------------------------ what the ring is

    /** The ring's file descriptor. */
    public int fd() {
        return ringFd;
    }

    /** SQ entries, as the kernel rounded them (a power of two, at least the entries asked for). */
    public int sqEntries() {
        return sqEntries;
    }

    /** CQ entries: twice {@link #sqEntries()}. */
    public int cqEntries() {
        return cqEntries;
    }

    /** The {@code IORING_FEAT_*} bits the kernel reported. */
    public int features() {
        return features;
    }

    /** The {@code IORING_SETUP_*} flags the ring was created with. */
    public int setupFlags() {
        return setupFlags;
    }

    /** Whether both rings share one mapping ({@code IORING_FEAT_SINGLE_MMAP}). */
    public boolean singleMmap() {
        return sqRing == cqRing;
    }

    /** io_uring_enter calls made to submit (one per batch unless the kernel pushed back). Owner only. */
    public long submitCalls() {
        return submitCalls;
    }

    /** SQEs the kernel consumed. Owner only. */
    public long submitted() {
        return submitted;
    }

    /** Completions reaped, by every thread together. Any thread (takes the completion lock). */
    public long reaped() {
        completionLock.lock();
        try {
            return reaped;
        } finally {
            completionLock.unlock();
        }
    }

    /**
     * The kernel's count of completions that did not fit the CQ (with IORING_FEAT_NODROP they
     * wait in the kernel and are flushed later, so none is lost); 0 when the sizing is right, -1
     * after close. Any thread.
     */
    public int cqOverflow() {
        completionLock.lock();
        try {
            // Opaque: a statistic; nothing is read on the strength of it.
            return closed ? -1 : (int) INT.getOpaque(cqRing, cqOverflowOff);
        } finally {
            completionLock.unlock();
        }
    }

    // ------------------------------------------------------------------ registered buffers (owner)

    /**
     * The registered buffer that holds all of {@code [addr, addr + len)}, or -1: the I/O is then
     * prepared as a plain {@code READ}/{@code WRITE}. Follows the context's offer first (a new
     * region is registered, a withdrawn one released, here in the owner thread, so at most once
     * per change), and never uses a region whose memory was freed. Owner only.
     */
    private int fixedIndex(long addr, int len, IoHandle h) {
        MemorySegment offered = context == null ? null : context.registeredBuffers(); // volatile read
        if (offered != fixedSeen) {
            refreshFixed(offered, h.session().callState());
        }
        if (fixedBase < 0 || addr < fixedBase || addr + len > fixedEnd || len <= 0) {
            return -1;
        }
        if (!fixedSeen.scope().isAlive()) {
            // freed without being withdrawn: its addresses may now be someone else's memory
            refreshFixed(null, h.session().callState());
            fixedNote = "off: the registered region was freed without being withdrawn";
            return -1;
        }
        long rel = addr - fixedBase;
        int first = (int) (rel / MAX_FIXED_BUFFER_BYTES);
        return first == (int) ((rel + len - 1) / MAX_FIXED_BUFFER_BYTES) ? first : -1;
    }

    /**
     * Releases this ring's registration, if any, and registers {@code region} (in parts of at
     * most 1 GiB, the kernel's limit per buffer). A failure is not an error: the ring goes on
     * with plain reads and writes, and {@link #registeredBuffers()} says why. The kernel pins the
     * region's pages until they are unregistered or the ring closes. Owner only (or the
     * constructor); allocates, once per change of region.
     */
    private void refreshFixed(MemorySegment region, CallState cs) {
        if (fixedBase >= 0) {
            // In-flight I/Os keep their buffers; the kernel unpins the pages when they end. A
            // failure leaves them pinned until the ring closes: harmless, nothing to report.
            Posix.syscall(cs, SYS_IO_URING_REGISTER, ringFd, IORING_UNREGISTER_BUFFERS, 0, 0, 0, 0);
            fixedBase = -1;
            fixedEnd = -1;
        }
        fixedSeen = region;
        if (region == null) {
            fixedNote = "off: no region offered";
            return;
        }
        if (!region.scope().isAlive()) {
            fixedNote = "off: the offered region was already freed";
            return;
        }
        long size = region.byteSize();
        int parts = (int) ((size + MAX_FIXED_BUFFER_BYTES - 1) / MAX_FIXED_BUFFER_BYTES);
        long r;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment iovs = a.allocate(Iovec.BYTES * Math.max(1, parts), 8);
            for (int i = 0; i < parts; i++) {
                long off = i * MAX_FIXED_BUFFER_BYTES;
                iovs.set(JAVA_LONG, Iovec.BYTES * i, region.address() + off);
                iovs.set(JAVA_LONG, Iovec.BYTES * i + 8, Math.min(MAX_FIXED_BUFFER_BYTES, size - off));
            }
            r = Posix.syscall(cs, SYS_IO_URING_REGISTER, ringFd, IORING_REGISTER_BUFFERS, iovs.address(), parts, 0, 0);
        }
        String what = (size >= 1 << 20 ? (size >> 20) + " MiB" : (size >> 10) + " kB") + " in " + parts
                + (parts == 1 ? " buffer" : " buffers");
        if (r < 0) {
            int errno = (int) -r;
            fixedNote = "off: io_uring_register(IORING_REGISTER_BUFFERS) of " + what + " failed: " + Errno.name(errno)
                    + (errno == Errno.ENOMEM
                            ? " (registered buffers are pinned and count against RLIMIT_MEMLOCK: raise `ulimit -l`"
                                    + " or grant CAP_IPC_LOCK); I/Os map their buffers one by one instead"
                            : "; I/Os map their buffers one by one instead");
            return;
        }
        fixedBase = region.address();
        fixedEnd = fixedBase + size;
        fixedNote = "on: " + what;
    }

    /**
     * Whether this ring uses registered buffers ("on: 512 MiB in 1 buffer"), or why not ("off:
     * …", e.g. the kernel's answer to the registration). Any thread.
     */
    public String registeredBuffers() {
        return fixedNote;
    }

    /** I/Os prepared as {@code READ_FIXED}/{@code WRITE_FIXED} (into registered buffers). Owner only, or after close. */
    public long fixedIos() {
        return fixedIos;
    }

    // ------------------------------------------------------------------ submission (owner)

    /**
     * Fills the next SQE for {@code h}, which is in state SUBMITTED: {@code READ} for one iovec,
     * {@code READV} for several, {@code WRITE}/{@code WRITEV} likewise, {@code FSYNC} (with
     * {@code IORING_FSYNC_DATASYNC} for fdatasync). Nothing reaches the kernel until
     * {@link #submit}. {@code sqeFlags} are {@code IOSQE_*} bits such as {@link #IOSQE_ASYNC}.
     * Owner only; allocates nothing.
     */
    public void prepare(IoHandle h, int sqeFlags) {
        // Acquire: pairs with the kernel's release store of the SQ head once it consumed SQEs, so
        // the slot we are about to overwrite is really free.
        if (localSqTail - (int) INT.getAcquire(sqRing, sqHeadOff) >= sqEntries) {
            // Cannot happen when entries >= io_max_concurrency; stay correct if it does.
            submit(h.session().callState());
        }
        if (isRingFd(h.fd())) {
            // A stale descriptor (closed by its owner) whose number now belongs to a ring: the
            // kernel would wait for the ring to become readable, possibly forever. It stands for a
            // closed file, so it fails as one.
            h.complete(-Errno.EBADF);
            return;
        }
        byte opcode;
        long addr;
        int len;
        int rwFlags = 0;
        int bufIndex = -1;
        MemorySegment iov = h.iovecs();
        switch (h.op()) {
            case IoHandle.OP_READV, IoHandle.OP_WRITEV -> {
                boolean read = h.op() == IoHandle.OP_READV;
                if (h.iovcnt() == 1) {
                    opcode = read ? IORING_OP_READ : IORING_OP_WRITE;
                    addr = Iovec.base(iov, 0);
                    len = (int) Iovec.length(iov, 0);
                    bufIndex = fixedIndex(addr, len, h);
                    if (bufIndex >= 0) {
                        opcode = read ? IORING_OP_READ_FIXED : IORING_OP_WRITE_FIXED;
                        fixedIos++;
                    }
                } else {
                    opcode = read ? IORING_OP_READV : IORING_OP_WRITEV;
                    addr = iov.address();
                    len = h.iovcnt();
                }
            }
            case IoHandle.OP_FSYNC, IoHandle.OP_FDATASYNC -> {
                opcode = IORING_OP_FSYNC;
                addr = 0;
                len = 0;
                rwFlags = h.op() == IoHandle.OP_FDATASYNC ? IORING_FSYNC_DATASYNC : 0;
            }
            default -> {
                h.complete(-Errno.EINVAL); // no SQE: nothing will come back for it
                return;
            }
        }
        long sqe = (long) (localSqTail & sqMask) * SQE_BYTES;
        MemorySegment s = sqes;
        // Plain stores: published to the kernel by the release store of the SQ tail in submit().
        // All 64 bytes are written (ioprio, buf_index, personality, file_index, addr3 are 0).
        s.set(JAVA_LONG, sqe, 0L);
        s.set(JAVA_BYTE, sqe + SQE_OPCODE, opcode);
        s.set(JAVA_BYTE, sqe + SQE_FLAGS, (byte) sqeFlags);
        s.set(JAVA_INT, sqe + SQE_FD, h.fd());
        s.set(JAVA_LONG, sqe + SQE_OFF, opcode == IORING_OP_FSYNC ? 0L : h.offset());
        s.set(JAVA_LONG, sqe + SQE_ADDR, addr);
        s.set(JAVA_INT, sqe + SQE_LEN, len);
        s.set(JAVA_INT, sqe + SQE_RW_FLAGS, rwFlags);
        s.set(JAVA_LONG, sqe + SQE_USER_DATA, h.index());
        s.set(JAVA_LONG, sqe + 40, 0L);
        if (bufIndex >= 0) {
            s.set(JAVA_SHORT, sqe + SQE_BUF_INDEX, (short) bufIndex);
        }
        s.set(JAVA_LONG, sqe + 48, 0L);
        s.set(JAVA_LONG, sqe + 56, 0L);
        localSqTail++;
    }

    /**
     * Publishes the prepared SQEs and hands them to the kernel with one {@code io_uring_enter}
     * (more only if the kernel pushes back). {@code -EINTR} is retried; {@code -EAGAIN} and
     * {@code -EBUSY} (kernel short of resources, completions to flush) are retried after reaping,
     * {@value #SUBMIT_RETRIES} times at most; any other error fails the I/Os the kernel did not
     * take with that errno (their handles complete with {@code -errno}). Never throws for an I/O
     * error. Owner only; {@code cs} is the owner's errno capture.
     *
     * @return the number of SQEs the kernel consumed
     */
    public int submit(CallState cs) {
        int tail = localSqTail;
        // Release: every plain SQE store above happens-before the kernel's acquire load of the tail.
        INT.setRelease(sqRing, sqTailOff, tail);
        // Acquire: pairs with the kernel's release store of the head (what it consumed so far).
        int pending = tail - (int) INT.getAcquire(sqRing, sqHeadOff);
        if (pending <= 0) {
            return 0;
        }
        relieveCqPressure();
        // Acquire (CQ tail, as the reaper reads it): completions the kernel posted so far. Both
        // counters wrap at 2^32 together, so their int difference is the kernel's in-flight count.
        inFlightAtSubmitSum += (int) submitted - (int) INT.getAcquire(cqRing, cqTailOff);
        submitSamples++;
        int consumed = 0;
        int retries = 0;
        while (pending > 0) {
            long r = Posix.syscall(cs, SYS_IO_URING_ENTER, ringFd, pending, 0, 0, 0, 0);
            submitCalls++;
            if (r > 0) {
                consumed += (int) r;
                pending -= (int) r;
                submitted += r;
                retries = 0;
                continue;
            }
            int err = r == 0 ? Errno.EAGAIN : (int) -r;
            if (err == Errno.EINTR) {
                continue;
            }
            if ((err == Errno.EAGAIN || err == Errno.EBUSY) && ++retries <= SUBMIT_RETRIES) {
                backOff(retries);
                continue;
            }
            failUnsubmitted(err);
            break;
        }
        return consumed;
    }

    /**
     * Reaps when the CQ is filling up or the kernel flagged an overflow. Never blocks on the lock:
     * if another thread holds it, that thread is reaping already.
     */
    private void relieveCqPressure() {
        // Opaque: the flag word is only a hint here; the reap below re-reads the indexes properly.
        int sqFlags = (int) INT.getOpaque(sqRing, sqFlagsOff);
        // Acquire (tail) / opaque (head, written under the completion lock we do not hold): an
        // estimate of the CQEs waiting, to decide whether to reap now.
        int ready = (int) INT.getAcquire(cqRing, cqTailOff) - (int) INT.getOpaque(cqRing, cqHeadOff);
        if ((sqFlags & IORING_SQ_CQ_OVERFLOW) != 0 || ready > cqEntries - sqEntries) {
            if (completionLock.tryLock()) {
                try {
                    if (!closed) {
                        reapLocked();
                    }
                } finally {
                    completionLock.unlock();
                }
            }
        }
    }

    private void backOff(int retries) {
        if (completionLock.tryLock()) {
            try {
                if (!closed && reapLocked() > 0) {
                    return;
                }
            } finally {
                completionLock.unlock();
            }
        }
        LockSupport.parkNanos(Math.min(retries * 10_000L, 1_000_000L));
    }

    /**
     * The kernel refused the rest of the batch: complete those handles with {@code -err} and
     * take their SQEs back (move the tail back to the kernel's head). Safe without SQPOLL: the
     * kernel reads the tail only inside io_uring_enter, which only the owner calls to submit.
     */
    private void failUnsubmitted(int err) {
        // Acquire: the kernel's consumption up to head is complete.
        int head = (int) INT.getAcquire(sqRing, sqHeadOff);
        int tail = localSqTail;
        localSqTail = head;
        // Release: retract the published tail before completing (nobody else submits).
        INT.setRelease(sqRing, sqTailOff, head);
        for (int i = head; i != tail; i++) {
            long userData = sqes.get(JAVA_LONG, (long) (i & sqMask) * SQE_BYTES + SQE_USER_DATA);
            submitFailures++;
            dispatch(userData, -err);
        }
    }

    /** I/Os the owner failed because the kernel refused them. Owner only. */
    public long submitFailures() {
        return submitFailures;
    }

    /**
     * The average number of I/Os the kernel had in flight (consumed SQEs without a posted CQE)
     * just before a submission: how deep a submitter keeps the device between its refills. NaN
     * before the first submission. Owner only.
     */
    public double averageInFlightAtSubmit() {
        return submitSamples == 0 ? Double.NaN : (double) inFlightAtSubmitSum / submitSamples;
    }

    /** Submissions {@link #averageInFlightAtSubmit()} averages over. Owner only. */
    public long submitSamples() {
        return submitSamples;
    }

    /** The sum {@link #averageInFlightAtSubmit()} divides (to add up several rings). Owner only. */
    public long inFlightAtSubmitSum() {
        return inFlightAtSubmitSum;
    }

    /**
     * {waitCalls, polls, fruitfulPolls}: io_uring_enter calls that blocked for a completion,
     * {@link #poll()} calls that took the lock, and those that found something. Any thread
     * (takes the completion lock).
     */
    public long[] reapStats() {
        completionLock.lock();
        try {
            return new long[] {waitCalls, polls, fruitfulPolls};
        } finally {
            completionLock.unlock();
        }
    }

    // ------------------------------------------------------------------ completion (any thread)

    /**
     * Waits until {@code h}'s state is at least {@link IoHandle#COMPLETED_IO} or its generation
     * moved past {@code generation}: takes the completion lock, reaps, and when nothing is ready
     * blocks in the kernel for at least one completion ({@code IORING_ENTER_GETEVENTS}; a thread
     * other than the owner in slices of {@value #WAIT_SLICE_SECONDS} s when the kernel has EXT_ARG,
     * re-checking in between).
     * {@code -EINTR}, {@code -ETIME}, {@code -EAGAIN}, {@code -EBUSY} just loop. Returns at once if
     * the ring was closed. Any thread; never throws.
     */
    public void waitFor(IoHandle h, long generation) {
        if (finished(h, generation)) {
            return;
        }
        // Only a thread other than the owner can be waiting for an I/O whose SQE is not in the
        // kernel yet (the owner is between marking it SUBMITTED and io_uring_enter, or failed
        // it itself because the kernel refused it): such a waiter blocks in slices and re-checks.
        // The owner's own waits never need that, and skip the kernel timer.
        boolean sliced = Thread.currentThread() != h.session().owner();
        completionLock.lock();
        try {
            while (!closed && !finished(h, generation)) {
                if (reapLocked() == 0) {
                    waitInKernelLocked(sliced);
                }
            }
        } finally {
            completionLock.unlock();
        }
    }

    /**
     * Waits until {@code h} is finished or a completion is ready in the CQ (or another thread
     * processed one while this one waited for the lock), then processes at most {@code max} ready
     * completions, leaving the rest in the CQ. Any thread; never throws.
     */
    public void waitForProgress(IoHandle h, long generation, int max) {
        if (finished(h, generation)) {
            return;
        }
        boolean sliced = Thread.currentThread() != h.session().owner();
        completionLock.lock();
        try {
            long before = reaped;
            while (!closed && !finished(h, generation) && reaped == before && readyCompletions() == 0) {
                waitInKernelLocked(sliced);
            }
            if (!closed && max > 0) {
                reapLocked(max);
            }
        } finally {
            completionLock.unlock();
        }
    }

    /**
     * CQEs in the completion queue, not reaped yet (a snapshot). The owner (only its session's
     * close unmaps the ring) or a holder of the completion lock with the ring not {@code closed};
     * no lock taken: the head is read opaque (the lock holder advances it), the tail with acquire
     * (the kernel's release).
     */
    public int readyCompletions() {
        return (int) INT.getAcquire(cqRing, cqTailOff) - (int) INT.getOpaque(cqRing, cqHeadOff);
    }

    /**
     * Reaps what is ready without blocking: nothing if another thread holds the completion lock
     * (it is reaping). Any thread.
     *
     * @return completions processed
     */
    public int poll() {
        if (!completionLock.tryLock()) {
            return 0;
        }
        try {
            if (closed) {
                return 0;
            }
            polls++;
            int n = reapLocked();
            if (n > 0) {
                fruitfulPolls++;
            }
            return n;
        } finally {
            completionLock.unlock();
        }
    }

    /** State first, then generation: a matching generation proves the state read is this I/O's. */
    private static boolean finished(IoHandle h, long generation) {
        return h.state() >= IoHandle.COMPLETED_IO || h.generation() != generation;
    }

    /**
     * Processes the completions ready now (a snapshot of the tail: does not chase new arrivals),
     * flushing the kernel's overflow list when flagged. Completion lock held.
     */
    private int reapLocked() {
        return reapLocked(Integer.MAX_VALUE);
    }

    /** {@link #reapLocked()}, stopping after {@code max} completions (the rest stays in the CQ). */
    private int reapLocked(int max) {
        int n = 0;
        for (int flushes = 0; ; flushes++) {
            // Plain: only the completion-lock holder writes the CQ head, and the lock orders us after it.
            int head = (int) INT.get(cqRing, cqHeadOff);
            // Acquire: pairs with the kernel's release store of the tail, so the CQEs before it are
            // fully written when we read them.
            int tail = (int) INT.getAcquire(cqRing, cqTailOff);
            while (head != tail && n < max) {
                long cqe = cqesOff + (long) (head & cqMask) * CQE_BYTES;
                long userData = cqRing.get(JAVA_LONG, cqe + CQE_USER_DATA);
                int res = cqRing.get(JAVA_INT, cqe + CQE_RES);
                head++;
                // Release: user_data and res are read before the kernel can see the slot free and
                // reuse it (PostgreSQL's 8077649907: read res BEFORE advancing the head).
                INT.setRelease(cqRing, cqHeadOff, head);
                reaped++;
                n++;
                dispatch(userData, res);
            }
            if (n >= max) {
                return n; // the rest stays in the CQ for the next reap
            }
            // Opaque: a hint; if set, the kernel holds completions that did not fit the CQ.
            if (((int) INT.getOpaque(sqRing, sqFlagsOff) & IORING_SQ_CQ_OVERFLOW) == 0 || flushes == MAX_FLUSHES) {
                return n; // after MAX_FLUSHES the next reap goes on: the lock is not held forever
            }
            // GETEVENTS with min_complete 0 flushes the overflow list into the CQ without waiting.
            long r = Posix.syscall(lockedCallState, SYS_IO_URING_ENTER, ringFd, 0, 0, IORING_ENTER_GETEVENTS, 0, 0);
            if (r < 0 && r != -Errno.EINTR && r != -Errno.EBUSY && r != -Errno.EAGAIN) {
                noteWaitError((int) -r);
                return n;
            }
        }
    }

    private void waitInKernelLocked(boolean sliced) {
        waitCalls++;
        long r = sliced && extArg
                ? Posix.syscall(lockedCallState, SYS_IO_URING_ENTER, ringFd, 0, 1,
                        IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, waitArg.address(), GETEVENTS_ARG_BYTES)
                : Posix.syscall(lockedCallState, SYS_IO_URING_ENTER, ringFd, 0, 1, IORING_ENTER_GETEVENTS, 0, 0);
        if (r < 0) {
            int err = (int) -r;
            if (err != Errno.EINTR && err != Errno.ETIME && err != Errno.EAGAIN && err != Errno.EBUSY) {
                noteWaitError(err);
                LockSupport.parkNanos(1_000_000L); // a persistent error must not become a hot loop
            }
        }
    }

    private void noteWaitError(int err) {
        waitErrors++;
        lastWaitErrno = err;
    }

    /**
     * Errors io_uring_enter returned to waiters other than EINTR/ETIME/EAGAIN/EBUSY, with the
     * last errno by name; "none" when there were none. Any thread.
     */
    public String waitErrors() {
        completionLock.lock();
        try {
            return waitErrors == 0 ? "none" : waitErrors + " (last " + Errno.name(lastWaitErrno) + ")";
        } finally {
            completionLock.unlock();
        }
    }

    /** Completes the handle whose index is {@code userData}. Never throws. */
    private void dispatch(long userData, int res) {
        AioContext ctx = context;
        if (ctx == null || userData < 0 || userData >= ctx.handleCount()) {
            strayCompletions++; // not ours (cannot happen: every SQE carries a handle index)
            return;
        }
        ctx.handle((int) userData).complete(res);
    }

    // ------------------------------------------------------------------ probe

    /** {@code null} when the kernel supports every opcode pageio submits, else the message. */
    private String missingOperations() {
        try (Arena a = Arena.ofConfined()) {
            CallState cs = CallState.allocate(a);
            MemorySegment probe = a.allocate(PROBE_HEADER_BYTES + PROBE_OPS * PROBE_OP_BYTES, 8);
            long r = Posix.syscall(cs, SYS_IO_URING_REGISTER, ringFd, IORING_REGISTER_PROBE, probe.address(), PROBE_OPS,
                    0, 0);
            String kernel = Diagnosis.read(Diagnosis.OSRELEASE);
            String on = kernel == null ? "" : " (Linux " + kernel + ")";
            if (r < 0) {
                int errno = (int) -r;
                return Diagnosis.failure("io_uring_register(IORING_REGISTER_PROBE)", errno,
                        "this kernel" + on + " cannot list its io_uring operations, so it predates Linux 5.6 and lacks"
                                + " IORING_OP_READ/WRITE: upgrade the kernel, or choose io_method=worker");
            }
            int last = probe.get(JAVA_BYTE, PROBE_LAST_OP) & 0xff;
            StringBuilder missing = new StringBuilder();
            byte[] ops = {IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_FSYNC, IORING_OP_READ, IORING_OP_WRITE};
            String[] names = {"IORING_OP_READV", "IORING_OP_WRITEV", "IORING_OP_FSYNC", "IORING_OP_READ", "IORING_OP_WRITE"};
            for (int i = 0; i < ops.length; i++) {
                int op = ops[i];
                boolean ok = op <= last && (probe.get(JAVA_SHORT,
                        PROBE_HEADER_BYTES + op * PROBE_OP_BYTES + PROBE_OP_FLAGS) & IO_URING_OP_SUPPORTED) != 0;
                if (!ok) {
                    missing.append(missing.isEmpty() ? "" : ", ").append(names[i]);
                }
            }
            return missing.isEmpty() ? null : "io_uring on this kernel" + on + " lacks " + missing
                    + " (IORING_OP_READ/WRITE need Linux 5.6): upgrade the kernel, or choose io_method=worker";
        }
    }

    // ------------------------------------------------------------------ close

    /**
     * Closes the ring: unmaps its memory and closes its descriptor. Owner only, after every I/O
     * submitted through it completed (the session drained); if some did not, waits for the
     * kernel to finish with their buffers first (up to 10 s). Waiters that race with close see
     * the ring closed and return. Idempotent.
     *
     * @throws IoUringException if munmap or close fails (the ring is closed all the same)
     */
    @Override
    public void close() {
        completionLock.lock();
        try {
            if (closed) {
                return;
            }
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (submitted > reaped && System.nanoTime() < deadline) {
                if (reapLocked() == 0) {
                    waitInKernelLocked(true);
                }
            }
            closed = true;
        } finally {
            completionLock.unlock();
        }
        IoUringException failure = null;
        List<MemorySegment> maps = new ArrayList<>(3);
        maps.add(sqes);
        maps.add(sqRing);
        if (cqRing != sqRing) {
            maps.add(cqRing);
        }
        failure = unmapAll(maps, failure);
        markRingFd(ringFd, false); // before close: the number may be reused at once
        failure = closeFd(ringFd, failure);
        scratch.close();
        if (failure != null) {
            throw failure;
        }
    }

    private static IoUringException unmapAll(List<MemorySegment> maps, IoUringException failure) {
        for (MemorySegment m : maps) {
            try {
                Posix.munmap(m);
            } catch (PosixException e) {
                IoUringException x = new IoUringException("munmap(io_uring ring)", e.errno(), Diagnosis.failure(
                        "munmap(io_uring ring, " + m.byteSize() + " bytes)", e.errno(), "a bug in pageio, please report it"), e);
                if (failure == null) {
                    failure = x;
                } else {
                    failure.addSuppressed(x);
                }
            }
        }
        return failure;
    }

    private static IoUringException closeFd(int fd, IoUringException failure) {
        try {
            Posix.close(fd, null);
        } catch (PosixException e) {
            IoUringException x = new IoUringException("close(io_uring fd " + fd + ")", e.errno(), Diagnosis.failure(
                    "close(io_uring fd " + fd + ")", e.errno(), "the descriptor is released anyway; do not retry"), e);
            if (failure == null) {
                return x;
            }
            failure.addSuppressed(x);
        }
        return failure;
    }

    @Override
    public String toString() {
        return "IoUring[fd " + ringFd + ", sq " + sqEntries + ", cq " + cqEntries + ", features 0x"
                + Integer.toHexString(features) + (singleMmap() ? ", single mmap" : "") + "]";
    }
}
