package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.BufMgrSettings.HugePages;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.posix.Errno;
import org.pageio.posix.PosixException;

/**
 * shared_buffers the machine cannot map: the rule ({@code MemAvailable}, the commit limit under
 * {@code vm.overcommit_memory = 2}, the pool being replaced), the one-line refusal, a start refused
 * before mmap, and the message of an mmap that really fails.
 */
class SharedMemoryTest {

    private static final long GB = 1L << 30;

    @TempDir
    Path dir;

    static final List<String> MEMINFO = List.of(
            "MemTotal:       24683784 kB",
            "MemFree:        20000000 kB",
            "MemAvailable:   20971520 kB", // 20 GB
            "Cached:           690988 kB",
            "CommitLimit:    12582912 kB", // 12 GB
            "Committed_AS:    4194304 kB"); // 4 GB

    @Test
    void theLimitIsMemAvailablePlusThePoolBeingReplacedAndTheCommitLimitWithoutOvercommit() {
        SharedMemory.Limit heuristic = SharedMemory.limit(MEMINFO, "0", 0);
        assertEquals(20 * GB, heuristic.bytes());
        assertEquals("MemAvailable 20 GB; vm.overcommit_memory = 0", heuristic.basis());
        SharedMemory.Limit replacing = SharedMemory.limit(MEMINFO, "1", GB / 8);
        assertEquals(20 * GB + GB / 8, replacing.bytes(), "the pool in use is unmapped before the new one is mapped");
        assertEquals("MemAvailable 20 GB + 128 MB of the pool in use; vm.overcommit_memory = 1", replacing.basis());
        SharedMemory.Limit strict = SharedMemory.limit(MEMINFO, "2", GB / 8);
        assertEquals(8 * GB + GB / 8, strict.bytes(), "CommitLimit - Committed_AS bounds it under overcommit_memory = 2");
        assertTrue(strict.basis().endsWith("vm.overcommit_memory = 2, CommitLimit - Committed_AS 8 GB"), strict.basis());
        assertEquals(Long.MAX_VALUE, SharedMemory.limit(List.of("MemTotal: 1 kB"), "0", 0).bytes(), "no figure, no limit");
    }

    @Test
    void aPoolAboveTheLimitIsRefusedInOneLineNamingTheSizeTheLimitAndTheFix() {
        SharedMemory.Limit limit = SharedMemory.limit(MEMINFO, "0", 0);
        assertNull(SharedMemory.refusal(16384, limit));
        assertNull(SharedMemory.refusal((int) (20 * GB / 8192), limit), "exactly what is available fits");
        assertEquals("shared_buffers = 134217728 (1 TB) needs more memory than this machine can give now: at most 20 GB"
                + " (MemAvailable 20 GB; vm.overcommit_memory = 0); lower shared_buffers, e.g. pageio:set shared_buffers 5GB"
                + " (at most 20GB here)", SharedMemory.refusal(1 << 27, limit));
        assertTrue(SharedMemory.refusal((int) (20 * GB / 8192) + 1, limit).startsWith("shared_buffers = 2621441 (20 GB) "));
        assertEquals("7.9 GB", SharedMemory.size(8 * GB - 100 * (1L << 20)));
        assertEquals("384MB", SharedMemory.setting(384L << 20));
    }

    @Test
    void aStartOfAPoolTheMachineCannotGiveIsRefusedBeforeMmapAndTheNextStartWorks() {
        // more than any machine this runs on has: refused before anything is mapped
        BufMgrSettings huge = new BufMgrSettings.Builder().sharedBuffers(1 << 27).maxSessions(4).build();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> BufferManagerCore.open(dir, huge, new SyncIoMethod()));
        String m = e.getMessage();
        assertTrue(m.startsWith("could not map anonymous shared memory: ENOMEM (refused before mmap): shared_buffers = 134217728"
                + " (1 TB) needs more memory than this machine can give now: at most "), m);
        assertTrue(m.contains("; lower shared_buffers, e.g. pageio:set shared_buffers "), m);
        assertEquals(1, m.lines().count(), m);
        assertNull(e.getCause(), "one line, no stack trace of a cause");
        // nothing was left behind: the same data directory serves a pool that fits
        try (BufferManagerCore core = BufferManagerCore.open(dir, new BufMgrSettings.Builder().sharedBuffers(64).maxSessions(4)
                .build(), new SyncIoMethod())) {
            assertEquals(64, core.pool().settings().sharedBuffers());
        }
    }

    @Test
    void anMmapThatFailsIsReportedWithTheSettingTheSizeTheErrnoAndTheFix() {
        PosixException enomem;
        try (Arena arena = Arena.ofShared()) {
            // 1 PB: beyond the 128 TB of user address space, so mmap fails whatever the overcommit policy
            enomem = assertThrows(PosixException.class, () -> PoolMemory.map(1L << 50, HugePages.TRY, arena));
        }
        assertEquals(Errno.ENOMEM, enomem.errno(), enomem.getMessage());
        String m = BufferPool.mapFailure(1 << 27, enomem, SharedMemory.limit(MEMINFO, "0", 0));
        assertTrue(m.startsWith("could not map anonymous shared memory: shared_buffers = 134217728 (1 TB): mmap("), m);
        assertTrue(m.contains("ENOMEM"), m);
        assertTrue(m.endsWith("; this machine can give at most 20 GB now (MemAvailable 20 GB; vm.overcommit_memory = 0);"
                + " lower shared_buffers, e.g. pageio:set shared_buffers 5GB (at most 20GB here)"), m);
        assertEquals(1, m.lines().count(), m);
    }
}
