package org.pageio.bufmgr.stream;

import java.io.IOException;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.StreamingReads;
import org.pageio.bufmgr.ReadBuffersOperation;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.Tablespace;

/**
 * A read stream (PostgreSQL's read_stream.c): block numbers in, from a callback; pinned buffers
 * out, in the same order. It looks ahead, starting reads before the consumer needs them, and
 * combines adjacent blocks into one read of up to {@code io_combine_limit} blocks.
 *
 * <h2>Look-ahead (PostgreSQL's)</h2>
 * {@code read_stream_lookahead = pg18}: one {@code distance}, starting at 1, doubled after consuming
 * a buffer whose read needed I/O, decremented on a hit. {@code pg19}: a read-ahead {@code distance}
 * that doubles only when a read had to wait (synchronous execution counts), a
 * {@code combine_distance} that doubles after any I/O, and a decay hold-off of
 * {@code max_pinned_buffers} hits after any I/O before either shrinks. At most {@code max_ios}
 * reads are in flight ({@code ios_in_progress}; {@code effective_io_concurrency}, or
 * {@code maintenance_io_concurrency} with {@link #MAINTENANCE}, with the tablespace's override) and
 * at most {@code max_pinned_buffers = (max_ios + 1) × io_combine_limit} buffers are pinned, capped
 * by the strategy ring and the session's share of {@code shared_buffers}. With
 * {@code io_method=sync}, a stream that is not {@link #SEQUENTIAL} gives {@code WILLNEED} advice on
 * jumps (and, by the {@link ThreadPoolAdvice} policy, under a method whose reads hold threads).
 * A block whose read is already in flight is adopted, not read again.
 *
 * <h2>All-cached fast path (PostgreSQL's)</h2>
 * As {@code read_stream_next_buffer}'s {@code fast_path}: once a call leaves the stream with one
 * buffer pinned, no read in flight, none forwarded, no pending read, a look-ahead distance of 1
 * ({@code pg19}: read-ahead and combine distance both 1), not ended, and no per-buffer data ever
 * attached, the next call returns that buffer and pins the next block into the same queue slot with
 * one one-block {@code startReadBuffers}. That skips the look-ahead (the policies, batch mode, the
 * issue and combine decisions) and the queue's rotation; the counters are kept as the ordinary path
 * keeps them. A miss leaves the fast path as PostgreSQL's does: the read is already started, and it
 * becomes the stream's one read in flight, waited for by the next call through the ordinary path.
 * The end of the stream leaves it too. Both look-aheads have it (PostgreSQL 18 and 19 alike).
 * {@link Options#fastPath()} {@code false} turns it off for one stream (PostgreSQL has no such
 * switch): the drill's {@code hot} case measures what it saves.
 *
 * <h2>pageio's additions (look-ahead policies)</h2>
 * Each departure from read_stream.c is a policy object of its own, created with the stream when it
 * applies and {@code read_stream_policy = pageio} (the default), {@code null} otherwise, so that the code below reads as PostgreSQL's with a named call
 * where a policy steps in; the measurements behind each are in docs/performance.md:
 * <ul>
 *   <li>{@link DirectIoRamp}: under direct I/O a sequential stream starts at full combine size and
 *       {@code pg19}'s distance doubles after every read that needed I/O;</li>
 *   <li>{@link GroupedRefills}: a deep batching stream (sequential, or random while it runs ahead of
 *       its reads) skips look-aheads until a group of reads is free, so several reads share one
 *       submission;</li>
 *   <li>{@link ThreadPoolAdvice}: a random stream under a method whose reads each hold a thread
 *       ({@code io_method=worker}) gives {@code WILLNEED} advice as under {@code sync};</li>
 *   <li>{@link PairedReads}: a sequential {@code pg19} stream whose reads complete as they are
 *       submitted (io_uring over cached pages) looks ahead two full-size reads at a time.</li>
 * </ul>
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
    /** The access pattern is sequential: no fadvise advice (io_method=sync, and methods whose reads hold threads). */
    public static final int SEQUENTIAL = 2;
    /** Skip ramp-up: start at full combine size. */
    public static final int FULL = 4;
    /** Run the look-ahead in AIO batch mode (the callback promises not to block on others). */
    public static final int USE_BATCHING = 8;
    /**
     * Read the pages as they are stored ({@link ReadBuffersOperation#STRICT}): {@code zero_damaged_pages}
     * and {@code ignore_checksum_failure} do not apply, a damaged page fails its read. For
     * verifications.
     *
     * @since 3.2.0
     */
    public static final int STRICT = 16;

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
    private final int ioCombineLimit;
    private final int maxIos;
    private final int maxPinned;
    private final int readFlags;

    // pageio's look-ahead policies (see the class comment): null where one does not apply
    private final DirectIoRamp directIoRamp;
    private final GroupedRefills groupedRefills;
    private final PairedReads pairedReads;

    private final int queueSize;
    private final int[] queue;
    private final long[] data;
    /** One operation per read slot ({@code max_ios}), oldest at {@link #oldestIo}. */
    private ReadBuffersOperation[] ops;
    private final int[] opQueueIndex;
    private int oldestIo;
    /** PostgreSQL's {@code ios_in_progress}: reads started and not yet consumed (waited for). */
    private int ios;

    private int oldestBuffer;
    private int nextBuffer;
    /** PostgreSQL's {@code pinned_buffers}: buffers pinned and not yet returned to the consumer. */
    private int pinned;
    /** PostgreSQL's {@code forwarded_buffers}: pinned beyond a read that was cut short, for the next one. */
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

    private long lastData;
    /** The callback attached per-buffer data at least once: no fast path (PostgreSQL's {@code per_buffer_data_size != 0}). */
    private boolean perBufferDataUsed;
    /** PostgreSQL's {@code fast_path}: the next {@link #next()} takes {@link #nextAllCached()}. */
    private boolean fastPath;
    /** {@link Options#fastPath()}: the fast path may be taken at all. */
    private final boolean fastPathAllowed;
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
     * @param fastPath       whether the stream may take the all-cached fast path (true, as PostgreSQL's
     *                       always may); false keeps every buffer on the ordinary path, to measure what
     *                       the fast path saves (since 3.2.0)
     */
    public record Options(int ioConcurrency, int ioCombineLimit, BufMgrSettings.Lookahead lookahead, boolean fastPath) {
        public static final int INHERIT = -1;
        /** No overrides. */
        public static final Options DEFAULT = new Options(INHERIT, INHERIT, null);

        /** Overrides with the all-cached fast path allowed. */
        public Options(int ioConcurrency, int ioCombineLimit, BufMgrSettings.Lookahead lookahead) {
            this(ioConcurrency, ioCombineLimit, lookahead, true);
        }

        public Options {
            if (ioConcurrency != INHERIT && (ioConcurrency < 0 || ioConcurrency > 1000)) {
                throw new IllegalArgumentException("io concurrency = " + ioConcurrency + " is out of range: valid values are 0..1000");
            }
            if (ioCombineLimit != INHERIT && (ioCombineLimit < 1 || ioCombineLimit > 128)) {
                throw new IllegalArgumentException("io_combine_limit = " + ioCombineLimit + " is out of range: valid values are 1..128");
            }
        }

        /** These overrides with the all-cached fast path allowed ({@code true}) or not. */
        public Options withFastPath(boolean on) {
            return new Options(ioConcurrency, ioCombineLimit, lookahead, on);
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
        this.fastPathAllowed = options.fastPath();
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
        this.readFlags = (concurrency == 0 ? ReadBuffersOperation.SYNCHRONOUSLY : 0)
                | ((flags & STRICT) != 0 ? ReadBuffersOperation.STRICT : 0);
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
        boolean sequential = (flags & SEQUENTIAL) != 0;
        boolean batching = (flags & USE_BATCHING) != 0;
        // read_stream_policy = postgresql: read_stream.c alone, no policy steps in
        boolean policies = s.readStreamPolicy() == BufMgrSettings.ReadStreamPolicy.PAGEIO;
        this.advise = (session.defersReads() && !direct && !sequential)
                || (policies && ThreadPoolAdvice.applies(session.method().readsHoldThreads(), direct, sequential));
        this.directIoRamp = policies ? DirectIoRamp.forStream(direct, sequential) : null;
        this.groupedRefills = policies ? GroupedRefills.forStream(batching, sequential, maxIos, session.defersReads()) : null;
        this.pairedReads = policies ? PairedReads.forStream(pg19, batching, sequential, session.defersReads(), maxPinned,
                ioCombineLimit) : null;
        this.queueSize = maxPinned + 1;
        this.queue = new int[queueSize + ioCombineLimit - 1];
        this.data = new long[queueSize];
        this.ops = new ReadBuffersOperation[maxIos];
        this.opQueueIndex = new int[maxIos];
        for (int i = 0; i < maxIos; i++) {
            ops[i] = session.newOperation(ioCombineLimit);
        }
        boolean fullStart = (flags & FULL) != 0 || (directIoRamp != null && directIoRamp.startsFull());
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
        perBufferDataUsed = true;
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
        if (fastPath) {
            return nextAllCached();
        }
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
            long waitNanos = 0; // blocked time only
            long t0 = System.nanoTime();
            if (session.waitReadBuffers(op)) {
                waited = true;
                waitNanos = System.nanoTime() - t0;
                stats.waits++;
                stats.waitNanos += waitNanos;
            }
            oldestIo = (oldestIo + 1) % maxIos;
            ios--;
            if (groupedRefills != null) {
                groupedRefills.readConsumed(waited, waitNanos, t0);
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
        try {
            lookAhead();
        } catch (IOException | RuntimeException e) {
            session.releaseBuffer(buf); // the buffer is the consumer's only once returned
            throw e;
        }
        fastPath = fastPathAllowed && allCached();
        return buf;
    }

    /**
     * Whether the stream is in the all-cached state, where the next call can take the fast path
     * (read_stream.c's "See if we can take the fast path for all-cached scans next time"): one
     * buffer pinned, no read in flight or forwarded, no pending or ungot block, not ended, the
     * look-ahead distance at 1, and no per-buffer data. In that state the ordinary path would give
     * no policy a say: {@link GroupedRefills} only defers with reads in flight, {@link PairedReads}
     * only while buffers stay pinned, and no read is staged for either to count.
     */
    private boolean allCached() {
        return ios == 0 && forwarded == 0 && pinned == 1 && pendingLen == 0 && ungetBlock == END && !ended
                && distance == 1 && (!pg19 || combineDistance == 1) && !perBufferDataUsed;
    }

    /**
     * PostgreSQL's fast path for all-cached scans ({@code read_stream_next_buffer} with
     * {@code fast_path}): returns the one pinned buffer, takes the next block from the callback and
     * pins it into the same queue slot with one one-block {@code startReadBuffers} (PostgreSQL's
     * {@code StartReadBuffer}). A hit stays on the fast path. A miss leaves it with the read
     * started: the read is the stream's one in flight, as PostgreSQL sets {@code ios_in_progress = 1},
     * and the next call waits for it through the ordinary path, whose look-ahead then grows. Batch
     * mode is not entered, as in PostgreSQL's: that one read goes to the method as it is staged. The
     * end of the stream leaves it with nothing pinned. The queue's overflow zone needs no clearing here,
     * unlike PostgreSQL's: {@code startReadBuffers} reads no queue entry beyond the forwarded ones.
     */
    private int nextAllCached() throws IOException {
        int slot = oldestBuffer;
        int buf = queue[slot];
        lastData = data[slot];
        stats.returned++;
        stats.fastPathReturns++;
        stats.pinnedSum += pinned;
        stats.pinnedMax = Math.max(stats.pinnedMax, pinned);
        stats.distanceSum += distance;
        stats.distanceMax = Math.max(stats.distanceMax, distance);
        ReadBuffersOperation op = ops[oldestIo]; // every read slot is free
        boolean needsWait;
        try {
            long block = takeBlock();
            if (block == END) {
                ended = true;
                leaveFastPathEmpty();
                return buf;
            }
            int advice = advise && jump(block, 1) ? ReadBuffersOperation.ISSUE_ADVICE : 0;
            data[slot] = callbackData;
            // one pin handed to the consumer, one taken for the next call: pinned stays 1
            needsWait = session.startReadBuffers(op, queue, slot, 0, rel, block, 1, readFlags | advice, strategy);
            if (op.advised()) {
                stats.advice++;
            }
        } catch (IOException | RuntimeException e) {
            leaveFastPathEmpty();
            session.releaseBuffer(buf); // the buffer is the consumer's only once returned
            throw e;
        }
        if (!needsWait) {
            stats.hits++;
            afterHit();
            return buf; // fast return
        }
        // The next call must wait for the read of the newly pinned buffer.
        fastPath = false;
        if (pairedReads != null) {
            pairedReads.lookAheadStarts();
        }
        readStarted(op, slot, op.nblocks());
        readsSubmitted(0);
        return buf;
    }

    /** The fast path ends with nothing pinned (end of stream, or a failed callback or pin). */
    private void leaveFastPathEmpty() {
        fastPath = false;
        pinned = 0;
        oldestBuffer = nextBuffer;
    }

    /** The consumer got a buffer whose read needed I/O ({@code waited}: it had to wait for it). */
    private void afterIo(boolean waited) {
        if (pg19) {
            if (waited || (directIoRamp != null && directIoRamp.growsOnEveryRead())) {
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

    /** PostgreSQL's {@code read_stream_look_ahead}: pulls blocks from the callback and starts reads while the budgets allow. */
    private void lookAhead() throws IOException {
        if (skipLookAhead()) {
            return; // a policy refills later, several reads in one submission
        }
        boolean batching = (flags & USE_BATCHING) != 0;
        if (batching) {
            session.io().enterBatchMode();
        }
        if (pairedReads != null) {
            pairedReads.lookAheadStarts();
        }
        int firstStarted = ios; // the reads this look-ahead starts are ios firstStarted.. of the ring
        try {
            for (;;) {
                if (pendingLen > 0 && issueNow()) {
                    startPendingRead();
                    continue;
                }
                if (ended || ios >= maxIos || !lookFurther()) {
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
                    if (ios >= maxIos) {
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
                session.io().exitBatchMode(); // submits the staged reads
            }
        }
        readsSubmitted(firstStarted);
    }

    /** A look-ahead submitted the reads from {@code firstStarted} of the ring on: tells {@link PairedReads} whether they were over. */
    private void readsSubmitted(int firstStarted) {
        if (pairedReads != null && pairedReads.readsToCheck()) {
            boolean allOver = true;
            for (int k = firstStarted; k < ios && allOver; k++) {
                allOver = session.readBuffersIoOver(ops[(oldestIo + k) % maxIos]);
            }
            distance = pairedReads.submitted(allOver, distance);
        }
    }

    /** Whether a look-ahead policy defers this look-ahead ({@link PairedReads}, {@link GroupedRefills}). */
    private boolean skipLookAhead() {
        if (pairedReads != null && pairedReads.pairing()) {
            return pairedReads.drainFirst(pinned);
        }
        return groupedRefills != null && groupedRefills.deep(ios, distance, pinned, forwarded, pendingLen);
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
        if (ios >= maxIos) {
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
        ReadBuffersOperation op = ops[(oldestIo + ios) % maxIos];
        int advice = advise && jump(pendingBlock, pendingLen) ? ReadBuffersOperation.ISSUE_ADVICE : 0;
        boolean needsWait = session.startReadBuffers(op, queue, idx, forwarded, rel, pendingBlock, pendingLen,
                readFlags | advice, strategy);
        if (op.advised()) {
            stats.advice++;
        }
        int n = op.nblocks();
        // Entries pinned beyond n (a valid buffer that cut the run short, or earlier forwarded
        // ones the run did not reach) stay pinned for the next call.
        forwarded = op.pinnedEntries() - n;
        if (needsWait) {
            readStarted(op, idx, n);
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

    /** A read of {@code n} blocks into queue slots from {@code idx} needs I/O: it counts against {@code max_ios} until consumed. */
    private void readStarted(ReadBuffersOperation op, int idx, int n) {
        if (pairedReads != null) {
            pairedReads.readStaged(session.readBuffersIoOver(op)); // over at staging: executed, not staged
        }
        opQueueIndex[(oldestIo + ios) % maxIos] = idx;
        ios++;
        stats.ios++;
        stats.ioBlocks += n;
        stats.inProgressSum += ios; // PostgreSQL's count: started and not yet consumed
        if (ios == maxIos && stats.fullDepthIos < 0) {
            stats.fullDepthIos = stats.ios;
            stats.fullDepthReturned = stats.returned;
        }
        if (!op.readIssued() && !session.defersReads()) {
            // a read already in flight (ours or another session's), to be waited for, not
            // repeated (io_method=sync defers every read to the wait, so nothing is adopted)
            stats.adoptedBlocks++; // the head block; the rest of the run is read in the wait
        }
    }

    /**
     * io_method=sync (and {@link ThreadPoolAdvice}): whether a read of {@code n} blocks from
     * {@code block} asks for advice ({@link ReadBuffersOperation#ISSUE_ADVICE}): on a random jump,
     * not where it continues the previous read (the kernel's own read-ahead serves). The buffer
     * manager then advises only the blocks that need I/O, as PostgreSQL's {@code StartReadBuffers}.
     */
    private boolean jump(long block, int n) {
        boolean jump = block != adviceEnd;
        adviceEnd = block + n;
        return jump;
    }

    /**
     * Drops every pin and forgets pending blocks; reads in flight complete in the background. The
     * stream can be used again (the callback continues from where it is).
     */
    public void reset() {
        releaseAll();
        ReadBuffersOperation[] fresh = new ReadBuffersOperation[maxIos];
        for (int i = 0; i < maxIos; i++) {
            // An operation whose read is in flight keeps its IoReturn until the session reclaims
            // the handle: do not reuse it.
            fresh[i] = session.newOperation(ioCombineLimit);
        }
        ops = fresh;
        ended = false;
        distance = 1;
        combineDistance = 1;
        holdoff = 0;
        if (pairedReads != null) {
            pairedReads.reset();
        }
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
        fastPath = false;
        ios = 0;
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
