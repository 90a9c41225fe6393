package org.pageio.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;

/**
 * {@code io_hang_warning}: an I/O that stays in flight longer than the setting is reported once,
 * naming its aios row, its method, the session's thread and the threads' stacks; I/Os that keep
 * completing, however many, are never reported; 0 turns the watch off.
 */
class HangWatchdogTest {

    static final int BLOCK = AioCoreTest.BLOCK;

    @TempDir
    Path dir;
    Path file;
    int fd = -1;
    Arena arena;
    final List<String> warnings = new CopyOnWriteArrayList<>();
    final Logger jul = Logger.getLogger("org.pageio.api");
    final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getMessage() != null && r.getMessage().startsWith("io_hang_warning")) {
                warnings.add(r.getMessage());
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void setUp() throws IOException {
        file = dir.resolve("rel");
        Files.write(file, Blocks.content("rel", 8));
        fd = Posix.open(file, OpenFlags.O_RDONLY, 0);
        arena = Arena.ofShared();
        jul.addHandler(capture);
    }

    @AfterEach
    void tearDown() throws IOException {
        jul.removeHandler(capture);
        Posix.close(fd, file);
        arena.close();
    }

    @Test
    void anIoStuckLongerThanTheSettingIsReportedOnceWithItsRowMethodAndStacks() throws Exception {
        TestMethods.Deferred m = new TestMethods.Deferred();
        long before = AioContext.hangWarnings();
        try (AioContext ctx = AioContext.create(m, new AioConfig(2, 4, 16))) {
            ctx.setHangWarning(TimeUnit.MILLISECONDS.toNanos(100));
            try (IoSession s = ctx.openSession("client")) {
                IoReturn ret = new IoReturn();
                IoHandle h = s.acquire();
                long gen = h.generation();
                h.setIovec(0, arena.allocate(BLOCK, 4096)).setReturn(ret).startReadv(fd, 1, 3L * BLOCK);
                IoHandle stuck = m.next(); // submitted, and the method holds it
                try {
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (warnings.isEmpty() && System.nanoTime() - deadline < 0) {
                        Thread.sleep(20);
                    }
                    Thread.sleep(400); // four more thresholds: still reported only once
                    assertEquals(1, warnings.size(), "one report for one stuck I/O: " + warnings);
                    assertEquals(before + 1, AioContext.hangWarnings());
                    String w = warnings.get(0);
                    assertTrue(w.contains("has been SUBMITTED for "), w);
                    assertTrue(w.contains("io_hang_warning = 100 ms"), w);
                    assertTrue(w.contains("on io_method=test-deferred"), w);
                    assertTrue(w.contains("index=" + h.index() + ", generation=" + gen), w);
                    assertTrue(w.contains("operation=readv, offset=" + 3L * BLOCK), w);
                    assertTrue(w.contains("(client, thread '" + Thread.currentThread().getName() + "')"), w);
                    assertTrue(w.contains("\"" + Thread.currentThread().getName() + "\" ")
                            && w.contains("org.pageio.api.HangWatchdogTest.anIoStuck"), "the session owner's stack: " + w);
                } finally {
                    TestMethods.Deferred.execute(stuck); // else closing the session waits for it forever
                }
                s.await(h, gen);
                assertEquals(IoResult.OK, ret.status());
            }
        }
    }

    @Test
    void ioThatKeepsCompletingIsNeverReportedAndZeroTurnsTheWatchOff() throws Exception {
        long before = AioContext.hangWarnings();
        try (TestMethods.Threaded m = new TestMethods.Threaded(2);
                AioContext ctx = AioContext.create(m, new AioConfig(2, 4, 16))) {
            ctx.setHangWarning(TimeUnit.SECONDS.toNanos(1)); // far longer than one read, even on a loaded machine
            try (IoSession s = ctx.openSession("client")) {
                MemorySegment buf = arena.allocate(BLOCK, 4096);
                long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2500); // reads for 2.5 thresholds
                long reads = 0;
                while (System.nanoTime() - end < 0) {
                    IoHandle h = s.acquire();
                    long gen = h.generation();
                    h.setIovec(0, buf).startReadv(fd, 1, (reads++ % 8) * BLOCK);
                    s.await(h, gen);
                }
                assertTrue(reads > 10, "reads " + reads);
            }
            assertEquals(List.of(), warnings, "I/Os that complete are not hangs");
        }
        TestMethods.Deferred d = new TestMethods.Deferred();
        try (AioContext ctx = AioContext.create(d, new AioConfig(2, 4, 16))) {
            ctx.setHangWarning(0);
            try (IoSession s = ctx.openSession("client")) {
                IoHandle h = s.acquire();
                long gen = h.generation();
                h.setIovec(0, arena.allocate(BLOCK, 4096)).startReadv(fd, 1, 0);
                IoHandle stuck = d.next();
                try {
                    Thread.sleep(300);
                    assertEquals(List.of(), warnings, "io_hang_warning = 0: no watch");
                } finally {
                    TestMethods.Deferred.execute(stuck); // else closing the session waits for it forever
                }
                s.await(h, gen);
            }
        }
        assertEquals(before, AioContext.hangWarnings());
    }
}
