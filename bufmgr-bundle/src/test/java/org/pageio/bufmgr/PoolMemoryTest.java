package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.pageio.bufmgr.BufMgrSettings.HugePages;
import org.pageio.method.sync.SyncIoMethod;

/** huge_pages on real mappings: what the kernel gave, read back from /proc/self/smaps. */
class PoolMemoryTest extends PoolTestBase {
    private static final long MB = 1L << 20;

    /** Whether this kernel may give transparent huge pages (the file exists and does not say never). */
    static boolean thpAllowed() throws IOException {
        return Files.exists(PoolMemory.THP_ENABLED) && !Files.readString(PoolMemory.THP_ENABLED).contains("[never]");
    }

    @Test
    void tryBacksThePoolWithHugePagesAndItIsZeroedAlignedAndUnmappedWithTheArena() throws Exception {
        long start;
        try (Arena arena = Arena.ofShared()) {
            PoolMemory m = PoolMemory.map(4 * MB + 8192, HugePages.TRY, arena);
            MemorySegment p = m.pages;
            start = p.address();
            assertEquals(4 * MB + 8192, p.byteSize());
            assertEquals(0, start % PoolMemory.HUGE_PAGE, "aligned to 2 MB");
            assertEquals(0, p.get(ValueLayout.JAVA_LONG, 4 * MB));
            p.set(ValueLayout.JAVA_LONG, 4 * MB, 42);
            assertEquals(42, p.get(ValueLayout.JAVA_LONG, 4 * MB));
            if (thpAllowed()) {
                // the tail (8 kB) asks for a third 2 MB page: the advised part is rounded up
                assertEquals("on: 6 MB of 6 MB in 2 MB pages", m.status());
                assertEquals(6 * MB, PoolMemory.hugeBytes(Files.readAllLines(PoolMemory.SMAPS), start));
            } else {
                assertTrue(m.status().startsWith("off: 0 kB of 6 MB in 2 MB pages ("), m.status());
            }
        }
        assertFalse(mapped(start), "closing the arena unmapped the pool");
    }

    @Test
    void offKeepsNormalPagesEvenWhereTheKernelWouldGiveHugeOnes() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            PoolMemory m = PoolMemory.map(4 * MB, HugePages.OFF, arena);
            assertEquals("off: huge_pages = off", m.status());
            assertEquals(0, m.hugeBytes(), "MADV_NOHUGEPAGE: no 2 MB page in the pool");
            assertTrue(mapped(m.pages.address()), "populated: the mapping is there with its own smaps entry");
        }
    }

    @Test
    void onStartsWhenTheKernelGivesHugePagesAndOtherwiseSaysWhyAndTheWayOut() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            if (thpAllowed()) {
                assertEquals("on: 2 MB of 2 MB in 2 MB pages", PoolMemory.map(2 * MB, HugePages.ON, arena).status());
            } else {
                IllegalStateException e = assertThrows(IllegalStateException.class,
                        () -> PoolMemory.map(2 * MB, HugePages.ON, arena));
                assertTrue(e.getMessage().startsWith("huge_pages = on: the kernel backed 0 kB of the 2 MB"), e.getMessage());
                assertTrue(e.getMessage().endsWith("; set huge_pages = try to start with normal pages where there are no huge ones"));
            }
        }
    }

    @Test
    void theReasonNamesTheKernelSettingThatDecides() {
        String never = PoolMemory.describe(0, 4 * MB, "always madvise [never]", "[madvise]");
        assertEquals("off: 0 kB of 4 MB in 2 MB pages (transparent huge pages are off: "
                + "/sys/kernel/mm/transparent_hugepage/enabled is 'always madvise [never]'; 'madvise' or 'always' allows them)", never);
        String partial = PoolMemory.describe(2 * MB, 4 * MB, "always [madvise] never", "always defer [never]");
        assertEquals("partial: 2 MB of 4 MB in 2 MB pages (the kernel had too few free 2 MB pages (memory is fragmented; "
                + "/sys/kernel/mm/transparent_hugepage/defrag is 'always defer [never]': 'defer+madvise' or 'madvise' makes it "
                + "compact memory for the pool))", partial);
        assertTrue(PoolMemory.describe(0, 4 * MB, null, null).contains("this kernel has no transparent huge pages"));
        assertEquals("on: 4 MB of 4 MB in 2 MB pages", PoolMemory.describe(4 * MB, 4 * MB, "[always] madvise never", null));
    }

    @Test
    void smapsIsReadForTheMappingThatStartsAtTheAddressOnly() {
        List<String> smaps = List.of(
                "7f0000000000-7f0000400000 rw-p 00000000 00:00 0 ",
                "Size:               4096 kB",
                "AnonHugePages:      2048 kB",
                "7f0000400000-7f0000800000 rw-p 00000000 00:00 0 ",
                "Size:               4096 kB",
                "AnonHugePages:      4096 kB",
                "VmFlags: rd wr mr mw me ac sd hg");
        assertEquals(4 * MB, PoolMemory.hugeBytes(smaps, 0x7f0000400000L));
        assertEquals(2 * MB, PoolMemory.hugeBytes(smaps, 0x7f0000000000L));
        assertEquals(0, PoolMemory.hugeBytes(smaps, 0x7f0000200000L), "no mapping starts there");
    }

    @Test
    void aBadValueNamesTheSettingAndTheValidValues() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HugePages.parse("maybe"));
        assertEquals("huge_pages = 'maybe' is not valid: valid values are try, on, off", e.getMessage());
        assertEquals(HugePages.ON, HugePages.parse(" On "));
        assertEquals("try", BufMgrSettings.defaults().hugePages().value());
    }

    @Test
    void thePoolSaysWhatItGot() throws Exception {
        pool(new SyncIoMethod(), small().build()); // 512 buffers, 4 MB, huge_pages = try
        if (thpAllowed()) {
            assertEquals("on: 4 MB of 4 MB in 2 MB pages", pool.hugePages());
        } else {
            assertTrue(pool.hugePages().startsWith("off: 0 kB of 4 MB"), pool.hugePages());
        }
        BufMgrSettings.Builder off = small();
        off.hugePages = HugePages.OFF;
        pool.close();
        aio.close();
        smgr.close();
        pool(new SyncIoMethod(), off.build());
        assertEquals("off: huge_pages = off", pool.hugePages());
    }

    private static boolean mapped(long start) throws IOException {
        String head = Long.toHexString(start) + "-";
        return Files.readAllLines(PoolMemory.SMAPS).stream().anyMatch(l -> l.startsWith(head));
    }
}
