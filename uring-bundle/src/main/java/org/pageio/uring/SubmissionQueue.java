package org.pageio.uring;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.pageio.uring.Abi.*;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;
import org.pageio.api.IoHandle;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;
import org.pageio.posix.Iovec;
import org.pageio.posix.Posix;

/**
 * A ring's submission side: fills SQEs for handles, publishes the SQ tail and enters the kernel
 * once per batch. Belongs to one thread, the ring's owner (the session's thread): only it touches
 * the SQE array and the SQ tail, without a lock; the counters are plain fields. It reaps only
 * through {@link CompletionQueue#reapIfFree()}, never blocking on the completion lock.
 */
final class SubmissionQueue {

    /** Retries of io_uring_enter answering EAGAIN/EBUSY on submission, before the I/Os fail. */
    static final int SUBMIT_RETRIES = 2000;

    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private final RingMemory mem;
    private final CompletionQueue completion;
    private final RegisteredBuffers fixed;

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

    SubmissionQueue(RingMemory mem, CompletionQueue completion, RegisteredBuffers fixed) {
        this.mem = mem;
        this.completion = completion;
        this.fixed = fixed;
        // Plain load: nobody else knows this ring yet; the kernel starts its SQ tail at 0 too.
        this.localSqTail = (int) INT.get(mem.sqRing, mem.sqTailOff);
    }

    /** See {@link IoUring#prepare}. */
    void prepare(IoHandle h, int sqeFlags) {
        // Acquire: pairs with the kernel's release store of the SQ head once it consumed SQEs, so
        // the slot we are about to overwrite is really free.
        if (localSqTail - (int) INT.getAcquire(mem.sqRing, mem.sqHeadOff) >= mem.sqEntries) {
            // Cannot happen when entries >= io_max_concurrency; stay correct if it does.
            submit(h.session().callState());
        }
        if (RingFds.contains(h.fd())) {
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
                    bufIndex = fixed.indexFor(addr, len, h.session().callState());
                    if (bufIndex >= 0) {
                        opcode = read ? IORING_OP_READ_FIXED : IORING_OP_WRITE_FIXED;
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
        long sqe = (long) (localSqTail & mem.sqMask) * SQE_BYTES;
        MemorySegment s = mem.sqes;
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

    /** See {@link IoUring#submit}. */
    int submit(CallState cs) {
        MemorySegment sq = mem.sqRing;
        int tail = localSqTail;
        // Release: every plain SQE store above happens-before the kernel's acquire load of the tail.
        INT.setRelease(sq, mem.sqTailOff, tail);
        // Acquire: pairs with the kernel's release store of the head (what it consumed so far).
        int pending = tail - (int) INT.getAcquire(sq, mem.sqHeadOff);
        if (pending <= 0) {
            return 0;
        }
        relieveCqPressure();
        // Acquire (CQ tail, as the reaper reads it): completions the kernel posted so far. Both
        // counters wrap at 2^32 together, so their int difference is the kernel's in-flight count.
        inFlightAtSubmitSum += (int) submitted - (int) INT.getAcquire(mem.cqRing, mem.cqTailOff);
        submitSamples++;
        int consumed = 0;
        int retries = 0;
        while (pending > 0) {
            long r = Posix.syscall(cs, SYS_IO_URING_ENTER, mem.fd, pending, 0, 0, 0, 0);
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
        int sqFlags = (int) INT.getOpaque(mem.sqRing, mem.sqFlagsOff);
        // Acquire (tail) / opaque (head, written under the completion lock we do not hold): an
        // estimate of the CQEs waiting, to decide whether to reap now.
        int ready = (int) INT.getAcquire(mem.cqRing, mem.cqTailOff) - (int) INT.getOpaque(mem.cqRing, mem.cqHeadOff);
        if ((sqFlags & IORING_SQ_CQ_OVERFLOW) != 0 || ready > mem.cqEntries - mem.sqEntries) {
            completion.reapIfFree();
        }
    }

    private void backOff(int retries) {
        if (completion.reapIfFree() > 0) {
            return;
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
        int head = (int) INT.getAcquire(mem.sqRing, mem.sqHeadOff);
        int tail = localSqTail;
        localSqTail = head;
        // Release: retract the published tail before completing (nobody else submits).
        INT.setRelease(mem.sqRing, mem.sqTailOff, head);
        for (int i = head; i != tail; i++) {
            long userData = mem.sqes.get(JAVA_LONG, (long) (i & mem.sqMask) * SQE_BYTES + SQE_USER_DATA);
            submitFailures++;
            completion.dispatch(userData, -err);
        }
    }

    // ---- counters, owner only ----

    long submitted() {
        return submitted;
    }

    long submitCalls() {
        return submitCalls;
    }

    long submitFailures() {
        return submitFailures;
    }

    long inFlightAtSubmitSum() {
        return inFlightAtSubmitSum;
    }

    long submitSamples() {
        return submitSamples;
    }
}
