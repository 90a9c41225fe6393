package org.pageio.bufmgr.page;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link PgChecksum} against {@code checksum_impl.h} written out word by word, as plainly as the C
 * reads (here, {@link #reference}); pages PostgreSQL itself wrote are checked by the pgdata bundle's
 * test against a real cluster and {@code pg_checksums}.
 */
class PgChecksumTest {

    private static final int[] BASE = {
        0x5B1F36E9, 0xB8525960, 0x02AB50AA, 0x1DE66D2A, 0x79FF467A, 0x9BB9F8A3, 0x217E7CD2, 0x83E13D2C,
        0xF8D4474F, 0xE39EB970, 0x42C6AE16, 0x993216FA, 0x7B093B5D, 0x98DAFF3C, 0xF718902A, 0x0B1C9CDB,
        0xE58F764B, 0x187636BC, 0x5D7B3BB1, 0xE73DE7DE, 0x92BEC979, 0xCCA6C0B2, 0x304A0979, 0x85AA43D4,
        0x783125BB, 0x6CA8EAA2, 0xE407EAC6, 0x4B5CFC3E, 0x9FBF8C76, 0x15CA20BE, 0xF2CA9FD3, 0x959BD756
    };

    /** {@code pg_checksum_page} in unsigned 64-bit arithmetic on a copy whose pd_checksum is set to 0, as the C does. */
    static int reference(byte[] page, long blkno) {
        byte[] copy = page.clone();
        copy[8] = 0;
        copy[9] = 0;
        long[] sums = new long[32];
        for (int j = 0; j < 32; j++) {
            sums[j] = Integer.toUnsignedLong(BASE[j]);
        }
        for (int i = 0; i < 8192 / (4 * 32); i++) {
            for (int j = 0; j < 32; j++) {
                int at = (i * 32 + j) * 4;
                long value = (copy[at] & 0xFFL) | (copy[at + 1] & 0xFFL) << 8 | (copy[at + 2] & 0xFFL) << 16
                        | (copy[at + 3] & 0xFFL) << 24;
                sums[j] = comp(sums[j], value);
            }
        }
        for (int i = 0; i < 2; i++) {
            for (int j = 0; j < 32; j++) {
                sums[j] = comp(sums[j], 0);
            }
        }
        long result = 0;
        for (int j = 0; j < 32; j++) {
            result ^= sums[j];
        }
        long checksum = result ^ (blkno & 0xFFFF_FFFFL);
        return (int) (checksum % 65535 + 1);
    }

    private static long comp(long checksum, long value) {
        long tmp = (checksum ^ value) & 0xFFFF_FFFFL;
        return ((tmp * 16777619L) & 0xFFFF_FFFFL) ^ (tmp >>> 17);
    }

    @Test
    void matchesChecksumImplOnRandomPagesAndBlocks() {
        PgChecksum pg = new PgChecksum();
        Random r = new Random(7);
        byte[] bytes = new byte[Page.SIZE];
        try (Arena a = Arena.ofConfined()) {
            MemorySegment page = a.allocate(Page.SIZE, 4096);
            for (int i = 0; i < 200; i++) {
                r.nextBytes(bytes);
                MemorySegment.copy(MemorySegment.ofArray(bytes), 0, page, 0, Page.SIZE);
                long blkno = i < 100 ? i : Integer.toUnsignedLong(r.nextInt());
                assertEquals(reference(bytes, blkno), pg.checksumPage(page, blkno), "page " + i + ", block " + blkno);
            }
        }
    }

    @Test
    void readsPdChecksumAsZeroAndLeavesThePageAlone() {
        PgChecksum pg = new PgChecksum();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment page = a.allocate(Page.SIZE, 8);
            Page.init(page, 0);
            page.set(ValueLayout.JAVA_LONG_UNALIGNED, 4000, 0x0123_4567_89AB_CDEFL);
            int sum = pg.checksumPage(page, 3);
            page.set(Page.U16, Page.OFFSET_CHECKSUM, (short) sum);
            byte[] before = page.toArray(ValueLayout.JAVA_BYTE);
            assertEquals(sum, pg.checksumPage(page, 3), "pd_checksum is not part of the sum");
            assertArrayEquals(before, page.toArray(ValueLayout.JAVA_BYTE), "the page is only read");
            // the bytes around pd_checksum are part of it
            page.set(ValueLayout.JAVA_BYTE, Page.OFFSET_FLAGS, (byte) 1);
            assertNotEquals(sum, pg.checksumPage(page, 3), "pd_flags (the other half of the masked word) counts");
        }
    }

    @Test
    void blockNumberIsMixedInAndTheResultIsNeverZero() {
        PgChecksum pg = new PgChecksum();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment page = a.allocate(Page.SIZE, 8);
            Page.init(page, 0);
            int at0 = pg.checksumPage(page, 0);
            int at1 = pg.checksumPage(page, 1);
            assertNotEquals(at0, at1, "a page moved to another block fails");
            for (long b = 0; b < 70_000; b++) {
                int c = pg.checksumPage(page, b);
                assertTrue(c >= 1 && c <= 65535, "block " + b + ": " + c);
            }
            // the block number enters as a uint32 XOR: block b and its bits above 32 give the same sum
            assertEquals(at1, pg.checksumPage(page, 1L | 1L << 32));
        }
    }

    @Test
    void refusesASegmentThatIsNotAPage() {
        try (Arena a = Arena.ofConfined()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new PgChecksum().checksumPage(a.allocate(4096), 0));
            assertEquals("pg_checksum_page: a page is 8192 bytes, this segment is 4096", e.getMessage());
        }
    }
}
