package org.pageio.bufmgr.stream;

/**
 * A pageio look-ahead policy: <b>grouped refills</b>. PostgreSQL looks ahead after every consumed
 * buffer, so a stream at full depth starts one read per consumed read, each in a submission of its
 * own. A stream under this policy skips a look-ahead while it is still deep ({@link #deep}): reads
 * are in flight and fewer than a group of reads ({@link #readGroup()}) is free, so that when it does
 * look ahead it sends several reads to the method in one submission.
 *
 * <ul>
 *   <li>A {@link ReadStream#SEQUENTIAL} {@link ReadStream#USE_BATCHING} stream with {@code max_ios}
 *       of 8 or more always groups once deep (it also waits for an eighth of its distance in free
 *       pins): the block layer merges adjacent reads only when several arrive in one submission.</li>
 *   <li>A random {@link ReadStream#USE_BATCHING} stream with {@code max_ios} of 12 or more whose
 *       reads start at once (not {@code io_method=sync}) groups only while it <em>runs ahead</em>:
 *       it spent less than {@code 1 / GROUP_WAIT_SHARE_DIVISOR} of its time waiting for its reads
 *       ({@link #waitShare()}, a decaying average over about its last {@code max_ios} consumed
 *       reads, starting at "always waits"). Waiting more, it refills at every buffer, as
 *       PostgreSQL does.</li>
 * </ul>
 *
 * <p>why: docs/performance.md, "Grouped refills". Created once per stream; owned by the stream's
 * thread; allocates nothing.
 */
final class GroupedRefills {

    /** The fewest reads in a group once {@code max_ios} is 12 or more: io_uring plugs (merges) only above two SQEs. */
    static final int GROUP_MIN_READS = 3; // why: docs/performance.md, "Grouped refills"

    /** {@link #waitShare()}'s unit: 1 = {@code 1 / WAIT_SHARE_ONE} of the consumer's time. */
    static final long WAIT_SHARE_ONE = 1L << 20;

    /** A random stream runs ahead while it waits less than {@code 1 / GROUP_WAIT_SHARE_DIVISOR} of its time. */
    static final int GROUP_WAIT_SHARE_DIVISOR = 8; // why: docs/performance.md, "Grouped refills"

    /** Whether the stream is sequential (always groups when deep) or random (only while it runs ahead). */
    private final boolean sequential;
    private final int maxIos;
    private final int readGroup;

    /**
     * The share of the consumer's time spent waiting for its reads, decaying over the last
     * {@code max_ios} reads consumed, in units of {@code 1 / WAIT_SHARE_ONE}: a read consumed
     * without waiting counts 0, one that waited counts its wait divided by the time since the
     * previous read was consumed. Starts at "always waits". Random streams only.
     */
    private long waitShare = WAIT_SHARE_ONE;
    /** When the previous read was consumed ({@link System#nanoTime()}). */
    private long lastReadConsumed;
    /** Whether a read was consumed yet ({@code nanoTime} has no value that could mean "never"). */
    private boolean anyReadConsumed;

    /**
     * The policy for a stream with these properties, or {@code null} when it does not apply (the
     * stream then looks ahead at every buffer, as PostgreSQL's).
     *
     * @param defersReads the session's reads start only in the wait ({@code io_method=sync})
     */
    static GroupedRefills forStream(boolean batching, boolean sequential, int maxIos, boolean defersReads) {
        if (!batching) {
            return null;
        }
        if (sequential) {
            return maxIos >= 8 ? new GroupedRefills(true, maxIos) : null;
        }
        return maxIos >= 4 * GROUP_MIN_READS && !defersReads ? new GroupedRefills(false, maxIos) : null;
    }

    GroupedRefills(boolean sequential, int maxIos) {
        this.sequential = sequential;
        this.maxIos = maxIos;
        this.readGroup = readGroup(maxIos);
    }

    /**
     * Free reads a refill waits for: an eighth of {@code max_ios}, at least {@value #GROUP_MIN_READS}
     * once {@code max_ios} is 12 or more (a smaller budget would lose too much of its depth waiting
     * for three reads), at least 1.
     */
    static int readGroup(int maxIos) {
        return maxIos >= 4 * GROUP_MIN_READS ? Math.max(GROUP_MIN_READS, maxIos / 8) : Math.max(1, maxIos / 8);
    }

    int readGroup() {
        return readGroup;
    }

    boolean sequential() {
        return sequential;
    }

    long waitShare() {
        return waitShare;
    }

    /** Whether a random stream currently runs ahead of its reads (waits less than an eighth of its time). */
    boolean runningAhead() {
        return waitShare < WAIT_SHARE_ONE / GROUP_WAIT_SHARE_DIVISOR;
    }

    /**
     * Whether the stream is still deep enough to skip this look-ahead: reads are in flight
     * ({@code ios}) and fewer than {@link #readGroup()} of {@code max_ios} are free, or (sequential)
     * fewer than an eighth of the look-ahead {@code distance} in pins. A stream whose pins run out
     * before its reads (127 pins at eic 16) still refills one read at a time: waiting for three
     * reads' pins would cost it depth it cannot spare. A random stream skips only while it
     * {@link #runningAhead() runs ahead}, and pins are not its limit (one block per read). Progress:
     * with reads in flight the consumer waits for one or releases pins.
     */
    boolean deep(int ios, int distance, int pinned, int forwarded, int pendingLen) {
        if (ios == 0 || !(sequential || runningAhead())) {
            return false;
        }
        boolean fewReadsFree = maxIos - ios < readGroup;
        if (!sequential) {
            return fewReadsFree;
        }
        int freePins = distance - pinned - forwarded - pendingLen;
        return fewReadsFree || freePins < Math.max(1, distance / 8);
    }

    /**
     * The consumer got the buffer of its oldest read: folds it into {@link #waitShare()} with
     * weight {@code 1 / max_ios} (integer arithmetic). {@code consumedAt} is when the read was
     * consumed if it did not wait; after a wait the time is taken now. Random streams only.
     */
    void readConsumed(boolean waited, long waitNanos, long consumedAt) {
        if (sequential) {
            return;
        }
        long now = waited ? System.nanoTime() : consumedAt;
        long since = now - lastReadConsumed;
        if (anyReadConsumed && since > 0) {
            long share = waited ? Math.min(WAIT_SHARE_ONE, waitNanos * WAIT_SHARE_ONE / since) : 0;
            waitShare += (share - waitShare) / maxIos;
        }
        lastReadConsumed = now;
        anyReadConsumed = true;
    }
}
