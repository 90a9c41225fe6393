package org.pageio.bufmgr.stream;

/**
 * A pageio look-ahead policy: <b>the ramp-up under direct I/O</b>. With O_DIRECT (the pool's
 * {@code directIo}, or a method that bypasses the page cache) no kernel read-ahead stands behind the
 * stream, and every read that needs I/O is a device read. So a {@link ReadStream#SEQUENTIAL} stream
 * starts at full combine size ({@link #startsFull()}) instead of one block, and under {@code pg19}
 * the read-ahead distance doubles after every read that needed I/O (PostgreSQL 18's rule,
 * {@link #growsOnEveryRead()}), not only after a wait: a device that keeps up with the consumer for
 * the first reads would otherwise leave the distance at one or two reads, and the ramp-up would
 * depend on timing. With the policy, a cold scan has {@code max_ios} reads in flight after
 * {@code log2(max_pinned / io_combine_limit)} consumed reads, whatever the device's speed. Hits
 * decay the distance as in PostgreSQL.
 *
 * <p>why: docs/performance.md, "Direct I/O through the buffer manager against fio". Created once per
 * stream; immutable.
 */
final class DirectIoRamp {

    private final boolean sequential;

    /** The policy for a stream whose reads bypass the page cache ({@code direct}), or {@code null}. */
    static DirectIoRamp forStream(boolean direct, boolean sequential) {
        return direct ? new DirectIoRamp(sequential) : null;
    }

    DirectIoRamp(boolean sequential) {
        this.sequential = sequential;
    }

    /** Whether the stream starts at full combine size (as with {@link ReadStream#FULL}). */
    boolean startsFull() {
        return sequential;
    }

    /** Whether {@code pg19}'s read-ahead distance doubles after every read that needed I/O, waited for or not. */
    boolean growsOnEveryRead() {
        return true;
    }
}
