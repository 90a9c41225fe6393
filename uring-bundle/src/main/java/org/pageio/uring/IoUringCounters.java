package org.pageio.uring;

/**
 * What one ring counted, or several added up ({@link #plus}): the figures a benchmark prints as
 * {@code io_uring_enter} calls per I/O and the device depth a submitter keeps. A snapshot taken
 * by {@link IoUring#counters()}; immutable, any thread.
 *
 * @param rings               rings added up (1 for one ring's snapshot)
 * @param submitCalls         {@code io_uring_enter} calls made to submit
 * @param submitted           SQEs the kernel consumed
 * @param waitCalls           {@code io_uring_enter} calls that blocked for a completion
 * @param polls               non-blocking reaps that took the completion lock
 * @param fruitfulPolls       those of them that found a completion
 * @param inFlightAtSubmitSum sum over submissions of the I/Os the kernel had in flight just before
 * @param submitSamples       submissions that sum is over
 * @param fixedIos            I/Os prepared into registered buffers ({@code READ_FIXED}/{@code WRITE_FIXED})
 */
public record IoUringCounters(long rings, long submitCalls, long submitted, long waitCalls, long polls,
        long fruitfulPolls, long inFlightAtSubmitSum, long submitSamples, long fixedIos) {

    /** Nothing counted, no ring. */
    public static final IoUringCounters NONE = new IoUringCounters(0, 0, 0, 0, 0, 0, 0, 0, 0);

    /** These counters and {@code o}'s, added up. */
    public IoUringCounters plus(IoUringCounters o) {
        return new IoUringCounters(rings + o.rings, submitCalls + o.submitCalls, submitted + o.submitted,
                waitCalls + o.waitCalls, polls + o.polls, fruitfulPolls + o.fruitfulPolls,
                inFlightAtSubmitSum + o.inFlightAtSubmitSum, submitSamples + o.submitSamples, fixedIos + o.fixedIos);
    }

    /**
     * The average number of I/Os the kernel had in flight just before a submission; NaN before
     * the first submission.
     */
    public double averageInFlightAtSubmit() {
        return submitSamples == 0 ? Double.NaN : (double) inFlightAtSubmitSum / submitSamples;
    }
}
