package org.pageio.api;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.pageio.posix.CallState;

/**
 * Real methods for the core's tests: each executes real system calls on real files, and differs
 * only in which thread completes the I/O and when, which is what the tests control.
 */
final class TestMethods {

    private TestMethods() {
    }

    /** Executes inline at staging, like {@code sync}. */
    static final class Inline implements IoMethod {
        @Override
        public String name() {
            return "test-inline";
        }

        @Override
        public boolean needsSynchronousExecution(IoHandle handle) {
            return true;
        }

        @Override
        public int submit(IoHandle[] handles, int count) {
            throw new AssertionError("submit reached for an inline method");
        }
    }

    /** Holds submitted handles until the test executes them, on the thread the test chooses. */
    static final class Deferred implements IoMethod {
        final BlockingQueue<IoHandle> submitted = new LinkedBlockingQueue<>();
        final List<Integer> batchSizes = new ArrayList<>();

        @Override
        public String name() {
            return "test-deferred";
        }

        @Override
        public synchronized int submit(IoHandle[] handles, int count) {
            batchSizes.add(count);
            for (int i = 0; i < count; i++) {
                if (handles[i].state() != IoHandle.SUBMITTED) {
                    throw new AssertionError("handle not SUBMITTED at submit: " + handles[i]);
                }
                submitted.add(handles[i]);
            }
            return count;
        }

        IoHandle next() throws InterruptedException {
            IoHandle h = submitted.poll(10, TimeUnit.SECONDS);
            if (h == null) {
                throw new AssertionError("no handle was submitted within 10 s");
            }
            return h;
        }

        /** Executes {@code h} with a real system call in the calling thread. */
        static void execute(IoHandle h) {
            try (Arena a = Arena.ofConfined()) {
                h.performSynchronously(CallState.allocate(a));
            }
        }
    }

    /** Completes every I/O on a pool of worker threads, like {@code worker}. */
    static final class Threaded implements IoMethod, AutoCloseable {
        private final ExecutorService pool;
        private final ThreadLocal<CallState> cs = ThreadLocal.withInitial(() -> CallState.allocate(Arena.ofAuto()));

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
        public int submit(IoHandle[] handles, int count) {
            for (int i = 0; i < count; i++) {
                IoHandle h = handles[i];
                pool.execute(() -> h.performSynchronously(cs.get()));
            }
            return count;
        }

        @Override
        public void close() {
            pool.shutdownNow();
        }
    }
}
