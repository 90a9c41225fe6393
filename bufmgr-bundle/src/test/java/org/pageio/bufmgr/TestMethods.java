package org.pageio.bufmgr;

import java.lang.foreign.Arena;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntPredicate;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;

/** Real methods for the buffer manager's unit tests (real system calls; they differ in threads). */
final class TestMethods {

    private TestMethods() {
    }

    /**
     * Records every submission's size (the reads of one {@code submit} call) and starts each read
     * with {@link #start}. {@code bypassesPageCache} makes the pool treat it as direct I/O.
     */
    abstract static class RecordingSubmissions implements IoMethod {
        final List<Integer> submissions = new CopyOnWriteArrayList<>();
        private final String name;
        private final boolean bypassesPageCache;

        RecordingSubmissions(String name, boolean bypassesPageCache) {
            this.name = name;
            this.bypassesPageCache = bypassesPageCache;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public boolean bypassesPageCache() {
            return bypassesPageCache;
        }

        @Override
        public int submit(IoHandle[] handles, int count) {
            submissions.add(count);
            for (int i = 0; i < count; i++) {
                start(handles[i]);
            }
            return count;
        }

        abstract void start(IoHandle h);
    }

    /**
     * Performs read {@code n} (1-based, in submission order) inside {@code submit}, so it is over
     * before the stream asks for it (io_uring on cached pages, or a device faster than the
     * consumer), unless {@code delayed.test(n)}: then one of four threads performs it
     * {@code latencyNanos} later, and the consumer waits as on a real device. With
     * {@code latencyNanos} 0 every read is performed inside {@code submit}.
     */
    static final class Delaying extends RecordingSubmissions implements AutoCloseable {
        private final IntPredicate delayed;
        private final long latencyNanos;
        private final ExecutorService threads;
        private final ThreadLocal<CallState> cs = ThreadLocal.withInitial(() -> CallState.allocate(Arena.ofAuto()));
        private int submitted; // the submitting thread's only

        Delaying(String name, boolean bypassesPageCache, IntPredicate delayed, long latencyNanos) {
            super(name, bypassesPageCache);
            this.delayed = delayed;
            this.latencyNanos = latencyNanos;
            this.threads = latencyNanos == 0 ? null : Executors.newFixedThreadPool(4, r -> {
                Thread t = new Thread(r, "test device");
                t.setDaemon(true);
                return t;
            });
        }

        @Override
        void start(IoHandle h) {
            if (threads == null || !delayed.test(++submitted)) {
                h.performSynchronously(cs.get());
            } else {
                threads.execute(() -> {
                    LockSupport.parkNanos(latencyNanos);
                    h.performSynchronously(cs.get());
                });
            }
        }

        @Override
        public void close() {
            if (threads != null) {
                threads.shutdownNow();
            }
        }
    }

    /**
     * Completes every read on a pool of threads, as the worker method does (so its reads hold
     * threads), and counts the reads submitted with and without {@link IoHandle#FLAG_ADVISED}.
     */
    static final class Threaded implements IoMethod, AutoCloseable {
        private final ExecutorService pool;
        private final ThreadLocal<CallState> cs = ThreadLocal.withInitial(() -> CallState.allocate(Arena.ofAuto()));
        final java.util.concurrent.atomic.AtomicLong advisedReads = new java.util.concurrent.atomic.AtomicLong();
        final java.util.concurrent.atomic.AtomicLong otherReads = new java.util.concurrent.atomic.AtomicLong();

        Threaded(int threads) {
            pool = Executors.newFixedThreadPool(threads, r -> {
                Thread t = new Thread(r, "test io worker");
                t.setDaemon(true);
                return t;
            });
        }

        @Override
        public String name() {
            return "test-threaded";
        }

        @Override
        public boolean readsHoldThreads() {
            return true;
        }

        @Override
        public int submit(IoHandle[] handles, int count) {
            for (int i = 0; i < count; i++) {
                IoHandle h = handles[i];
                if (h.op() == IoHandle.OP_READV) {
                    ((h.flags() & IoHandle.FLAG_ADVISED) != 0 ? advisedReads : otherReads).incrementAndGet();
                }
                pool.execute(() -> h.performSynchronously(cs.get()));
            }
            return count;
        }

        @Override
        public void close() {
            pool.shutdownNow();
        }
    }

    /** Executes inline and records every read's (fd, offset, length). */
    static final class Recording implements IoMethod {
        record Io(int fd, long offset, long length, int iovcnt) {
        }

        final List<Io> ios = new CopyOnWriteArrayList<>();

        @Override
        public String name() {
            return "test-recording";
        }

        @Override
        public boolean needsSynchronousExecution(IoHandle h) {
            ios.add(new Io(h.fd(), h.offset(), h.length(), h.iovcnt()));
            return true;
        }

        @Override
        public int submit(IoHandle[] handles, int count) {
            throw new AssertionError("inline method");
        }
    }

    /**
     * Executes inline and fails the first {@code failing} fsyncs with EIO (the fault bundle's
     * offset ranges never match an fsync, whose offset and length are 0). Counts the fsyncs and the
     * bytes of the other I/O done before the first fsync.
     */
    static final class FailingFsyncs implements IoMethod {
        final AtomicInteger fsyncs = new AtomicInteger();
        final AtomicLong bytesBeforeFirstFsync = new AtomicLong(-1);
        private final AtomicLong bytes = new AtomicLong();
        private final int failing;

        FailingFsyncs(int failing) {
            this.failing = failing;
        }

        @Override
        public String name() {
            return "test-fsync-eio";
        }

        @Override
        public boolean needsSynchronousExecution(IoHandle h) {
            return true;
        }

        @Override
        public void performSynchronously(IoHandle h, CallState cs) {
            if (h.op() == IoHandle.OP_FSYNC) {
                bytesBeforeFirstFsync.compareAndSet(-1, bytes.get());
                if (fsyncs.getAndIncrement() < failing) {
                    h.complete(-Errno.EIO);
                    return;
                }
            } else {
                bytes.addAndGet(h.length());
            }
            h.performSynchronously(cs);
        }

        @Override
        public int submit(IoHandle[] handles, int count) {
            throw new AssertionError("inline method");
        }
    }
}
