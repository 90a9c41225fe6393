package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.Test;
import org.pageio.api.AioException;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.api.IoSession;
import org.pageio.api.IoTarget;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo.Column;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.method.fault.FaultPlan;
import org.pageio.posix.Errno;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;
import org.pageio.tck.FaultRig;
import org.pageio.tck.PatternRelation;

/**
 * The buffer manager and read streams under injected faults, over every method this machine has
 * (sync, worker, io_uring, direct, posix_aio; none may be missing or unavailable): errors reach the reader
 * naming relation, block and errno; a failed buffer is not VALID, so a later read retries and
 * succeeds; partial reads are re-read; nothing hangs (each case runs under a timeout); no pin,
 * session or handle is left; every byte returned is checked.
 */
public class FaultInjectionIT extends EveryMethodTestBase {

    static final long CASE_TIMEOUT_SECONDS = 90;

    interface Case {
        void run(String name, IoMethod delegate) throws Exception;
    }

    /** Runs {@code c} over every method, each under a timeout; a hang is a failure naming the method. */
    void overEveryMethod(Case c) throws Exception {
        Map<String, IoMethod> methods = methods();
        ExecutorService runner = Executors.newSingleThreadExecutor();
        try {
            for (Map.Entry<String, IoMethod> m : methods.entrySet()) {
                IoMethod.Availability a = m.getValue().availability();
                assertTrue("io_method=" + m.getKey() + " must be available here: " + a.cause(), a.available());
                Future<?> f = runner.submit(() -> {
                    c.run(m.getKey(), m.getValue());
                    return null;
                });
                try {
                    f.get(CASE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    throw new AssertionError("io_method=" + m.getKey() + ": hung for " + CASE_TIMEOUT_SECONDS + " s", e);
                } catch (java.util.concurrent.ExecutionException e) {
                    throw new AssertionError("io_method=" + m.getKey() + ": " + e.getCause(), e.getCause());
                }
            }
        } finally {
            runner.shutdownNow();
        }
    }

    static void assertPage(String method, long rel, long block, MemorySegment page) {
        assertEquals(method + ": wrong bytes in block " + block + " of relation " + rel, 0,
                PatternRelation.wrongBytes(rel, block, page));
    }

    @Test
    public void eioNamesRelationBlockAndErrnoAndALaterReadRetries() throws Exception {
        overEveryMethod((name, delegate) -> {
            try (FaultRig rig = new FaultRig(delegate, FaultPlan.parse("eio read file=pg_default/62000 blocks=5 times=1"),
                    FaultRig.small().build())) {
                SmgrRelation rel = rig.relation(62000, 10);
                try (BufferSession s = rig.pool.openSession("client")) {
                    AioException e = assertThrows(AioException.class, () -> s.readBuffer(rel, 5, null));
                    assertEquals(name + ": " + e.getMessage(), Errno.EIO, e.errno());
                    assertTrue(name + ": " + e.getMessage(), e.getMessage().contains("EIO") && e.getMessage().contains("block 5")
                            && e.getMessage().contains("pg_default/62000"));
                    assertEquals(0, s.pinnedCount());
                    int buf = s.readBuffer(rel, 5, null); // not VALID after the error: read again, and right
                    assertPage(name, 62000, 5, s.page(buf));
                    s.releaseBuffer(buf);
                }
                assertEquals(1, rig.method.injected());
                rig.assertNothingLeaked();
            }
        });
    }

    @Test
    public void eioInTheMiddleOfAStreamStopsItThereAndTheNextStreamReadsEverything() throws Exception {
        overEveryMethod((name, delegate) -> {
            try (FaultRig rig = new FaultRig(delegate, FaultPlan.parse("eio read file=pg_default/62001 blocks=40 times=1"),
                    FaultRig.small().build())) {
                SmgrRelation rel = rig.relation(62001, 100);
                try (BufferSession s = rig.pool.openSession("client")) {
                    long delivered;
                    try (ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 100), ReadStream.FULL, null)) {
                        IOException e = assertThrows(IOException.class, () -> {
                            for (long b = 0; b < 100; b++) {
                                int buf = stream.next();
                                assertPage(name, 62001, b, s.page(buf));
                                s.releaseBuffer(buf);
                            }
                        });
                        assertTrue(name + ": " + e.getMessage(), e.getMessage().contains("EIO")
                                && e.getMessage().contains("pg_default/62001") && e.getMessage().contains("block"));
                        delivered = stream.stats().buffersReturned();
                    }
                    assertTrue(name + ": no buffer past the failed read was returned: " + delivered, delivered <= 40);
                    s.io().drain();
                    assertEquals(0, s.pinnedCount());
                    assertEquals(0, s.io().inFlightCount());
                    try (ReadStream again = new ReadStream(s, rel, ReadStream.blockRange(0, 100), ReadStream.FULL, null)) {
                        for (long b = 0; b < 100; b++) {
                            int buf = again.next();
                            assertPage(name, 62001, b, s.page(buf));
                            s.releaseBuffer(buf);
                        }
                        assertEquals(-1, again.next());
                    }
                }
                rig.assertNothingLeaked();
            }
        });
    }

    @Test
    public void shortReadsAreReadAgainUntilEveryBlockArrived() throws Exception {
        overEveryMethod((name, delegate) -> {
            try (FaultRig rig = new FaultRig(delegate, FaultPlan.parse("short_read read file=pg_default/62002 times=3"),
                    FaultRig.small().build())) {
                SmgrRelation rel = rig.relation(62002, 64);
                try (BufferSession s = rig.pool.openSession("client");
                        ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 64), ReadStream.FULL, null)) {
                    for (long b = 0; b < 64; b++) {
                        int buf = stream.next();
                        assertPage(name, 62002, b, s.page(buf));
                        s.releaseBuffer(buf);
                    }
                    assertEquals(-1, stream.next());
                }
                assertEquals(3, rig.method.injected());
                long blocksRead = rig.total(Column.READ_BYTES) / PatternRelation.BLCKSZ;
                assertTrue(name + ": the missing halves were asked again: " + blocksRead + " blocks read", blocksRead > 64);
                assertEquals(name + ": stat_io reads == I/Os the method saw", rig.method.injected() + rig.method.passed(),
                        rig.total(Column.READS));
                rig.assertNothingLeaked();
            }
        });
    }

    @Test
    public void aShortReadOfLessThanOneBlockIsAnErrorAndALaterReadSucceeds() throws Exception {
        overEveryMethod((name, delegate) -> {
            try (FaultRig rig = new FaultRig(delegate, FaultPlan.parse("short_read file=pg_default/62003 blocks=2 times=1"),
                    FaultRig.small().build())) {
                SmgrRelation rel = rig.relation(62003, 10);
                try (BufferSession s = rig.pool.openSession("client")) {
                    AioException e = assertThrows(AioException.class, () -> s.readBuffer(rel, 2, null));
                    assertTrue(name + ": " + e.getMessage(), e.getMessage().contains("read only 4096 of 8192 bytes")
                            && e.getMessage().contains("block 2"));
                    assertEquals(0, s.pinnedCount());
                    int buf = s.readBuffer(rel, 2, null);
                    assertPage(name, 62003, 2, s.page(buf));
                    s.releaseBuffer(buf);
                }
                rig.assertNothingLeaked();
            }
        });
    }

    @Test
    public void enospcOnAWriteIsAnErrorAndNothingIsWritten() throws Exception {
        overEveryMethod((name, delegate) -> {
            try (FaultRig rig = new FaultRig(delegate, FaultPlan.parse("enospc write"), FaultRig.small().build());
                    Arena arena = Arena.ofConfined()) {
                Path file = rig.dir.resolve("target-file");
                Files.write(file, new byte[0]);
                int fd = Posix.open(file, OpenFlags.O_RDWR, 0);
                try (IoSession s = rig.aio.openSession("writer")) {
                    MemorySegment page = arena.allocate(PatternRelation.BLCKSZ, 4096);
                    PatternRelation.page(1, 0, page);
                    IoReturn ret = new IoReturn();
                    IoHandle h = s.acquire();
                    long gen = h.generation();
                    h.setIovec(0, page).setReturn(ret).setTarget(IoTarget.file(file), 0).startWritev(fd, 1, 0);
                    s.await(h, gen);
                    assertEquals(name + ": " + ret.message(), IoResult.ERROR, ret.status());
                    assertEquals(-Errno.ENOSPC, IoResult.result(ret.result()));
                    assertTrue(name + ": " + ret.message(), ret.message().contains("ENOSPC") && ret.message().contains("target-file"));
                } finally {
                    Posix.close(fd, file);
                }
                assertEquals(name + ": nothing written", 0, Files.size(file));
                rig.assertNothingLeaked();
            }
        });
    }

    @Test
    public void delaysAndOutOfOrderCompletionsNeverReturnAWrongByte() throws Exception {
        overEveryMethod((name, delegate) -> {
            // reads of at most 2 blocks, so that there are hundreds of them even with io_method=sync (where
            // REORDER has no batch and passes); half of them delayed or reordered
            FaultPlan plan = FaultPlan.parse("delay read delay=1 fraction=0.5", "reorder read fraction=0.5");
            try (FaultRig rig = new FaultRig(delegate, plan, FaultRig.small().sharedBuffers(48).maxSessions(4).segmentBlocks(50)
                    .ioCombineLimit(2).build())) {
                SmgrRelation rel = rig.relation(62004, 300);
                List<Future<?>> all = new ArrayList<>();
                ExecutorService pool = Executors.newFixedThreadPool(3);
                try {
                    for (int t = 0; t < 3; t++) {
                        long first = t * 50L;
                        all.add(pool.submit(() -> {
                            try (BufferSession s = rig.pool.openSession("client");
                                    ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(first, 300 - first), 0, null)) {
                                for (long b = first; b < 300; b++) {
                                    int buf = stream.next();
                                    assertPage(name, 62004, b, s.page(buf));
                                    s.releaseBuffer(buf);
                                }
                            }
                            return null;
                        }));
                    }
                    for (Future<?> f : all) {
                        f.get(60, TimeUnit.SECONDS);
                    }
                } finally {
                    pool.shutdownNow();
                }
                assertTrue(name + ": faults were injected: " + rig.method.injected(), rig.method.injected() > 30);
                assertEquals(name + ": stat_io reads == I/Os the method saw", rig.method.injected() + rig.method.passed(),
                        rig.total(Column.READS));
                rig.assertNothingLeaked();
            }
        });
    }

    @Test
    public void noneOfTheseFaultsLeavesADamagedBufferValid() throws Exception {
        // EIO on every read of block 7: the buffer must never become VALID, however often it is asked for
        overEveryMethod((name, delegate) -> {
            try (FaultRig rig = new FaultRig(delegate, FaultPlan.parse("eio file=pg_default/62005 blocks=7"),
                    FaultRig.small().build())) {
                SmgrRelation rel = rig.relation(62005, 10);
                try (BufferSession s = rig.pool.openSession("client")) {
                    for (int i = 0; i < 3; i++) {
                        AioException e = assertThrows(AioException.class, () -> s.readBuffer(rel, 7, null));
                        assertEquals(Errno.EIO, e.errno());
                    }
                    int buf = s.readBuffer(rel, 6, null);
                    assertPage(name, 62005, 6, s.page(buf));
                    s.releaseBuffer(buf);
                }
                assertEquals(name + ": one I/O per attempt, none served from a buffer", 3, rig.method.injected());
                rig.assertNothingLeaked();
            }
        });
    }
}
