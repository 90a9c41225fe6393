package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.inject.Inject;
import org.junit.Test;
import org.ops4j.pax.exam.util.Filter;
import org.osgi.framework.Bundle;
import org.osgi.framework.FrameworkUtil;
import org.pageio.api.AioConfig;
import org.pageio.api.AioContext;
import org.pageio.api.IoCallback;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.api.IoSession;
import org.pageio.posix.Errno;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;
import org.pageio.tck.BlockPattern;

/**
 * Stopping the worker bundle with I/O in flight (SCR deactivates the component): every handle
 * completes, with its data or with {@code -ECANCELED}, none hangs; the worker threads are gone;
 * and a session that still holds the context gets its later I/O executed inline.
 */
public class WorkerBundleStopIT extends PageioTestBase {

    @Inject
    @Filter("(io.method=worker)")
    private IoMethod worker;


    /** Holds I/O workers (not the issuer) in the shared completion until the gate opens. */
    static final class Gate implements IoCallback {
        final CountDownLatch open = new CountDownLatch(1);
        final AtomicInteger inWorkers = new AtomicInteger();

        public String name() {
            return "gate";
        }

        public long completeShared(IoHandle h, long r, int data) {
            if (Thread.currentThread().getName().startsWith("pageio io worker")) {
                inWorkers.incrementAndGet();
                try {
                    // bounded: if the test fails before it opens the gate, the session's close must not hang
                    open.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return r;
        }
    }

    @Test
    public void stoppingTheBundleWithIoInFlightCompletesOrCancelsEveryHandle() throws Exception {
        Path dir = Files.createTempDirectory("pageio-worker-stop-");
        Path file = BlockPattern.write(dir.resolve("alpha"), 64);
        int fd = Posix.open(file, OpenFlags.O_RDONLY, 0);
        Bundle bundle = FrameworkUtil.getBundle(worker.getClass());
        int n = 48;
        Gate gate = new Gate();
        try (Arena arena = Arena.ofShared()) {
            AioContext ctx = AioContext.create(worker, new AioConfig(4, 64, 16));
            try (IoSession s = ctx.openSession("stop")) {
                IoHandle[] hs = new IoHandle[n];
                long[] gens = new long[n];
                IoReturn[] rets = new IoReturn[n];
                MemorySegment[] bufs = new MemorySegment[n];
                s.enterBatchMode();
                for (int i = 0; i < n; i++) {
                    bufs[i] = arena.allocate(BlockPattern.BLOCK, 4096);
                    rets[i] = new IoReturn();
                    hs[i] = s.acquire();
                    gens[i] = hs[i].generation();
                    hs[i].setIovec(0, bufs[i]).setReturn(rets[i]).addCallback(gate, 0)
                            .startReadv(fd, 1, (long) i * BlockPattern.BLOCK);
                }
                s.exitBatchMode();
                // Normally the default pool's two workers each hold an I/O (more if it grew) and the rest
                // is queued. Two workers are not guaranteed: a worker that was woken for nothing more
                // often than it found work does not wake a peer (PostgreSQL's rule), and a batch that
                // finds the queue lock busy runs inline. What the test needs is a worker holding an I/O
                // and handles still queued when the bundle stops.
                long start = System.currentTimeMillis();
                long until = start + 10_000;
                while (System.currentTimeMillis() < until && (gate.inWorkers.get() < 1 || gauge("queueDepth") < 1
                        || (gate.inWorkers.get() < 2 && System.currentTimeMillis() - start < 2_000))) {
                    Thread.sleep(5);
                }
                assertTrue("workers holding an I/O: " + gate.inWorkers.get() + ", queued: " + gauge("queueDepth")
                        + ", workers alive: " + gauge("workersAlive") + ", inline: "
                        + (gauge("inlineQueueFull") + gauge("inlineContended")),
                        gate.inWorkers.get() >= 1 && gauge("queueDepth") >= 1);
                long inline = gauge("inlineQueueFull") + gauge("inlineContended");
                Thread opener = new Thread(() -> {
                    // Open the gate once the stop has cancelled the queue (its depth drops to 0 while the
                    // workers still hold their I/Os), not after a fixed delay: on a loaded machine the
                    // stop may take longer than any delay, and the workers would drain the whole queue.
                    long deadline = System.currentTimeMillis() + 15_000;
                    try {
                        while (gauge("queueDepth") > 0 && System.currentTimeMillis() < deadline) {
                            Thread.sleep(2);
                        }
                    } catch (Exception e) {
                        // the stats are gone with the stopped bundle: the queue was handled
                    }
                    gate.open.countDown(); // deactivation waits for running I/O: let it finish
                }, "gate opener");
                opener.start();

                long t0 = System.nanoTime();
                bundle.stop(); // SCR deactivates the component: stop accepting, cancel queued, join workers
                long stopMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                assertTrue("bundle stop took " + stopMs + " ms", stopMs < 15_000);

                int ok = 0;
                int cancelled = 0;
                for (int i = 0; i < n; i++) {
                    assertTrue("handle " + i + " is not complete after the bundle stopped: " + hs[i],
                            hs[i].generation() != gens[i] || hs[i].state() >= IoHandle.COMPLETED_SHARED);
                    s.await(hs[i], gens[i]);
                    if (rets[i].status() == IoResult.OK) {
                        assertEquals(null, BlockPattern.check("alpha", i, bufs[i]));
                        ok++;
                    } else {
                        assertEquals(rets[i].message(), -Errno.ECANCELED, IoResult.result(rets[i].result()));
                        cancelled++;
                    }
                }
                // The pool may have grown meanwhile; every worker that started an I/O finished it.
                assertEquals("the running I/Os and the inline ones completed", gate.inWorkers.get() + inline, ok);
                assertEquals("the queued ones were cancelled", n - ok, cancelled);
                assertTrue("cancelled " + cancelled, cancelled >= 1);
                Set<Thread> threads = Thread.getAllStackTraces().keySet();
                assertFalse("worker threads outlived the bundle: " + threads, threads.stream()
                        .anyMatch(t -> t.getName().startsWith("pageio io worker")));

                // The session still references the deactivated method object: its I/O runs inline.
                MemorySegment buf = arena.allocate(BlockPattern.BLOCK, 4096);
                IoReturn ret = new IoReturn();
                IoHandle h = s.acquire();
                long gen = h.generation();
                h.setIovec(0, buf).setReturn(ret).startReadv(fd, 1, 9L * BlockPattern.BLOCK);
                s.await(h, gen);
                assertEquals(ret.message(), IoResult.OK, ret.status());
                assertEquals(null, BlockPattern.check("alpha", 9, buf));
            } finally {
                gate.open.countDown(); // a failed assertion must not leave workers in the gate while closing
                ctx.close();
            }
        } finally {
            bundle.start();
            Posix.close(fd, file);
            Files.deleteIfExists(file);
            Files.deleteIfExists(dir);
        }
    }

    private long gauge(String name) throws Exception {
        Object stats = worker.getClass().getMethod("stats").invoke(worker);
        return ((Number) stats.getClass().getMethod(name).invoke(stats)).longValue();
    }
}
