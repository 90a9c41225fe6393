package org.pageio.bufmgr;

import java.lang.foreign.Arena;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.posix.CallState;

/** Real methods for the buffer manager's unit tests (real system calls; they differ in threads). */
final class TestMethods {

    private TestMethods() {
    }

    /** Completes every read on a pool of threads, as the worker method does. */
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
}
