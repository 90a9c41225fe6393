package org.pageio.bufmgr.stream;

import java.io.IOException;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.StreamingReads;
import org.pageio.bufmgr.ReadBuffersOperation;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.Tablespace;
import org.pageio.posix.Fadvise;
import org.pageio.posix.Posix;
import org.pageio.posix.PosixException;

/**
 * A read stream (PostgreSQL's read_stream.c): block numbers in, from a callback; pinned buffers
 * out, in the same order. It looks ahead, starting reads before the consumer needs them, and
 * combines adjacent blocks into one read of up to {@code io_combine_limit} blocks.
 *
 * <h2>Look-ahead</h2>
 * {@code read_stream_lookahead = pg18}: one distance, starting at 1, doubled after consuming a
 * buffer whose read needed I/O, decremented on a hit. {@code pg19}: a read-ahead distance that
 * doubles only when a read had to wait (synchronous execution counts), a combine distance that
 * doubles after any I/O, and a decay hold-off of {@code max_pinned_buffers} hits after any I/O
 * before either shrinks. At most {@code max_ios} reads are in flight
 * ({@code effective_io_concurrency}, or {@code maintenance_io_concurrency} with
 * {@link #MAINTENANCE}, with the tablespace's override) and at most
 * {@code (max_ios + 1) × io_combine_limit} buffers are pinned, capped by the strategy ring and the
 * session's share of {@code shared_buffers}.
 *
 * <p>Direct I/O (the pool's {@code directIo}, or a method that bypasses the page cache): no
 * kernel read-ahead stands behind the stream, so a {@link #SEQUENTIAL} stream starts at full
 * combine size, and under {@code pg19} the read-ahead distance doubles after every read that
 * needed I/O (PostgreSQL 18's rule), not only after a wait. Every such read is a device read; a
 * device that keeps up with the consumer for the first few reads would otherwise leave the
 * distance at one or two reads until a wait came, and the ramp-up would depend on timing. With the
 * rule, a cold scan has {@code max_ios} reads in flight after {@code log2(max_pinned /
 * io_combine_limit)} reads have been consumed, whatever the device's speed. Hits decay the
 * distance as before.
 *
 * <h2>Grouped refills of a random stream that runs ahead (a pageio addition)</h2>
 * PostgreSQL looks ahead after every consumed buffer, so a deep random stream starts one read per
 * buffer, each in a submission of its own: on a fast device the issuer, not the device, is then
 * the limit, and most of its time per block is the kernel's submission path (for O_DIRECT, the
 * block layer and the device's doorbell, paid once per submission). A {@link #USE_BATCHING} stream
 * that is not {@link #SEQUENTIAL}, with {@code max_ios} of 12 or more and reads that start at once
 * (not {@code io_method=sync}), therefore refills in groups ({@link #readGroup} reads, one
 * submission) while it <em>runs ahead</em>: over its last {@code max_ios} or so consumed reads it
 * waited for them less than an eighth of its time ({@link #GROUP_WAIT_SHARE_DIVISOR}, a decaying
 * average of each read's wait over the time since the read before). Waiting more ends that: it
 * refills at every buffer again, as PostgreSQL does, until the waits fade. So a device that keeps
 * up gets fewer, larger submissions (its queue is not what limits the scan; a stream that does
 * real work per block and meets an occasional slow read stays grouped), and a device that does
 * not keeps its full depth. A stream starts as one that waits (about 32 reads before it groups).
 *
 * <h2>Reads that complete as they are submitted (a pageio addition, sequential streams)</h2>
 * io_uring reading pages the kernel has cached completes each read inside the
 * {@code io_uring_enter} that submits it. Such a read never makes the consumer wait, so under
 * {@code pg19} the look-ahead stays one read deep and every read costs a system call of its own,
 * as {@code preadv} does. A {@link #SEQUENTIAL} {@link #USE_BATCHING} stream whose look-aheads'
 * reads were over once submitted, {@value #COMPLETE_AT_SUBMISSION_STREAK} look-aheads in a row,
 * looks ahead {@value #READS_PER_SUBMISSION_WHEN_COMPLETE} full-size reads and refills only when the
 * consumer has drained them: the pair goes to the method in one submission, half the system calls,
 * while the pages it fills are still in the core's cache when consumed. Once pairs have started, the
 * first read that is not over once submitted (the data was not cached, a worker holds it) rules
 * them out for the rest of the stream, so a cold or partly cached relation goes back to the usual
 * look-ahead for good (pairs there leave fewer reads in flight ahead of the consumer). Reads
 * executed as they are staged ({@code io_method=sync}, methods that need synchronous execution)
 * never count.
 *
 * <h2>Retiring reads (a pageio addition, random streams, opt-in)</h2>
 * PostgreSQL counts a read against {@code max_ios} until the consumer has waited for it, so a
 * random stream whose reads complete out of order, or in bursts, keeps fewer than {@code max_ios}
 * at the device: completed reads wait for the consumer in order while their slots stay taken. A
 * stream created with {@link #RETIRE_COMPLETED} that is not {@link #SEQUENTIAL} (and whose reads
 * are not deferred to the wait, as {@code io_method=sync}'s are) holds up to {@value #RETIRE_FACTOR} × {@code max_ios} reads
 * unconsumed, capped by the session's I/O handles, and counts against {@code max_ios} only those
 * still in flight: a read whose handle says it is over, or whose completion the method has but has
 * not processed ({@link org.pageio.api.IoSession#readyCompletions()}), is not. While the consumer
 * waits for the oldest read, it waits for any completion instead
 * ({@link StreamingReads#awaitReadProgress}), starts replacements for what completed first, then
 * processes {@value #PROGRESS_CHUNK} completions, and again, until the oldest is over: the device
 * gets its next reads before the page checks of the last ones. Buffers still come out in order and
 * the pins stay within the look-ahead distance; the device has at most {@code max_ios} of the
 * stream's reads (the ready count is the session's: another stream's completions ready at the same
 * moment can let this one exceed it briefly, by at most the other stream's own reads).
 *
 * <h2>Queue</h2>
 * A circular array of pinned buffer ids of {@code max_pinned + 1} slots plus an overflow zone of
 * {@code io_combine_limit - 1}, so a combined read always fills a contiguous slice; what lands in
 * the overflow zone is copied to the front. Per-buffer data (one {@code long} per slot) travels
 * with its block.
 *
 * <h2>Early end</h2>
 * {@link #close()} and {@link #reset()} return at once: pins are dropped, reads in flight finish
 * in the background (their buffers hold the I/O's own pin and become valid for later readers),
 * and their handles are reclaimed by the session later. Nothing leaks.
 *
 * <p>Owned by the session's thread. No allocation per block.
 */
public final class ReadStream implements AutoCloseable {

    /** Use {@code maintenance_io_concurrency}. */
    public static final int MAINTENANCE = 1;
    /** The access pattern is sequential: no fadvise advice (io_method=sync only). */
    public static final int SEQUENTIAL = 2;
    /** Skip ramp-up: start at full combine size. */
    public static final int FULL = 4;
    /** Run the look-ahead in AIO batch mode (the callback promises not to block on others). */
    public static final int USE_BATCHING = 8;
    /**
     * Let reads whose I/O is over leave the read budget before the consumer reaches them (a pageio
     * addition, "Retiring reads" above): for deep random streams over a device that completes in
     * bursts. Ignored for {@link #SEQUENTIAL} streams, with {@code io_method=sync}, and when the
     * session has no I/O handle to spare ({@code io_max_concurrency} ≤ {@code max_ios}).
     */
    public static final int RETIRE_COMPLETED = 16;

    /**
     * The fewest reads a grouped stream ({@link #USE_BATCHING}) sends to the method in one refill
     * once it is deep. Linux's io_uring plugs the block layer only for a submission of more than
     * two SQEs ({@code io_submit_state_start}: {@code need_plug = max_ios > 2}); only under a plug
     * are adjacent reads merged into one device request before they reach the device. A
     * sequential scan over O_DIRECT that refills two 128 kB reads at a time (an eighth of
     * {@code effective_io_concurrency} 16) gave the device 130 kB requests, where fio's made 660
     * kB–1 MB ones (directio-bundle's README, "Device depth and request size").
     */
    static final int GROUP_MIN_READS = 3;

    /** {@link #waitShare}'s unit: 1 = {@code 1 / WAIT_SHARE_ONE} of the consumer's time. */
    static final long WAIT_SHARE_ONE = 1L << 20;

    /**
     * A random stream runs ahead while it waits less than {@code 1 / GROUP_WAIT_SHARE_DIVISOR} of
     * its time: then the device is not what limits it, and grouping's shallower queue (a group is
     * an eighth of {@code max_ios}) costs less than its submissions would.
     */
    static final int GROUP_WAIT_SHARE_DIVISOR = 8;

    /**
     * How many reads a random stream may hold unconsumed, as a multiple of {@code max_ios}, when
     * reads whose I/O is over leave the read budget ("Retiring reads" in the class comment); also
     * capped by the session's I/O handles ({@code io_max_concurrency}).
     */
    static final int RETIRE_FACTOR = 2;

    /**
     * While the consumer waits for the oldest read, how many ready completions it processes
     * (completion callbacks: page checks, checksums) before it looks ahead again.
     */
    static final int PROGRESS_CHUNK = 4;

    /**
     * A retiring stream submits its staged reads once this many are staged, instead of at the end
     * of the look-ahead: the device gets the first replacements while the rest are prepared.
     */
    static final int SUBMIT_EVERY = 8;

    /**
     * Full-size reads a sequential stream whose reads complete within their own submission sends to
     * the method together ("Reads that complete as they are submitted" in the class comment).
     */
    static final int READS_PER_SUBMISSION_WHEN_COMPLETE = 2;

    /**
     * Look-aheads in a row whose reads all completed within their submission before a stream takes
     * them in pairs; once it does, one read that did not rules pairs out for the rest of the stream.
     */
    static final int COMPLETE_AT_SUBMISSION_STREAK = 4;

    /** What the block callback returns at the end of the stream. */
    public static final long END = -1L;

    /** Where block numbers come from. Runs in the stream's thread. */
    @FunctionalInterface
    public interface BlockCallback {
        /**
         * The next block to read, or {@link #END}. May call {@link ReadStream#setPerBufferData} to
         * attach a value that the consumer sees with this block.
         */
        long nextBlock(ReadStream stream);
    }

    private final StreamingReads session;
    private final SmgrRelation rel;
    private final BlockCallback callback;
    private final int flags;
    private final BufferAccessStrategy strategy;
    private final boolean pg19;
    private final boolean advise;
    /**
     * The reads bypass the page cache (O_DIRECT): every read that needs I/O is a device read, and
     * there is no kernel read-ahead behind the stream.
     */
    private final boolean direct;
    private final int ioCombineLimit;
    private final int maxIos;
    private final int maxPinned;
    /**
     * Free reads a grouped refill waits for: an eighth of {@code max_ios}, at least
     * {@value #GROUP_MIN_READS} once {@code max_ios} is 12 or more (a smaller budget would lose
     * too much of its depth waiting for three reads), at least 1.
     */
    private final int readGroup;
    private final int readFlags;
    /**
     * Refill in groups ({@link #USE_BATCHING}, {@link #SEQUENTIAL} and at least 8 reads allowed
     * in flight): see {@link #deep()}. A pageio addition for sequential streams, whose adjacent
     * reads the block layer merges only when several arrive in one submission; random streams look
     * ahead at every buffer, as PostgreSQL's do, unless they run ahead ({@link #groupWhenAhead}).
     */
    private final boolean grouped;
    /**
     * A random batching stream that refills in groups while it runs ahead of its reads ("Grouped
     * refills of a random stream that runs ahead" in the class comment).
     */
    private final boolean groupWhenAhead;
    /**
     * The share of the consumer's time spent waiting for its reads, decaying over the last
     * {@code max_ios} reads consumed, in units of {@code 1 / WAIT_SHARE_ONE}: a read consumed
     * without waiting counts 0, one that waited counts its wait divided by the time since the
     * previous read was consumed. Starts at "always waits".
     */
    private long waitShare = WAIT_SHARE_ONE;
    /** When the previous read was consumed ({@link System#nanoTime()}); see {@link #readConsumed}. */
    private long lastReadConsumed;
    /** Whether a read was consumed yet ({@code nanoTime} has no value that could mean "never"). */
    private boolean readConsumed;

    private final int queueSize;
    private final int[] queue;
    private final long[] data;
    private ReadBuffersOperation[] ops;
    private final int[] opQueueIndex;
    /**
     * Read slots: {@code max_ios}, or {@value #RETIRE_FACTOR} × {@code max_ios} when reads whose
     * I/O is over leave the budget ({@link #retire}).
     */
    private final int ioSlots;
    /** Reads whose I/O ended before the consumer reached them leave the read budget. */
    private final boolean retire;
    private int oldestIo;
    /** Reads started and not yet consumed (waited for), oldest at {@link #oldestIo}. */
    private int ios;
    /** Per read slot: its read is known to be over (only with {@link #retire}). */
    private final boolean[] over;
    /** How many of the {@link #ios} are known to be over: not counted against {@code max_ios}. */
    private int retired;

    private int oldestBuffer;
    private int nextBuffer;
    private int pinned;
    private int forwarded;

    private long pendingBlock = END;
    private int pendingLen;
    private long ungetBlock = END;
    private long ungetData;
    private long callbackData;
    private boolean ended;
    /** {@link #close()} ran (the counts went to the pool's totals). */
    private boolean closed;
    private long adviceEnd = END;

    // PG 18: distance; PG 19: readahead distance, combine distance, decay hold-off
    private int distance;
    private int combineDistance;
    private int holdoff;

    /**
     * Whether this stream may pair reads that complete within their submission: {@code pg19},
     * {@link #SEQUENTIAL}, {@link #USE_BATCHING} (so a read is staged during the look-ahead and
     * submitted at its end) and reads that start at once (not {@code io_method=sync}).
     */
    private final boolean pairWhenComplete;
    /** Whether the current look-ahead staged a read that was not over when staged. */
    private boolean stagedNotOver;
    /**
     * Look-aheads in a row whose reads were all over once the look-ahead had submitted them
     * (counted up to {@value #COMPLETE_AT_SUBMISSION_STREAK}: pairs); -1 once one was not after
     * pairs had started: no pairs for this stream.
     */
    private int completeStreak;

    private long lastData;
    private final StreamStats stats = new StreamStats();

    /**
     * One stream's overrides of the pool's settings, as {@code SET} does for one session in
     * PostgreSQL. A field at {@link #INHERIT} (or {@code null}) takes the pool's setting.
     * Tablespace overrides still win over {@code ioConcurrency}, as they win over {@code SET}.
     *
     * @param ioConcurrency  {@code effective_io_concurrency} (or {@code maintenance_io_concurrency}
     *                       with {@link #MAINTENANCE}), 0..1000, or {@link #INHERIT}
     * @param ioCombineLimit {@code io_combine_limit} in blocks, 1..128 (capped at
     *                       {@code io_max_combine_limit}), or {@link #INHERIT}
     * @param lookahead      {@code read_stream_lookahead}, or {@code null}
     */
    public record Options(int ioConcurrency, int ioCombineLimit, BufMgrSettings.Lookahead lookahead) {
        public static final int INHERIT = -1;
        /** No overrides. */
        public static final Options DEFAULT = new Options(INHERIT, INHERIT, null);

        public Options {
            if (ioConcurrency != INHERIT && (ioConcurrency < 0 || ioConcurrency > 1000)) {
                throw new IllegalArgumentException("io concurrency = " + ioConcurrency + " is out of range: valid values are 0..1000");
            }
            if (ioCombineLimit != INHERIT && (ioCombineLimit < 1 || ioCombineLimit > 128)) {
                throw new IllegalArgumentException("io_combine_limit = " + ioCombineLimit + " is out of range: valid values are 1..128");
            }
        }
    }

    /** A stream over {@code session}'s two-phase reads, with the pool's settings. */
    public ReadStream(StreamingReads session, SmgrRelation rel, BlockCallback callback, int flags,
            BufferAccessStrategy strategy) {
        this(session, rel, callback, flags, strategy, Options.DEFAULT);
    }

    /** A stream with per-stream overrides of the pool's settings ({@link Options}). */
    public ReadStream(StreamingReads session, SmgrRelation rel, BlockCallback callback, int flags,
            BufferAccessStrategy strategy, Options options) {
        this.session = session;
        this.rel = rel;
        this.callback = callback;
        this.flags = flags;
        this.strategy = strategy;
        BufMgrSettings s = session.settings();
        BufMgrSettings.Lookahead lookahead = options.lookahead() != null ? options.lookahead() : s.readStreamLookahead();
        this.pg19 = lookahead == BufMgrSettings.Lookahead.PG19;
        this.ioCombineLimit = options.ioCombineLimit() == Options.INHERIT ? s.effectiveIoCombineLimit()
                : Math.min(options.ioCombineLimit(), s.ioMaxCombineLimit());
        Tablespace ts = rel.tablespace();
        int inherit = Options.INHERIT;
        int concurrency = (flags & MAINTENANCE) != 0
                ? ts.maintenanceIoConcurrency(options.ioConcurrency() == inherit ? s.maintenanceIoConcurrency() : options.ioConcurrency())
                : ts.effectiveIoConcurrency(options.ioConcurrency() == inherit ? s.effectiveIoConcurrency() : options.ioConcurrency());
        this.maxIos = Math.max(1, Math.min(concurrency, Short.MAX_VALUE));
        this.readGroup = maxIos >= 4 * GROUP_MIN_READS ? Math.max(GROUP_MIN_READS, maxIos / 8) : Math.max(1, maxIos / 8);
        this.readFlags = concurrency == 0 ? ReadBuffersOperation.SYNCHRONOUSLY : 0;
        this.grouped = (flags & USE_BATCHING) != 0 && (flags & SEQUENTIAL) != 0 && maxIos >= 8;
        this.groupWhenAhead = (flags & USE_BATCHING) != 0 && (flags & SEQUENTIAL) == 0 && maxIos >= 4 * GROUP_MIN_READS
                && !session.defersReads();
        this.pairWhenComplete = pg19 && (flags & USE_BATCHING) != 0 && (flags & SEQUENTIAL) != 0 && !session.defersReads();
        int pins = (maxIos + 1) * ioCombineLimit;
        pins = Math.min(pins, session.additionalPinLimit());
        if (strategy != null) {
            // one less than the ring allows: the consumer still holds the buffer it was given
            // when the stream looks ahead, and a ring slot it pins cannot be recycled
            pins = Math.min(pins, strategy.pinLimit() - 1);
        }
        this.maxPinned = Math.max(1, pins);
        // Direct I/O (the storage manager's O_DIRECT, or a method that bypasses the page cache on
        // its own) gets no kernel read-ahead and no use of advice.
        boolean direct = s.directIo() || session.method().bypassesPageCache();
        this.direct = direct;
        this.advise = session.defersReads() && !direct && (flags & SEQUENTIAL) == 0;
        this.queueSize = maxPinned + 1;
        this.queue = new int[queueSize + ioCombineLimit - 1];
        this.data = new long[queueSize];
        // Random access only: a sequential stream's pins ((max_ios + 1) × io_combine_limit) hold
        // max_ios + 1 full-size reads, so its reads cannot outrun the consumer further anyway.
        // io_method=sync starts a read only in the wait: none is ever over before it is consumed.
        // Every unconsumed read holds one of the session's I/O handles until it is consumed: with
        // no handle to spare beyond max_ios, a replacement would wait for (and reap) all of them.
        int handles = session.io().context().config().ioMaxConcurrency();
        int slots = Math.min(RETIRE_FACTOR * maxIos, handles);
        this.retire = (flags & RETIRE_COMPLETED) != 0 && (flags & SEQUENTIAL) == 0 && !session.defersReads()
                && slots > maxIos;
        this.ioSlots = retire ? slots : maxIos;
        this.ops = new ReadBuffersOperation[ioSlots];
        this.opQueueIndex = new int[ioSlots];
        this.over = new boolean[ioSlots];
        for (int i = 0; i < ioSlots; i++) {
            ops[i] = session.newOperation(ioCombineLimit);
        }
        // Direct I/O gets no kernel read-ahead: a sequential stream's look-ahead is all that keeps
        // the device busy, so it starts at full combine size instead of ramping up from one block.
        boolean fullStart = (flags & FULL) != 0 || ((flags & SEQUENTIAL) != 0 && direct);
        int start = fullStart ? Math.min(maxPinned, ioCombineLimit) : 1;
        this.distance = start;
        this.combineDistance = start;
        stats.capacity = maxPinned;
        stats.maxIos = maxIos;
    }

    /** A callback that yields {@code first, first + 1, …, first + count - 1}. */
    public static BlockCallback blockRange(long first, long count) {
        return new BlockCallback() {
            private long next = first;

            @Override
            public long nextBlock(ReadStream stream) {
                return next < first + count ? next++ : END;
            }
        };
    }

    /** Inside the block callback: the value the consumer will see with this block. */
    public void setPerBufferData(long value) {
        callbackData = value;
    }

    /** The per-buffer data of the buffer {@link #next()} returned last. */
    public long perBufferData() {
        return lastData;
    }

    /** The most buffers this stream pins at once. */
    public int maxPinned() {
        return maxPinned;
    }

    public int maxIos() {
        return maxIos;
    }

    /** Counters for an EXPLAIN-style report. */
    public StreamStats stats() {
        return stats;
    }

    /**
     * The next pinned buffer, or -1 at the end. The caller owns the pin: release it with
     * {@link StreamingReads#releaseBuffer}.
     *
     * @throws IOException naming the relation, block and what failed, when a read fails
     */
    public int next() throws IOException {
        if (pinned == 0) {
            lookAhead();
            if (pinned == 0 && pendingLen > 0) {
                startPendingRead(); // progress is guaranteed even when every budget says wait
            }
            if (pinned == 0) {
                return -1;
            }
        }
        int slot = oldestBuffer;
        if (ios > 0 && opQueueIndex[oldestIo] == slot) {
            ReadBuffersOperation op = ops[oldestIo];
            boolean waited = false;
            long waitNanos = 0; // blocked time only: not the look-ahead or callbacks in between
            if (retire && !over[oldestIo]) {
                // While the oldest read is in flight, each read that ends lets another start, as
                // fio keeps its depth: wait for any completion, retire, refill, until it is over.
                while (!session.readBuffersIoOver(op)) {
                    waited = true;
                    if (session.io().readyCompletions() == 0) {
                        long t = System.nanoTime();
                        session.awaitReadProgress(op, 0); // until a completion is ready
                        waitNanos += System.nanoTime() - t;
                    }
                    lookAhead(); // replacements first: ready completions count as free
                    session.awaitReadProgress(op, PROGRESS_CHUNK); // then pay for a few callbacks
                }
            }
            long t0 = System.nanoTime();
            if (session.waitReadBuffers(op)) {
                waited = true;
                waitNanos += System.nanoTime() - t0;
            }
            if (waited) {
                stats.waits++;
                stats.waitNanos += waitNanos;
            }
            if (over[oldestIo]) {
                over[oldestIo] = false;
                retired--;
            }
            oldestIo = (oldestIo + 1) % ioSlots;
            ios--;
            if (groupWhenAhead) {
                noteWaitShare(waited, waitNanos, waited ? System.nanoTime() : t0);
            }
            afterIo(waited);
        }
        int buf = queue[slot];
        lastData = data[slot];
        stats.returned++;
        stats.pinnedSum += pinned;
        stats.pinnedMax = Math.max(stats.pinnedMax, pinned);
        stats.distanceSum += distance;
        stats.distanceMax = Math.max(stats.distanceMax, distance);
        pinned--;
        oldestBuffer = (slot + 1) % queueSize;
        lookAhead();
        return buf;
    }

    private void afterIo(boolean waited) {
        if (pg19) {
            if (waited || direct) {
                distance = Math.min(distance * 2, maxPinned);
            }
            combineDistance = Math.min(Math.min(combineDistance * 2, ioCombineLimit), maxPinned);
            holdoff = maxPinned;
        } else {
            distance = Math.min(distance * 2, maxPinned);
        }
    }

    private void afterHit() {
        if (pg19) {
            if (ios > 0) {
                return;
            }
            if (holdoff > 0) {
                holdoff--;
            } else {
                distance = Math.max(1, distance - 1);
                combineDistance = Math.max(1, combineDistance - 1);
            }
        } else if (distance > 1) {
            distance--;
        }
    }

    /** Pulls blocks from the callback and starts reads while the budgets allow. */
    private void lookAhead() throws IOException {
        if (deep()) {
            return; // refill later, several reads in one submission
        }
        boolean batching = (flags & USE_BATCHING) != 0;
        if (batching) {
            session.io().enterBatchMode();
        }
        stagedNotOver = false;
        int firstStarted = ios; // the reads this look-ahead starts are ios firstStarted.. of the ring
        try {
            for (;;) {
                if (pendingLen > 0 && issueNow()) {
                    startPendingRead();
                    continue;
                }
                if (ended || readBudgetFull() || !lookFurther()) {
                    break;
                }
                long block = takeBlock();
                if (block == END) {
                    ended = true;
                    continue;
                }
                if (pendingLen > 0 && block == pendingBlock + pendingLen && pendingLen < ioCombineLimit) {
                    data[(nextBuffer + pendingLen) % queueSize] = callbackData;
                    pendingLen++;
                    continue;
                }
                if (pendingLen > 0) {
                    // not adjacent (or full): the pending read must go first
                    ungetBlock = block;
                    ungetData = callbackData;
                    if (readBudgetFull()) {
                        break;
                    }
                    startPendingRead();
                    continue;
                }
                pendingBlock = block;
                pendingLen = 1;
                data[nextBuffer] = callbackData;
            }
        } finally {
            if (batching) {
                session.io().exitBatchMode();
            }
        }
        if (pairWhenComplete && stagedNotOver) {
            boolean allOver = true;
            for (int k = firstStarted; k < ios && allOver; k++) {
                allOver = session.readBuffersIoOver(ops[(oldestIo + k) % ioSlots]);
            }
            noteCompleteAtSubmission(allOver);
        }
    }

    /**
     * Counts look-aheads whose reads were all over once submitted (io_uring reading pages the
     * kernel has cached completes them inside {@code io_uring_enter}); from the
     * {@value #COMPLETE_AT_SUBMISSION_STREAK}th on, the look-ahead reaches
     * {@value #READS_PER_SUBMISSION_WHEN_COMPLETE} full-size reads and refills only when the
     * consumer has drained them, so they go to the method in one submission. A read that was not
     * over before that starts the count again; once pairs have started, it rules them out for the
     * rest of the stream: the relation is not (all) cached, and the usual look-ahead keeps reads in
     * flight ahead of the consumer.
     */
    private void noteCompleteAtSubmission(boolean over) {
        if (completeStreak < 0) {
            return;
        }
        if (!over) {
            // before pairs started (the first reads of a relation the kernel caches may still be
            // probed in the background): count again; after: no pairs for this stream
            completeStreak = pairing() ? -1 : 0;
            return;
        }
        if (completeStreak < COMPLETE_AT_SUBMISSION_STREAK) {
            completeStreak++;
        }
        if (pairing()) {
            distance = Math.max(distance, Math.min(maxPinned, READS_PER_SUBMISSION_WHEN_COMPLETE * ioCombineLimit));
        }
    }

    /**
     * Whether a grouped stream is still deep enough to skip this look-ahead: reads are in flight
     * and fewer than a group of reads is free — an eighth of its read budget ({@code max_ios}), and
     * at least {@value #GROUP_MIN_READS} from 12 on ({@link #readGroup}) — or fewer than an eighth of its look-ahead distance in
     * pins. (A stream whose pins run out before its reads, e.g. 127 pins at eic 16, still refills
     * one read at a time: waiting for three reads' pins would cost it depth it cannot spare.)
     * Looking ahead at every consumed buffer would start one read per buffer, each in its own
     * submission (one system call per block for random reads, which cannot combine); waiting for a
     * group to free up sends them to the method several at a time, for a slightly lower average
     * depth. A random stream ({@link #groupWhenAhead}) does so only while it runs ahead of its reads.
     * A stream whose reads complete as they are submitted ({@link #pairing()}) skips every
     * look-ahead until the consumer has drained its pins, then refills a pair.
     * Progress: with reads in flight the consumer waits for one or releases pins.
     */
    private boolean deep() {
        if (pairing()) {
            return pinned > 0; // nothing pinned: no read unconsumed, so the rules below would not skip either
        }
        boolean runningAhead = groupWhenAhead && waitShare < WAIT_SHARE_ONE / GROUP_WAIT_SHARE_DIVISOR;
        if (ios == 0 || !(grouped || runningAhead)) {
            return false;
        }
        boolean fewReadsFree = maxIos - (ios - retired) < readGroup || ioSlots - ios < readGroup;
        if (!grouped) {
            return fewReadsFree; // a random stream: one block per read, pins are not its limit
        }
        int freePins = distance - pinned - forwarded - pendingLen;
        return fewReadsFree || freePins < Math.max(1, distance / 8);
    }

    /** Whether reads complete as they are submitted, often enough that they go in pairs. */
    private boolean pairing() {
        return completeStreak >= COMPLETE_AT_SUBMISSION_STREAK;
    }

    /** Folds one consumed read into {@link #waitShare}: weight {@code 1 / max_ios}, integer arithmetic. */
    private void noteWaitShare(boolean waited, long waitNanos, long now) {
        long since = now - lastReadConsumed;
        if (readConsumed && since > 0) {
            long share = waited ? Math.min(WAIT_SHARE_ONE, waitNanos * WAIT_SHARE_ONE / since) : 0;
            waitShare += (share - waitShare) / maxIos;
        }
        lastReadConsumed = now;
        readConsumed = true;
    }

    /**
     * Whether no read may start now: {@code max_ios} reads are in flight, or every read slot holds
     * a read the consumer has not reached. With {@link #retire}, reads the method has completed but
     * not processed yet ({@link org.pageio.api.IoSession#readyCompletions()}) are not in flight,
     * and a budget that still looks full is re-counted from the handles' states (no poll of the
     * method): reads found over leave the budget.
     */
    private boolean readBudgetFull() {
        if (ios >= ioSlots) {
            return true;
        }
        if (ios - retired < maxIos) {
            return false;
        }
        if (!retire) {
            return true;
        }
        if (ios - retired - session.io().readyCompletions() < maxIos) {
            return false; // completed, not processed yet: no longer in flight
        }
        int before = retired;
        for (int i = 0, k = oldestIo; i < ios; i++, k = k + 1 == ioSlots ? 0 : k + 1) {
            if (!over[k] && session.readBuffersIoOver(ops[k])) {
                over[k] = true;
                retired++;
            }
        }
        stats.retired += retired - before;
        return ios - retired >= maxIos;
    }

    private long takeBlock() {
        if (ungetBlock != END) {
            long b = ungetBlock;
            ungetBlock = END;
            callbackData = ungetData;
            return b;
        }
        callbackData = 0;
        return callback.nextBlock(this);
    }

    /** Whether to take another block from the callback. */
    private boolean lookFurther() {
        if (pendingLen == ioCombineLimit) {
            return false;
        }
        if (pinned + forwarded + pendingLen >= maxPinned) {
            return false;
        }
        if (pg19) {
            if (pendingLen < combineDistance && pinned == 0) {
                return true;
            }
            return pinned + pendingLen < distance;
        }
        return pinned + pendingLen < distance;
    }

    /** Whether the pending read should start now rather than grow. */
    private boolean issueNow() {
        if (readBudgetFull()) {
            return false;
        }
        if (ended || ungetBlock != END || pendingLen >= ioCombineLimit) {
            return true;
        }
        // A full pin budget does not issue a short read (unless nothing is pinned, below): the
        // pending read waits for the consumer to release pins and keeps growing, as in
        // PostgreSQL, so reads stay io_combine_limit long.
        if (pg19) {
            return pendingLen >= combineDistance || (pinned == 0 && !lookFurther());
        }
        return pinned == 0 && (pendingLen >= distance || !lookFurther());
    }

    private void startPendingRead() throws IOException {
        int idx = nextBuffer;
        ReadBuffersOperation op = ops[(oldestIo + ios) % ioSlots];
        if (advise) {
            advise(pendingBlock, pendingLen);
        }
        boolean needsWait = session.startReadBuffers(op, queue, idx, forwarded, rel, pendingBlock, pendingLen,
                readFlags, strategy);
        int n = op.nblocks();
        // Entries pinned beyond n (a valid buffer that cut the run short, or earlier forwarded
        // ones the run did not reach) stay pinned for the next call.
        forwarded = op.pinnedEntries() - n;
        if (needsWait) {
            if (pairWhenComplete && !session.readBuffersIoOver(op)) {
                stagedNotOver = true; // staged, not executed at staging: over after the submission or not
            }
            if (retire && session.io().stagedCount() >= SUBMIT_EVERY) {
                session.io().submitStaged(); // the device gets the first replacements at once
            }
            opQueueIndex[(oldestIo + ios) % ioSlots] = idx;
            ios++;
            stats.ios++;
            stats.ioBlocks += n;
            stats.inProgressSum += ios; // PostgreSQL's count: started and not yet consumed (retired reads too)
            if (ios == maxIos && stats.fullDepthIos < 0) {
                stats.fullDepthIos = stats.ios;
                stats.fullDepthReturned = stats.returned;
            }
            if (!op.readIssued() && !session.defersReads()) {
                // a read already in flight (ours or another session's), to be waited for, not
                // repeated (io_method=sync defers every read to the wait, so nothing is adopted)
                stats.adoptedBlocks++; // the head block; the rest of the run is read in the wait
            }
        } else {
            stats.hits++;
            afterHit();
        }
        // Entries that landed in the overflow zone go to the front of the queue.
        for (int i = queueSize; i < idx + n + forwarded; i++) {
            queue[i - queueSize] = queue[i];
        }
        pinned += n;
        nextBuffer = (idx + n) % queueSize;
        pendingBlock += n;
        pendingLen -= n;
        if (pendingLen == 0) {
            pendingBlock = END;
        }
    }

    /** io_method=sync: tell the kernel what we will read, on random jumps (PostgreSQL's advice). */
    private void advise(long block, int n) {
        if (block == adviceEnd) {
            adviceEnd = block + n; // sequential: the kernel's own read-ahead serves
            return;
        }
        adviceEnd = block + n;
        try {
            Posix.fadvise(rel.fd(block), rel.segmentOffset(block), (long) n * 8192, Fadvise.POSIX_FADV_WILLNEED,
                    rel.segmentPath(block));
            stats.advice++;
        } catch (PosixException e) {
            // advice is a hint; the read itself reports real errors
        }
    }

    /**
     * Drops every pin and forgets pending blocks; reads in flight complete in the background. The
     * stream can be used again (the callback continues from where it is).
     */
    public void reset() {
        releaseAll();
        ReadBuffersOperation[] fresh = new ReadBuffersOperation[ioSlots];
        for (int i = 0; i < ioSlots; i++) {
            // An operation whose read is in flight keeps its IoReturn until the session reclaims
            // the handle: do not reuse it.
            fresh[i] = session.newOperation(ioCombineLimit);
        }
        ops = fresh;
        ended = false;
        distance = 1;
        combineDistance = 1;
        holdoff = 0;
        completeStreak = 0;
    }

    private void releaseAll() {
        for (int i = 0; i < pinned; i++) {
            session.releaseBuffer(queue[(oldestBuffer + i) % queueSize]);
        }
        for (int i = 0; i < forwarded; i++) {
            session.releaseBuffer(queue[(oldestBuffer + pinned + i) % queueSize]);
        }
        pinned = 0;
        forwarded = 0;
        ios = 0;
        retired = 0;
        java.util.Arrays.fill(over, false);
        oldestIo = 0;
        oldestBuffer = 0;
        nextBuffer = 0;
        pendingLen = 0;
        pendingBlock = END;
        ungetBlock = END;
    }

    /**
     * Ends the stream at once (a LIMIT): see the class comment. The first close adds the stream's
     * counts to the pool's {@link org.pageio.bufmgr.ReadStreamTotals}.
     */
    @Override
    public void close() {
        releaseAll();
        ended = true;
        if (!closed) {
            closed = true;
            session.streamTotals().add(stats.returned, stats.distanceSum, stats.ios, stats.inProgressSum, stats.waits,
                    stats.waitNanos);
        }
    }
}
