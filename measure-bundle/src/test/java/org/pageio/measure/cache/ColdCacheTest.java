package org.pageio.measure.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.posix.Mman;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;

/** Eviction proven by mincore on real files: a cached file goes cold; a mapped one stays and is named with its pages. */
class ColdCacheTest {

    static volatile long sink;

    @TempDir
    Path tmp;

    private Path file(String name, int pages) throws IOException {
        Path f = tmp.resolve(name);
        byte[] b = new byte[pages * (int) Posix.pageSize()];
        new Random(name.hashCode()).nextBytes(b);
        Files.write(f, b);
        return f;
    }

    @Test
    void aCachedFileIsEvictedAndProvenCold() throws IOException {
        Path a = file("a", 64);
        Path b = file("b", 32);
        CacheState warm = ColdCache.warm(List.of(a, b), ByteBuffer.allocateDirect(1 << 16));
        assertEquals(96, warm.totalPages());
        assertTrue(warm.residentPages() > 0, "read in: " + warm);
        CacheState cold = ColdCache.evict(List.of(a, b));
        assertTrue(cold.cold(), cold.toString());
        assertEquals(0, cold.fraction());
        assertEquals(List.of(a, b), cold.files().stream().map(CacheState.FileResidency::file).toList());
        assertEquals(List.of(64L, 32L), cold.files().stream().map(CacheState.FileResidency::totalPages).toList());
        assertNull(cold.notCold());
        assertTrue(ColdCache.requireCold(List.of(a, b)).cold());
        assertEquals(0, ColdCache.residency(List.of(a, b)).residentPages());
    }

    @Test
    void aMappedFileIsReportedNotColdWithItsResidentPages() throws IOException {
        Path free = file("free", 16);
        Path mapped = file("mapped", 32);
        long size = Files.size(mapped);
        int fd = Posix.open(mapped, OpenFlags.O_RDONLY, 0);
        MemorySegment map = Posix.mmap(size, Mman.PROT_READ, Mman.MAP_SHARED, fd, 0, mapped);
        try {
            long sum = 0;
            for (long off = 0; off < size; off += Posix.pageSize()) {
                sum += map.get(ValueLayout.JAVA_BYTE, off); // fault every page in; mapped pages survive DONTNEED
            }
            sink = sum;
            CacheState s = ColdCache.evict(List.of(free, mapped));
            assertFalse(s.cold());
            assertEquals(32, s.residentPages(), s.toString());
            assertEquals(List.of(mapped), s.stillResident().stream().map(CacheState.FileResidency::file).toList());
            assertEquals(32, s.stillResident().get(0).residentPages());
            assertEquals(0, s.files().get(0).residentPages(), "the unmapped file went cold");
            assertEquals("not cold: 32 of 48 pages still in the page cache after posix_fadvise(DONTNEED) (mapped: 32 of 32 pages);"
                    + " something has them mapped or is reading them", s.notCold());
            IOException e = assertThrows(IOException.class, () -> ColdCache.requireCold(List.of(free, mapped)));
            assertEquals(s.notCold(), e.getMessage());
        } finally {
            Posix.munmap(map);
            Posix.close(fd, mapped);
        }
    }
}
