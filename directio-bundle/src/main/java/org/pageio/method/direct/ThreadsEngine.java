package org.pageio.method.direct;

import java.lang.foreign.Arena;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.pageio.api.IoHandle;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;

/**
 * The engine used when io_uring is not available: a fixed set of I/O threads
 * ({@code pageio direct io N}) taking handles from one bounded queue and running the blocking
 * preadv/pwritev/fsync on descriptors already in O_DIRECT mode. Simpler than the worker bundle's
 * self-sizing pool on purpose: direct I/O never copies through the page cache, so a thread per
 * in-flight I/O of the device's depth is all it needs. A full queue runs the I/O in the issuer.
 */
final class ThreadsEngine {

    private final ArrayBlockingQueue<IoHandle> queue;
    private final Thread[] threads;
    private final Arena arena = Arena.ofShared();
    private volatile boolean running = true;

    ThreadsEngine(int nthreads, int queueCapacity) {
        queue = new ArrayBlockingQueue<>(queueCapacity);
        threads = new Thread[nthreads];
        for (int i = 0; i < nthreads; i++) {
            CallState cs = CallState.allocate(arena);
            Thread t = new Thread(() -> run(cs), "pageio direct io " + i);
            t.setDaemon(true);
            threads[i] = t;
            t.start();
        }
    }

    int threads() {
        return threads.length;
    }

    /** Queues {@code h}; when the queue is full or stopped, runs it in the caller. Never throws. */
    void submit(IoHandle h, CallState issuer) {
        if (!running || !queue.offer(h)) {
            h.performSynchronously(issuer);
        }
    }

    private void run(CallState cs) {
        while (running) {
            IoHandle h;
            try {
                h = queue.poll(200, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                continue; // stop() sets running first
            }
            if (h != null) {
                h.performSynchronously(cs); // completes; never throws
            }
        }
    }

    /** Stops the threads; what is still queued completes with -ECANCELED. */
    void stop() {
        running = false;
        for (Thread t : threads) {
            t.interrupt();
        }
        for (Thread t : threads) {
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        for (IoHandle h; (h = queue.poll()) != null; ) {
            h.complete(-Errno.ECANCELED);
        }
        for (Thread t : threads) {
            if (t.isAlive()) {
                return; // a thread stuck in a system call still uses its CallState: leave the arena to the GC-less end
            }
        }
        arena.close();
    }
}
