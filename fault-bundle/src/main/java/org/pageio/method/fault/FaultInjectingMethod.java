package org.pageio.method.fault;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.pageio.api.ForwardingIoMethod;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.api.IoSession;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;
import org.pageio.posix.Iovec;
import org.pageio.posix.Posix;

/**
 * An I/O method that wraps a real one and spoils chosen I/Os ({@link FaultPlan}): EIO, short
 * reads, ENOSPC on writes, delays, out-of-order completions. Everything the plan does not match
 * goes to the delegate untouched, so the delegate's own threads, rings and per-session state work
 * as usual (the delegate's session state is the session's {@code methodState()}).
 *
 * <p>How: every I/O meets the plan exactly once, either in {@link #performSynchronously} (inline
 * I/O) or in {@link #submit}; a matching one is taken out of the delegate's hands and completed
 * here — at once, after a delay (on a timer thread when submitted), or in reverse order.
 * Waiting on such an I/O never asks the delegate (an io_uring ring would block for a completion
 * that will never come from the kernel).
 *
 * <p>Thread-safe. Counters tell tests what was injected and how many I/Os passed.
 */
public final class FaultInjectingMethod extends ForwardingIoMethod implements AutoCloseable {

    /** The name it registers under: {@code io.method=fault}. */
    public static final String NAME = "fault";

    private final IoMethod delegate;
    /**
     * The plan in force and how often each of its rules fired, replaced whole by {@link #setPlan}.
     * Volatile: read once per I/O by whichever thread submits or executes it.
     */
    private volatile Armed armed;
    private final SplittableRandom random;
    /** I/Os taken out of the delegate's hands, until completed; the value is the rule, per I/O. */
    private final Map<IoHandle, Taken> taken = new ConcurrentHashMap<>();

    private record Taken(FaultPlan.Rule rule) {
    }

    private record Armed(FaultPlan plan, AtomicInteger[] fired) {
        static Armed of(FaultPlan plan) {
            AtomicInteger[] fired = new AtomicInteger[plan.rules().size()];
            for (int i = 0; i < fired.length; i++) {
                fired[i] = new AtomicInteger();
            }
            return new Armed(plan, fired);
        }
    }

    private final ThreadLocal<IoHandle[]> scratch = ThreadLocal.withInitial(() -> new IoHandle[IoSession.SUBMIT_BATCH_SIZE]);
    private final ThreadLocal<CallState> callState = ThreadLocal.withInitial(() -> CallState.allocate(Arena.ofAuto()));
    private final ScheduledExecutorService timer;
    private final AtomicLong injected = new AtomicLong();
    private final AtomicLong passed = new AtomicLong();

    public FaultInjectingMethod(IoMethod delegate, FaultPlan plan, long seed) {
        this.delegate = delegate;
        this.armed = Armed.of(plan);
        this.random = new SplittableRandom(seed);
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "pageio fault injector");
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public IoMethod delegate() {
        return delegate;
    }

    /**
     * Replaces the plan, live: I/Os that meet the plan from now on meet {@code plan}, with its
     * rules' {@code times} counted afresh; I/Os already spoiled finish as they were. Any thread.
     */
    public void setPlan(FaultPlan plan) {
        armed = Armed.of(java.util.Objects.requireNonNull(plan, "plan"));
    }

    /** The plan in force. */
    public FaultPlan plan() {
        return armed.plan();
    }

    /** I/Os spoiled so far. */
    public long injected() {
        return injected.get();
    }

    /** I/Os handed to the delegate untouched. */
    public long passed() {
        return passed.get();
    }

    @Override
    public String name() {
        return NAME;
    }

    /** Inline I/O: spoiled here, in the issuer, if the plan matches (REORDER has no batch: runs as is). */
    @Override
    public void performSynchronously(IoHandle h, CallState cs) {
        FaultPlan.Rule rule = match(h);
        if (rule == null || rule.kind() == FaultPlan.Kind.REORDER) {
            passed.incrementAndGet();
            delegate.performSynchronously(h, cs);
            return;
        }
        Taken t = new Taken(rule);
        taken.put(h, t);
        if (rule.kind() == FaultPlan.Kind.DELAY) {
            injected.incrementAndGet();
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(rule.delayMillis()));
            finish(h, t, perform(h));
        } else {
            spoil(h, t);
        }
    }

    private FaultPlan.Rule match(IoHandle h) {
        Armed a = armed;
        var rules = a.plan().rules();
        AtomicInteger[] fired = a.fired();
        for (int i = 0; i < rules.size(); i++) {
            FaultPlan.Rule r = rules.get(i);
            if (!opMatches(r.op(), h.op())) {
                continue;
            }
            boolean wholeFile = h.op() == IoHandle.OP_FSYNC || h.op() == IoHandle.OP_FDATASYNC; // covers every byte
            if (!wholeFile && (h.offset() + h.length() <= r.fromOffset() || h.offset() >= r.toOffset())) {
                continue;
            }
            if (r.targetContains() != null && !h.target().describe(h.targetData()).contains(r.targetContains())) {
                continue;
            }
            if (r.fraction() < 1) {
                boolean yes;
                synchronized (random) {
                    yes = random.nextDouble() < r.fraction();
                }
                if (!yes) {
                    continue;
                }
            }
            if (r.maxCount() >= 0 && fired[i].incrementAndGet() > r.maxCount()) {
                continue;
            }
            return r;
        }
        return null;
    }

    private static boolean opMatches(FaultPlan.Op op, int handleOp) {
        return switch (op) {
            case ANY -> true;
            case READ -> handleOp == IoHandle.OP_READV;
            case WRITE -> handleOp == IoHandle.OP_WRITEV;
            case FSYNC -> handleOp == IoHandle.OP_FSYNC || handleOp == IoHandle.OP_FDATASYNC;
        };
    }

    @Override
    public int submit(IoHandle[] handles, int count) {
        IoHandle[] rest = scratch.get();
        int n = 0;
        int reordered = 0;
        for (int i = 0; i < count; i++) {
            IoHandle h = handles[i];
            FaultPlan.Rule rule = match(h);
            Taken t = null;
            if (rule != null) {
                t = new Taken(rule);
                taken.put(h, t);
            }
            if (t == null) {
                rest[n++] = h;
            } else if (t.rule().kind() == FaultPlan.Kind.REORDER) {
                reordered++;
            } else {
                spoil(h, t);
            }
        }
        if (reordered > 0) {
            completeInReverse(handles, count);
        }
        if (n > 0) {
            passed.addAndGet(n);
            delegate.submit(rest, n);
        }
        return count;
    }

    private void spoil(IoHandle h, Taken t) {
        injected.incrementAndGet();
        switch (t.rule().kind()) {
            case EIO -> finish(h, t, -Errno.EIO);
            case ENOSPC -> finish(h, t, h.op() == IoHandle.OP_WRITEV ? -Errno.ENOSPC : perform(h));
            case SHORT_READ -> {
                long r = perform(h);
                finish(h, t, r <= 0 ? (int) r : (int) Math.min(r, (h.length() / 2) & ~4095L));
            }
            case SHORT_WRITE -> finish(h, t, h.op() != IoHandle.OP_WRITEV ? perform(h)
                    : h.length() <= 4096 ? -Errno.ENOSPC : writePrefix(h, Math.min(h.length() / 2, h.length() - 4096) & ~4095L));
            case TORN_WRITE -> {
                if (h.op() != IoHandle.OP_WRITEV) {
                    finish(h, t, perform(h));
                } else {
                    long r = writeTorn(h);
                    finish(h, t, r < 0 ? (int) r : (int) h.length()); // the lie a crash leaves behind
                }
            }
            case DELAY -> timer.schedule(() -> finish(h, t, perform(h)), t.rule().delayMillis(), TimeUnit.MILLISECONDS);
            default -> throw new IllegalStateException("unhandled fault " + t.rule());
        }
    }

    /** Performs the batch's REORDER I/Os now and completes them last first. */
    private void completeInReverse(IoHandle[] handles, int count) {
        int[] results = new int[count];
        Taken[] mine = new Taken[count];
        for (int i = 0; i < count; i++) {
            Taken t = taken.get(handles[i]);
            if (t != null && t.rule().kind() == FaultPlan.Kind.REORDER) {
                injected.incrementAndGet();
                mine[i] = t;
                results[i] = perform(handles[i]);
            }
        }
        for (int i = count - 1; i >= 0; i--) {
            if (mine[i] != null) {
                finish(handles[i], mine[i], results[i]);
            }
        }
    }

    /**
     * Writes the first {@code bytes} bytes of write {@code h} (its iovecs cut there) at its offset;
     * returns what pwritev returned. Allocates: a fault's path, not the I/O path.
     */
    private int writePrefix(IoHandle h, long bytes) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment iovs = Iovec.allocate(a, h.iovcnt());
            int n = 0;
            long left = bytes;
            for (int i = 0; i < h.iovcnt() && left > 0; i++) {
                long len = Math.min(left, Iovec.length(h.iovecs(), i));
                Iovec.set(iovs, n++, Iovec.base(h.iovecs(), i), len);
                left -= len;
            }
            return (int) Posix.pwritev(callState.get(), h.fd(), iovs, n, h.offset());
        }
    }

    /**
     * A torn write: the write's first page reaches the file only in its first 4 KiB, every later
     * page whole. Returns the last pwritev's result (negative: -errno). So one page is torn, as by a
     * crash during its write, and no page the write carried is silently left stale. Allocates: a
     * fault's path.
     */
    private int writeTorn(IoHandle h) {
        int r = writePrefix(h, Math.min(4096, h.length()));
        if (r < 0 || h.length() <= 8192) {
            return r;
        }
        try (Arena a = Arena.ofConfined()) { // the rest, from the second page on
            MemorySegment iovs = Iovec.allocate(a, h.iovcnt());
            int n = 0;
            long skip = 8192;
            for (int i = 0; i < h.iovcnt(); i++) {
                long base = Iovec.base(h.iovecs(), i);
                long len = Iovec.length(h.iovecs(), i);
                long cut = Math.min(skip, len);
                skip -= cut;
                if (len > cut) {
                    Iovec.set(iovs, n++, base + cut, len - cut);
                }
            }
            return (int) Posix.pwritev(callState.get(), h.fd(), iovs, n, h.offset() + 8192);
        }
    }

    private int perform(IoHandle h) {
        CallState cs = callState.get();
        long r = switch (h.op()) {
            case IoHandle.OP_READV -> Posix.preadv(cs, h.fd(), h.iovecs(), h.iovcnt(), h.offset());
            case IoHandle.OP_WRITEV -> Posix.pwritev(cs, h.fd(), h.iovecs(), h.iovcnt(), h.offset());
            case IoHandle.OP_FSYNC -> Posix.fsync(cs, h.fd());
            case IoHandle.OP_FDATASYNC -> Posix.fdatasync(cs, h.fd());
            default -> -Errno.EINVAL;
        };
        return (int) r;
    }

    /**
     * Completes first, then forgets: a waiter that still finds the handle here polls its state
     * instead of asking the delegate. Removal is by value, because once completed the handle may
     * be reused and taken again.
     */
    private void finish(IoHandle h, Taken t, int raw) {
        h.complete(raw);
        taken.remove(h, t);
    }

    /**
     * Polls, and never hands a blocking wait to the delegate: whether the handle is ours (completed
     * by this class, maybe on the timer thread) or the delegate's can change while we wait — a
     * handle that just completed here may already carry the session's next I/O, given to the
     * delegate, while its old entry in {@code taken} is still being removed; a blocking wait chosen
     * from a stale look-up hung the fault tests with io_method=direct (io_uring engine). Each round
     * looks again and lets the delegate reap ({@link IoMethod#checkOne}) when the I/O is its own.
     * A test decorator: polling every 50 µs costs nothing that matters here.
     */
    @Override
    public void waitOne(IoHandle h, long generation) {
        while (h.generation() == generation && h.state() < IoHandle.COMPLETED_IO) {
            if (!taken.containsKey(h)) {
                delegate.checkOne(h, generation);
                if (h.generation() != generation || h.state() >= IoHandle.COMPLETED_IO) {
                    return;
                }
            }
            LockSupport.parkNanos(50_000);
        }
    }

    @Override
    public void checkOne(IoHandle h, long generation) {
        if (!taken.containsKey(h)) {
            delegate.checkOne(h, generation);
        }
    }

    /** Stops the timer thread; delayed I/Os not yet run are performed at once. */
    @Override
    public void close() {
        for (Runnable r : timer.shutdownNow()) {
            r.run();
        }
    }
}
