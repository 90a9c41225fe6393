package org.pageio.uring;

import java.lang.foreign.Arena;
import org.pageio.api.AioContext;
import org.pageio.api.IoHandle;
import org.pageio.posix.CallState;

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
 * each access ({@code SubmissionQueue} for the SQ, {@code CompletionQueue} for the CQ). In short: SQEs are written plainly, then the SQ tail is stored with release
 * (the kernel loads it with acquire); the SQ head, written by the kernel, is loaded with acquire;
 * the CQ tail is loaded with acquire (the kernel stores it with release after writing the CQEs);
 * a CQE is read completely before the CQ head moves past it, with a release store (the kernel
 * may reuse the slot as soon as it sees the new head); the SQ flags word is read opaque (a hint
 * that only decides whether to enter the kernel).
 *
 * <h2>Parts</h2>
 * This class is the ring's public face; the work is done by package-private parts, each with one
 * job: {@code RingMemory} (setup, mappings, release), {@code SubmissionQueue} (owner),
 * {@code CompletionQueue} (any thread, the completion lock), {@code RegisteredBuffers} (owner),
 * {@code SupportedOperations} (the probe's opcode check), {@code RingFds} (which descriptors are
 * rings), {@code Abi} (the kernel's structs) and {@code Diagnosis} (messages with the fix).
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

    /** Descriptor, geometry and mappings ({@code io_uring_setup}, mmap). */
    private final RingMemory mem;
    /** The completion-lock holder's scratch memory, closed after the mappings. */
    private final Arena scratch;
    /** Reaping and waiting, any thread, under the completion lock. */
    private final CompletionQueue completion;
    /** Registered buffers, owner only. */
    private final RegisteredBuffers fixed;
    /** SQEs and io_uring_enter to submit, owner only. */
    private final SubmissionQueue submission;

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
            String missing = SupportedOperations.missing(ring.fd());
            return missing == null ? new IoUringProbe(true, 0, null, ring.features())
                    : new IoUringProbe(false, 0, missing, ring.features());
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
        this.mem = new RingMemory(entries);
        this.scratch = Arena.ofShared();
        this.completion = new CompletionQueue(mem, context, scratch);
        this.fixed = new RegisteredBuffers(mem.fd, context);
        this.submission = new SubmissionQueue(mem, completion, fixed);
        if (context != null && context.registeredBuffers() != null) {
            fixed.refresh(context.registeredBuffers(), completion.lockedCallState()); // nobody else knows the ring yet
        }
    }

    /** Whether {@code fd} is the descriptor of an open ring of this class (any context). Any thread. */
    public static boolean isRingFd(int fd) {
        return RingFds.contains(fd);
    }

    // ------------------------------------------------------------------ what the ring is

    /** The ring's file descriptor. */
    public int fd() {
        return mem.fd;
    }

    /** SQ entries, as the kernel rounded them (a power of two, at least the entries asked for). */
    public int sqEntries() {
        return mem.sqEntries;
    }

    /** CQ entries: twice {@link #sqEntries()}. */
    public int cqEntries() {
        return mem.cqEntries;
    }

    /** The {@code IORING_FEAT_*} bits the kernel reported. */
    public int features() {
        return mem.features;
    }

    /** The {@code IORING_SETUP_*} flags the ring was created with. */
    public int setupFlags() {
        return mem.setupFlags;
    }

    /** Whether both rings share one mapping ({@code IORING_FEAT_SINGLE_MMAP}). */
    public boolean singleMmap() {
        return mem.singleMmap();
    }

    /** io_uring_enter calls made to submit (one per batch unless the kernel pushed back). Owner only. */
    public long submitCalls() {
        return submission.submitCalls();
    }

    /** SQEs the kernel consumed. Owner only. */
    public long submitted() {
        return submission.submitted();
    }

    /** Completions reaped, by every thread together. Any thread (takes the completion lock). */
    public long reaped() {
        return completion.reaped();
    }

    /**
     * The kernel's count of completions that did not fit the CQ (with IORING_FEAT_NODROP they
     * wait in the kernel and are flushed later, so none is lost); 0 when the sizing is right, -1
     * after close. Any thread.
     */
    public int cqOverflow() {
        return completion.cqOverflow();
    }

    // ------------------------------------------------------------------ registered buffers

    /**
     * Whether this ring uses registered buffers ("on: 512 MiB in 1 buffer"), or why not ("off:
     * …", e.g. the kernel's answer to the registration). Any thread.
     */
    public String registeredBuffers() {
        return fixed.note();
    }

    /** I/Os prepared as {@code READ_FIXED}/{@code WRITE_FIXED} (into registered buffers). Owner only, or after close. */
    public long fixedIos() {
        return fixed.fixedIos();
    }

    // ------------------------------------------------------------------ submission (owner)

    /**
     * Fills the next SQE for {@code h}, which is in state SUBMITTED: {@code READ} for one iovec,
     * {@code READV} for several, {@code WRITE}/{@code WRITEV} likewise, {@code FSYNC} (with
     * {@code IORING_FSYNC_DATASYNC} for fdatasync); a single buffer inside the registered region
     * goes in as {@code READ_FIXED}/{@code WRITE_FIXED}. Nothing reaches the kernel until
     * {@link #submit}. {@code sqeFlags} are {@code IOSQE_*} bits such as {@link #IOSQE_ASYNC}.
     * Owner only; allocates nothing.
     */
    public void prepare(IoHandle h, int sqeFlags) {
        submission.prepare(h, sqeFlags);
    }

    /**
     * Publishes the prepared SQEs and hands them to the kernel with one {@code io_uring_enter}
     * (more only if the kernel pushes back). {@code -EINTR} is retried; {@code -EAGAIN} and
     * {@code -EBUSY} (kernel short of resources, completions to flush) are retried after reaping,
     * 2000 times at most; any other error fails the I/Os the
     * kernel did not take with that errno (their handles complete with {@code -errno}). Never
     * throws for an I/O error. Owner only; {@code cs} is the owner's errno capture.
     *
     * @return the number of SQEs the kernel consumed
     */
    public int submit(CallState cs) {
        return submission.submit(cs);
    }

    /** I/Os the owner failed because the kernel refused them. Owner only. */
    public long submitFailures() {
        return submission.submitFailures();
    }

    /**
     * The average number of I/Os the kernel had in flight (consumed SQEs without a posted CQE)
     * just before a submission: how deep a submitter keeps the device between its refills. NaN
     * before the first submission. Owner only.
     */
    public double averageInFlightAtSubmit() {
        long samples = submission.submitSamples();
        return samples == 0 ? Double.NaN : (double) submission.inFlightAtSubmitSum() / samples;
    }

    /** Submissions {@link #averageInFlightAtSubmit()} averages over. Owner only. */
    public long submitSamples() {
        return submission.submitSamples();
    }

    /** The sum {@link #averageInFlightAtSubmit()} divides (to add up several rings). Owner only. */
    public long inFlightAtSubmitSum() {
        return submission.inFlightAtSubmitSum();
    }

    /**
     * {waitCalls, polls, fruitfulPolls}: io_uring_enter calls that blocked for a completion,
     * {@link #poll()} calls that took the lock, and those that found something. Any thread
     * (takes the completion lock).
     */
    public long[] reapStats() {
        return completion.reapStats();
    }

    /**
     * This ring's counters as one snapshot (to add up several rings with
     * {@link IoUringCounters#plus}). Owner only, or after close (the submit counters are the
     * owner's plain fields); takes the completion lock for the reap counters.
     *
     * @since 1.4.0
     */
    public IoUringCounters counters() {
        long[] reap = completion.reapStats();
        return new IoUringCounters(1, submission.submitCalls(), submission.submitted(), reap[0], reap[1], reap[2],
                submission.inFlightAtSubmitSum(), submission.submitSamples(), fixed.fixedIos());
    }

    // ------------------------------------------------------------------ completion (any thread)

    /**
     * Waits until {@code h}'s state is at least {@link IoHandle#COMPLETED_IO} or its generation
     * moved past {@code generation}: takes the completion lock, reaps, and when nothing is ready
     * blocks in the kernel for at least one completion ({@code IORING_ENTER_GETEVENTS}; a thread
     * other than the owner in slices of 1 s when the
     * kernel has EXT_ARG, re-checking in between).
     * {@code -EINTR}, {@code -ETIME}, {@code -EAGAIN}, {@code -EBUSY} just loop. Returns at once if
     * the ring was closed. Any thread; never throws.
     */
    public void waitFor(IoHandle h, long generation) {
        completion.waitFor(h, generation);
    }

    /**
     * Waits until {@code h} is finished or a completion is ready in the CQ (or another thread
     * processed one while this one waited for the lock), then processes at most {@code max} ready
     * completions, leaving the rest in the CQ. Any thread; never throws.
     */
    public void waitForProgress(IoHandle h, long generation, int max) {
        completion.waitForProgress(h, generation, max);
    }

    /**
     * CQEs in the completion queue, not reaped yet (a snapshot). The owner (only its session's
     * close unmaps the ring) or a holder of the completion lock with the ring not {@code closed};
     * no lock taken: the head is read opaque (the lock holder advances it), the tail with acquire
     * (the kernel's release).
     */
    public int readyCompletions() {
        return completion.readyCompletions();
    }

    /**
     * Reaps what is ready without blocking: nothing if another thread holds the completion lock
     * (it is reaping). Any thread.
     *
     * @return completions processed
     */
    public int poll() {
        return completion.poll();
    }

    /**
     * Errors io_uring_enter returned to waiters other than EINTR/ETIME/EAGAIN/EBUSY, with the
     * last errno by name; "none" when there were none. Any thread.
     */
    public String waitErrors() {
        return completion.waitErrors();
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
        if (!completion.drainAndClose(submission.submitted())) {
            return;
        }
        try {
            mem.release();
        } finally {
            scratch.close();
        }
    }

    @Override
    public String toString() {
        return "IoUring[fd " + mem.fd + ", sq " + mem.sqEntries + ", cq " + mem.cqEntries + ", features 0x"
                + Integer.toHexString(mem.features) + (singleMmap() ? ", single mmap" : "") + "]";
    }
}
