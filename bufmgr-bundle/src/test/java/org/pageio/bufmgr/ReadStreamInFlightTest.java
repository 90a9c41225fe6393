package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.util.ArrayDeque;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.api.IoSession;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.bufmgr.stream.StreamStats;
import org.pageio.posix.CallState;

/**
 * A random read stream counts a read against {@code max_ios} until the consumer has waited for it,
 * as PostgreSQL's {@code ios_in_progress}: over a device that completes in bursts, reads that are
 * over but not yet consumed still hold their slot. Structural: counts reads at the device and in
 * the completion queue, never time.
 */
@Timeout(60)
class ReadStreamInFlightTest extends PoolTestBase {

    static final int EIC = 8;
    static final int BLOCKS = 512;

    /**
     * A completion queue as io_uring's on this machine's virtual disk: every 300 µs a device thread
     * makes everything at the device ready at once (a burst); the completions are processed — the
     * read performed, for real, and the callbacks run — by whoever waits, in its own thread, as
     * {@code IoUring} reaps in the waiter. Counts the most reads at the device and the most reads
     * not yet processed (at the device or ready).
     */
    static final class BurstyQueue implements IoMethod, AutoCloseable {
        private final Object lock = new Object();
        private final ArrayDeque<IoHandle> atDevice = new ArrayDeque<>();
        private final ArrayDeque<IoHandle> ready = new ArrayDeque<>();
        private final ThreadLocal<CallState> cs = ThreadLocal.withInitial(() -> CallState.allocate(Arena.ofAuto()));
        private final Thread device;
        private volatile boolean closed;
        int maxAtDevice;
        int maxUnprocessed;
        int submittedWhileReady;

        BurstyQueue() {
            device = Thread.ofPlatform().daemon().name("bursty device").start(() -> {
                while (!closed) {
                    LockSupport.parkNanos(300_000);
                    synchronized (lock) {
                        ready.addAll(atDevice);
                        atDevice.clear();
                        lock.notifyAll();
                    }
                }
            });
        }

        @Override
        public String name() {
            return "test-bursty-queue";
        }

        @Override
        public int submit(IoHandle[] handles, int count) {
            synchronized (lock) {
                if (!ready.isEmpty()) {
                    submittedWhileReady += count;
                }
                for (int i = 0; i < count; i++) {
                    atDevice.add(handles[i]);
                }
                maxAtDevice = Math.max(maxAtDevice, atDevice.size());
                maxUnprocessed = Math.max(maxUnprocessed, atDevice.size() + ready.size());
            }
            return count;
        }

        @Override
        public boolean hasWaitOne() {
            return true;
        }

        private static boolean finished(IoHandle h, long generation) {
            return h.state() >= IoHandle.COMPLETED_IO || h.generation() != generation;
        }

        /** Processes ready completions until {@code h} is finished, blocking while none is ready. */
        @Override
        public void waitOne(IoHandle h, long generation) {
            while (!finished(h, generation)) {
                waitProgress(h, generation, Integer.MAX_VALUE);
            }
        }

        @Override
        public void waitProgress(IoHandle h, long generation, int max) {
            int n = 0;
            for (;;) {
                IoHandle next;
                synchronized (lock) {
                    while (ready.isEmpty() && !finished(h, generation) && n == 0) {
                        try {
                            lock.wait();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            return;
                        }
                    }
                    if (n >= max || ready.isEmpty()) {
                        return;
                    }
                    next = ready.poll();
                }
                next.performSynchronously(cs.get());
                n++;
            }
        }

        @Override
        public void checkOne(IoHandle h, long generation) {
            for (;;) {
                IoHandle next;
                synchronized (lock) {
                    next = ready.poll();
                }
                if (next == null) {
                    return;
                }
                next.performSynchronously(cs.get());
            }
        }

        @Override
        public int readyCompletions(IoSession session) {
            synchronized (lock) {
                return ready.size();
            }
        }

        @Override
        public void close() throws InterruptedException {
            closed = true;
            device.join();
        }
    }

    /** Every other block of a fresh pool, out of order (nothing combines), through a random stream. */
    StreamStats scan(BurstyQueue m, int ioMaxConcurrency, int flags) throws Exception {
        closeLast.add(m);
        BufMgrSettings.Builder b = small().sharedBuffers(2048).maxSessions(4);
        b.ioMaxConcurrency = ioMaxConcurrency;
        pool(m, b.build());
        SmgrRelation rel = relation(62001, 2L * BLOCKS);
        long[] order = new long[BLOCKS];
        for (int i = 0; i < BLOCKS; i++) {
            order[i] = 2L * ((i * 37L) % BLOCKS);
        }
        int[] next = {0};
        try (BufferSession s = pool.openSession("client");
                ReadStream stream = new ReadStream(s, rel, st -> next[0] < BLOCKS ? order[next[0]++] : ReadStream.END, flags,
                        null, new ReadStream.Options(EIC, ReadStream.Options.INHERIT, null))) {
            for (int i = 0; i < BLOCKS; i++) {
                int buf = stream.next();
                assertNull(TestPages.check(62001, order[i], s.page(buf)), "block " + order[i]);
                s.releaseBuffer(buf);
            }
            assertEquals(-1, stream.next());
            assertEquals(EIC, stream.maxIos());
            return stream.stats();
        }
    }

    @Test
    void aRandomStreamCountsReadsUntilConsumed() throws Exception {
        BurstyQueue m = new BurstyQueue();
        StreamStats st = scan(m, 4 * EIC, ReadStream.USE_BATCHING);
        assertEquals(EIC, st.maxIos());
        assertTrue(m.maxUnprocessed <= EIC, "PostgreSQL's count: at most max_ios reads unconsumed: " + m.maxUnprocessed);
    }
}
