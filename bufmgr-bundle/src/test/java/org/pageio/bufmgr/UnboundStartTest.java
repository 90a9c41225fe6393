package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.method.sync.SyncIoMethod;

/**
 * A buffer manager started while no registered method can do I/O (io_uring blocked by a seccomp
 * profile, the other method bundles not started yet): it starts, reads wait at the gate, and the
 * first usable method bound serves them with the right bytes; with none bound, a read fails after
 * the gate wait timeout naming why.
 */
class UnboundStartTest {

    static final String REASON = "no I/O method is available yet (registered: io_uring (not available))";

    @TempDir
    Path dir;

    /** io_uring as a blocking seccomp profile leaves it: registered, unable to do any I/O. */
    static final class Blocked implements IoMethod {
        @Override
        public String name() {
            return "io_uring";
        }

        @Override
        public Availability availability() {
            return Availability.unavailable("io_uring_setup failed: EPERM (blocked by a seccomp profile)");
        }

        @Override
        public int submit(IoHandle[] handles, int count) {
            throw new AssertionError("an unavailable method was asked to do I/O");
        }
    }

    private static BufMgrSettings settings() {
        return new BufMgrSettings.Builder().sharedBuffers(64).maxSessions(4).build();
    }

    @Test
    void aReadWaitsAtTheGateUntilAUsableMethodIsBoundThenGetsTheBlocksBytes() throws Exception {
        try (BufferManagerCore core = BufferManagerCore.openUnbound(dir, settings(), new Blocked(), REASON)) {
            assertFalse(core.aio().methodBound());
            MethodStatus st = core.methodStatus();
            assertNull(st.method(), st.toString());
            assertEquals(REASON, st.waiting());
            SmgrRelation rel = core.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 7));
            TestPages.fill(rel, 8);

            CompletableFuture<String> read = CompletableFuture.supplyAsync(() -> {
                try (BufferSession s = core.openSession("client")) {
                    int buf = s.readBuffer(rel, 5, null);
                    try {
                        return TestPages.check(7, 5, s.page(buf));
                    } finally {
                        s.releaseBuffer(buf);
                    }
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(200);
            assertFalse(read.isDone(), "with no method bound, the read waits at the gate");

            core.aio().retireMethod(new SyncIoMethod(), TimeUnit.SECONDS.toNanos(5), null);
            core.pool().methodSwapped();
            assertNull(read.get(30, TimeUnit.SECONDS), "block 5 read through the method bound late");
            assertEquals("sync", core.methodStatus().method());
        }
    }

    @Test
    void withNoMethodEverBoundAReadFailsAfterTheGateWaitTimeoutNamingWhy() throws Exception {
        try (BufferManagerCore core = BufferManagerCore.openUnbound(dir, settings(), new Blocked(), REASON)) {
            core.aio().setGateWaitTimeout(TimeUnit.MILLISECONDS.toNanos(200));
            SmgrRelation rel = core.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 8));
            TestPages.fill(rel, 2);
            CompletableFuture<Integer> read = CompletableFuture.supplyAsync(() -> {
                try (BufferSession s = core.openSession("client")) {
                    return s.readBuffer(rel, 1, null);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            ExecutionException e = assertThrows(ExecutionException.class, () -> read.get(30, TimeUnit.SECONDS));
            String message = String.valueOf(e.getCause().getMessage()) + " / " + e.getCause().getCause();
            assertTrue(message.contains(REASON), message);
            assertEquals(0, core.pool().pinnedBuffers(), "nothing stays pinned after the failed read");
        }
    }
}
