package org.pageio.bufmgr;

import java.util.concurrent.locks.LockSupport;
import org.pageio.api.IoHandle;
import org.pageio.bufmgr.stats.StatIo.IoContext;

/**
 * The background writer (PostgreSQL's {@code bgwriter.c} + {@code BgBufferSync}, LRU part): a
 * thread that, every {@code bgwriter_delay}, estimates how many buffers the clock sweep will claim
 * before the next round (the allocations of the last round, smoothed, times
 * {@code bgwriter_lru_multiplier}) and scans ahead of the clock hand writing back dirty buffers
 * with usage count 0 and no pins, asynchronously and combined, until that many reusable (clean,
 * durable, unpinned, usage 0) buffers lie ahead of the hand or {@code bgwriter_lru_maxpages} were written
 * this round. So backends find clean victims and seldom write. Its session's kind is
 * {@code background writer} in stat_io. {@code bgwriter_lru_maxpages = 0} disables it.
 *
 * <h2>Hibernation</h2>
 * As in PostgreSQL ({@code bgwriter.c}, {@code HIBERNATE_FACTOR}): when two rounds in a row saw no
 * allocation and wrote nothing, the writer registers itself with the pool
 * ({@link BufferPool#notifyBgWriter}) and sleeps {@link #HIBERNATE_FACTOR} × {@code bgwriter_delay}
 * instead of one delay; the next session that claims a victim by clock sweep — one needing a clean
 * buffer — unparks it (one volatile read per allocation while nobody hibernates). So an idle pool
 * costs no scanning every 200 ms.
 *
 * <p>Write errors keep the buffers dirty and are logged by the write's completion; the next round
 * (or a checkpoint) writes them again.
 */
final class BackgroundWriter implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger("org.pageio.bufmgr");

    /** PostgreSQL's: a hibernating writer sleeps this many delays unless an allocation wakes it. */
    public static final int HIBERNATE_FACTOR = 50;

    private final BufferPool pool;
    private final BgWriterSettings settings;
    private volatile boolean hibernating;
    private volatile long hibernations;
    private final Thread thread;
    private volatile boolean stop;
    private volatile long rounds;
    private volatile long written;
    private long lastAllocations;
    private double smoothedAllocations;

    /** Starts the writer thread (nothing is started when {@code bgwriter_lru_maxpages} is 0). */
    BackgroundWriter(BufferPool pool, BgWriterSettings settings) {
        this.pool = pool;
        this.settings = settings;
        this.lastAllocations = pool.allocations.get();
        this.thread = settings.lruMaxPages() == 0 ? null
                : Thread.ofPlatform().name("pageio background writer").daemon().start(this::run);
    }

    /** The settings it runs with. */
    public BgWriterSettings settings() {
        return settings;
    }

    /** Rounds done so far (for tests). */
    public long rounds() {
        return rounds;
    }

    /** Whether the writer sleeps the long sleep now, waiting for an allocation (for tests and views). */
    public boolean hibernating() {
        return hibernating;
    }

    /** Times it went into hibernation (for tests). */
    public long hibernations() {
        return hibernations;
    }

    /** Blocks whose write this writer started so far. */
    public long buffersWritten() {
        return written;
    }

    private void run() {
        try (BufferSession session = pool.openSession("background writer")) {
            BufferWriter w = session.writer();
            boolean idleBefore = false;
            while (!stop) {
                boolean idle = false;
                try {
                    idle = round(session, w);
                } catch (Exception | AssertionError e) {
                    LOG.log(System.Logger.Level.WARNING, "background writer: " + e.getMessage());
                }
                rounds++;
                written = w.blocksIssued;
                long delay = settings.delayMillis() * 1_000_000L;
                if (idle && idleBefore) {
                    // PostgreSQL's StrategyNotifyBgWriter: the next clock-sweep allocation unparks us.
                    // Registered before the sleep; an allocation between the two makes parkNanos
                    // return at once (the unpark permit is kept).
                    hibernating = true;
                    hibernations++;
                    pool.notifyBgWriter(Thread.currentThread());
                    if (pool.allocations.get() == lastAllocations && !stop) {
                        LockSupport.parkNanos(delay * HIBERNATE_FACTOR);
                    }
                    pool.notifyBgWriter(null);
                    hibernating = false;
                    idle = false; // a wake-up round must be idle twice again before the next hibernation
                } else {
                    LockSupport.parkNanos(delay);
                }
                idleBefore = idle;
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "background writer stopped: " + e.getMessage());
        }
    }

    /**
     * One round of BgBufferSync's LRU scan. Returns whether the writer may hibernate: nothing was
     * allocated since the last round and nothing written in this one.
     */
    private boolean round(BufferSession session, BufferWriter w) throws Exception {
        long allocs = pool.allocations.get();
        long recent = allocs - lastAllocations;
        lastAllocations = allocs;
        smoothedAllocations += (recent - smoothedAllocations) / 16.0; // PostgreSQL's smoothing_samples
        int n = pool.nbuffers();
        int target = (int) Math.min(n, Math.ceil(Math.max(recent, smoothedAllocations) * settings.lruMultiplier()));
        if (target == 0) {
            return recent == 0;
        }
        long wrote = lruScan(pool, w, target, settings.lruMaxPages());
        session.io().drain(); // completions logged any error; buffers stay dirty for the next round
        return recent == 0 && wrote == 0;
    }

    /**
     * The LRU scan of one round: from the clock hand, counts reusable buffers (unpinned, usage 0,
     * clean, their last write durable: a written one is reusable only once an fsync covered it,
     * which this writer does not run) and starts writes of dirty ones (unpinned, usage 0) until {@code target} reusable
     * buffers lie ahead or {@code maxPages} blocks were written. Returns the blocks written.
     */
    static long lruScan(BufferPool pool, BufferWriter w, int target, int maxPages) throws Exception {
        int n = pool.nbuffers();
        long hand = pool.clockHand();
        long startBlocks = w.blocksIssued;
        int reusable = 0;
        for (int i = 0; i < n; i++) {
            int buf = (int) Math.floorMod(hand + i, (long) n);
            long s = pool.state(buf);
            if (BufferPool.refcount(s) != 0 || BufferPool.usage(s) != 0) {
                continue;
            }
            if ((s & BufferPool.DIRTY) == 0) {
                if ((s & BufferPool.UNSYNCED) == 0 || pool.settleUnsynced(buf, s)) {
                    reusable++; // a written buffer not yet durable is not reusable: the sweep passes it over too
                }
            } else if (w.writeBack(buf, IoContext.NORMAL) == IoHandle.NO_WAIT_REF) {
                continue;
            }
            long wrote = w.blocksIssued - startBlocks;
            if (reusable + wrote >= target || wrote >= maxPages) {
                break;
            }
        }
        return w.blocksIssued - startBlocks;
    }

    /** Stops the thread and waits for it (its session drains its writes). */
    @Override
    public void close() {
        stop = true;
        if (thread != null) { // also ends a hibernation
            LockSupport.unpark(thread);
            try {
                thread.join(30_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
