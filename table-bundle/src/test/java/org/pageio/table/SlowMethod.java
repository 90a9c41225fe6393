package org.pageio.table;

import java.lang.foreign.Arena;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.posix.CallState;

/** Completes every read on a pool of threads after a delay: I/O that is still in flight when a LIMIT ends. */
final class SlowMethod implements IoMethod, AutoCloseable {
    private final ExecutorService pool;
    private final long delayMillis;
    private final ThreadLocal<CallState> cs = ThreadLocal.withInitial(() -> CallState.allocate(Arena.ofAuto()));

    SlowMethod(int threads, long delayMillis) {
        this.delayMillis = delayMillis;
        this.pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "slow test io");
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public String name() {
        return "test-slow";
    }

    @Override
    public int submit(IoHandle[] handles, int count) {
        for (int i = 0; i < count; i++) {
            IoHandle h = handles[i];
            pool.execute(() -> {
                try {
                    Thread.sleep(delayMillis);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                h.performSynchronously(cs.get());
            });
        }
        return count;
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}
