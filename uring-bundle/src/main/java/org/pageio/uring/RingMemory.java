package org.pageio.uring;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.pageio.uring.Abi.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;
import org.pageio.posix.Mman;
import org.pageio.posix.Posix;
import org.pageio.posix.PosixException;

/**
 * A ring's descriptor and its memory as {@code io_uring_setup} describes them: the geometry the
 * kernel chose, the offsets of every index in the mapped rings (from {@code struct io_uring_params}),
 * and the mappings of the SQ ring, the CQ ring (the same segment with IORING_FEAT_SINGLE_MMAP) and
 * the SQE array. Immutable once created; the indexes inside the mappings are read and written by
 * {@link SubmissionQueue} and {@link CompletionQueue}, each with the ordering written next to the
 * access. {@link #release()} is the ring's close, after both are done with it.
 */
final class RingMemory {

    final int fd;
    /** The {@code IORING_SETUP_*} flags the ring was created with. */
    final int setupFlags;
    /** The {@code IORING_FEAT_*} bits the kernel reported. */
    final int features;
    final int sqEntries;
    final int sqMask;
    final int cqEntries;
    final int cqMask;
    /** SQ ring; the same segment as {@link #cqRing} when the kernel offers IORING_FEAT_SINGLE_MMAP. */
    final MemorySegment sqRing;
    final MemorySegment cqRing;
    final MemorySegment sqes;
    final long sqHeadOff;
    final long sqTailOff;
    final long sqFlagsOff;
    final long cqHeadOff;
    final long cqTailOff;
    final long cqOverflowOff;
    final long cqesOff;

    /**
     * Creates a ring of {@code entries} SQEs and maps it: {@code IORING_SETUP_SUBMIT_ALL} (5.18+;
     * without it on EINVAL), one mapping for both rings when the kernel offers it, the SQ index
     * array set to the identity. On failure nothing stays mapped or open.
     *
     * @throws IoUringException naming the failed call, the errno and the fix
     */
    RingMemory(int entries) {
        int ringFd;
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
            ringFd = (int) r;
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
        this.fd = ringFd;
        RingFds.mark(ringFd, true);
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
            RingFds.mark(ringFd, false);
            closeFd(ringFd, ex);
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
                    fd, offset, null);
            mapped.add(seg);
            return seg;
        } catch (PosixException e) {
            String op = "mmap(io_uring " + what + ", " + bytes + " bytes)";
            throw new IoUringException(op, e.errno(), Diagnosis.failure(op, e.errno(), Diagnosis.mmapHint(e.errno())), e);
        }
    }

    /** Whether both rings share one mapping ({@code IORING_FEAT_SINGLE_MMAP}). */
    boolean singleMmap() {
        return sqRing == cqRing;
    }

    /**
     * Unmaps the rings and closes the descriptor (forgotten as a ring's first: the number may be
     * reused at once). Once, after nobody reads the mappings any more.
     *
     * @throws IoUringException if munmap or close fails (everything is released all the same)
     */
    void release() {
        List<MemorySegment> maps = new ArrayList<>(3);
        maps.add(sqes);
        maps.add(sqRing);
        if (cqRing != sqRing) {
            maps.add(cqRing);
        }
        IoUringException failure = unmapAll(maps, null);
        RingFds.mark(fd, false);
        failure = closeFd(fd, failure);
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
}
