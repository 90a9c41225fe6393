package org.pageio.bufmgr.stream;

/**
 * A pageio look-ahead policy: <b>pairs of reads that complete as they are submitted</b>. io_uring
 * reading pages the kernel has cached completes each read inside the {@code io_uring_enter} that
 * submits it. Such a read never makes the consumer wait, so under {@code pg19} the look-ahead stays
 * one read deep and every read costs a system call of its own. A stream under this policy counts
 * look-aheads whose staged reads were all over once submitted; from the
 * {@value #COMPLETE_AT_SUBMISSION_STREAK}th in a row on it is {@link #pairing()}: it looks ahead
 * {@value #READS_PER_SUBMISSION_WHEN_COMPLETE} full-size reads and refills only when the consumer
 * has drained its pins ({@link #drainFirst}), so the pair goes to the method in one submission.
 * A read that is not over once submitted before pairs started starts the count again (the first
 * reads of a cached file may still be probed in the background); once pairs have started, it rules
 * them out for the rest of the stream, so a cold or partly cached relation keeps PostgreSQL's
 * look-ahead.
 *
 * <p>Applies to {@code pg19}, {@link ReadStream#SEQUENTIAL} {@link ReadStream#USE_BATCHING}
 * streams whose reads start at once (not {@code io_method=sync}; reads executed as they are staged
 * never count). why: docs/performance.md, "io_uring on a warm scan: reads that complete as
 * submitted, in pairs". Created once per stream; owned by the stream's thread; allocates nothing.
 */
final class PairedReads {

    /** Full-size reads a pairing stream sends to the method together. */
    static final int READS_PER_SUBMISSION_WHEN_COMPLETE = 2;

    /** Look-aheads in a row whose reads all completed within their submission before pairs start. */
    static final int COMPLETE_AT_SUBMISSION_STREAK = 4;

    private final int maxPinned;
    private final int ioCombineLimit;
    /** Whether the current look-ahead staged a read that was not over when staged. */
    private boolean stagedNotOver;
    /**
     * Look-aheads in a row whose reads were all over once the look-ahead had submitted them
     * (counted up to {@value #COMPLETE_AT_SUBMISSION_STREAK}: pairs); -1 once one was not after
     * pairs had started: no pairs for this stream.
     */
    private int completeStreak;

    /** The policy for a stream with these properties, or {@code null} when it does not apply. */
    static PairedReads forStream(boolean pg19, boolean batching, boolean sequential, boolean defersReads,
            int maxPinned, int ioCombineLimit) {
        return pg19 && batching && sequential && !defersReads ? new PairedReads(maxPinned, ioCombineLimit) : null;
    }

    PairedReads(int maxPinned, int ioCombineLimit) {
        this.maxPinned = maxPinned;
        this.ioCombineLimit = ioCombineLimit;
    }

    /** Whether reads complete as they are submitted, often enough that they go in pairs. */
    boolean pairing() {
        return completeStreak >= COMPLETE_AT_SUBMISSION_STREAK;
    }

    /** Whether the stream skips this look-ahead: it pairs reads and the consumer still holds pinned buffers. */
    boolean drainFirst(int pinned) {
        return pairing() && pinned > 0;
    }

    /** A look-ahead begins. */
    void lookAheadStarts() {
        stagedNotOver = false;
    }

    /** A read that needs I/O was staged; {@code over}: it was already complete then (executed at staging). */
    void readStaged(boolean over) {
        if (!over) {
            stagedNotOver = true;
        }
    }

    /** Whether this look-ahead staged a read that was not over when staged: its reads are to be checked. */
    boolean readsToCheck() {
        return stagedNotOver;
    }

    /**
     * The look-ahead has submitted its reads; {@code allOver}: every read it started was over once
     * submitted. Returns the look-ahead distance to use from now on: {@code distance}, or, while
     * pairing, at least {@value #READS_PER_SUBMISSION_WHEN_COMPLETE} full-size reads (within
     * {@code max_pinned}).
     */
    int submitted(boolean allOver, int distance) {
        if (completeStreak < 0) {
            return distance;
        }
        if (!allOver) {
            completeStreak = pairing() ? -1 : 0;
            return distance;
        }
        if (completeStreak < COMPLETE_AT_SUBMISSION_STREAK) {
            completeStreak++;
        }
        if (pairing()) {
            return Math.max(distance, Math.min(maxPinned, READS_PER_SUBMISSION_WHEN_COMPLETE * ioCombineLimit));
        }
        return distance;
    }

    /** {@link ReadStream#reset()}: count again. */
    void reset() {
        completeStreak = 0;
    }
}
