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
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;

/** Layout, initialisation and checksum of {@link Page}. */
class PageTest {

    /** The checksum restated from the class comment, over a plain byte array. */
    static short referenceChecksum(byte[] page, long blockNumber) {
        byte[] copy = page.clone();
        copy[8] = 0;
        copy[9] = 0;
        CRC32C crc = new CRC32C();
        crc.update(copy);
        int c = (int) crc.getValue() ^ (int) blockNumber ^ (int) (blockNumber >>> 32);
        int folded = (c >>> 16) ^ (c & 0xFFFF);
        return (short) (folded % 65535 + 1);
    }

    static byte[] randomBytes(long seed) {
        byte[] bytes = new byte[Page.SIZE];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    @Test
    void initLaysOutAnEmptyPageLikePageInit() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment page = arena.allocate(Page.SIZE, 4096);
            page.fill((byte) 0x5A); // init must clear what was there
            Page.init(page, 13);

            assertEquals(Page.HEADER_SIZE, Page.lower(page));
            assertEquals(Page.SIZE - 16, Page.upper(page), "special size 13 is MAXALIGNed to 16");
            assertEquals(Page.SIZE - 16, Page.special(page));
            assertEquals(16, Page.specialSize(page));
            assertEquals(0x2004, Page.pageSizeVersion(page));
            assertEquals(Page.SIZE, Page.pageSize(page));
            assertEquals(Page.LAYOUT_VERSION, Page.layoutVersion(page));
            assertEquals(0, Page.flags(page));
            assertEquals(0L, Page.lsn(page));
            assertEquals(0, Page.storedChecksum(page));
            assertEquals(0, Page.pruneXid(page));
            assertEquals(Page.SIZE - 16 - Page.HEADER_SIZE, Page.exactFreeSpace(page));
            for (long at = Page.HEADER_SIZE; at < Page.SIZE; at++) {
                assertEquals(0, page.get(ValueLayout.JAVA_BYTE, at), "byte " + at);
            }

            Page.init(page, 0, Page.PD_ALL_VISIBLE);
            assertEquals(Page.SIZE, Page.upper(page));
            assertEquals(Page.SIZE, Page.special(page));
            assertEquals(Page.PD_ALL_VISIBLE, Page.flags(page));
        }
    }

    @Test
    void initRejectsWhatCannotBeAPage() {
        MemorySegment page = MemorySegment.ofArray(new byte[Page.SIZE]);
        assertThrows(IllegalArgumentException.class, () -> Page.init(page, -1));
        assertThrows(IllegalArgumentException.class, () -> Page.init(page, Page.SIZE - Page.HEADER_SIZE));
        assertThrows(IllegalArgumentException.class, () -> Page.init(page, 0, 0x0008));
        assertThrows(IllegalArgumentException.class, () -> Page.init(MemorySegment.ofArray(new byte[4096]), 0));
        Page.init(page, Page.SIZE - Page.HEADER_SIZE - Page.MAXALIGN); // the largest special space
        assertEquals(Page.HEADER_SIZE + Page.MAXALIGN, Page.special(page));
    }

    @Test
    void headerIsLittleEndianAtPostgresOffsets() {
        byte[] bytes = new byte[Page.SIZE];
        MemorySegment page = MemorySegment.ofArray(bytes);
        Page.setLsn(page, 0x0807060504030201L);
        Page.setFlags(page, 0x0007);
        Page.setLower(page, 0x0123);
        Page.setUpper(page, 0x1234);
        Page.setSpecial(page, 0x1FF8);
        Page.setPruneXid(page, 0xDDCCBBAA);
        page.set(Page.U16, Page.OFFSET_PAGESIZE_VERSION, (short) 0x2004);
        page.set(Page.U16, Page.OFFSET_CHECKSUM, (short) 0xBEEF);
        byte[] expected = {
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,         // pd_lsn
            (byte) 0xEF, (byte) 0xBE,                               // pd_checksum
            0x07, 0x00,                                             // pd_flags
            0x23, 0x01,                                             // pd_lower
            0x34, 0x12,                                             // pd_upper
            (byte) 0xF8, 0x1F,                                      // pd_special
            0x04, 0x20,                                             // pd_pagesize_version
            (byte) 0xAA, (byte) 0xBB, (byte) 0xCC, (byte) 0xDD,     // pd_prune_xid
        };
        byte[] header = new byte[Page.HEADER_SIZE];
        System.arraycopy(bytes, 0, header, 0, header.length);
        assertArrayEquals(expected, header);
        assertEquals(0x0807060504030201L, Page.lsn(page));
        assertEquals(0xBEEF, Page.storedChecksum(page));
        assertEquals(0xDDCCBBAA, Page.pruneXid(page));
    }

    @Test
    void settersRejectValuesOutsideTheirField() {
        MemorySegment page = MemorySegment.ofArray(new byte[Page.SIZE]);
        assertThrows(IllegalArgumentException.class, () -> Page.setFlags(page, 0x0010));
        assertThrows(IllegalArgumentException.class, () -> Page.setLower(page, 23));
        assertThrows(IllegalArgumentException.class, () -> Page.setLower(page, Page.SIZE + 1));
        assertThrows(IllegalArgumentException.class, () -> Page.setUpper(page, -1));
        assertThrows(IllegalArgumentException.class, () -> Page.setSpecial(page, 8188));
        assertThrows(IllegalArgumentException.class, () -> Page.setSpecial(page, Page.SIZE + 8));
        assertTrue(PageVerifier.isAllZero(page), "a rejected value must not be written");
    }

    @Test
    void checksumIsCrc32cWithFieldZeroedBlockXoredAndFolded() {
        for (long seed = 0; seed < 50; seed++) {
            byte[] bytes = randomBytes(seed);
            long block = seed * 0x9E3779B9L & 0xFFFFFFFFL;
            assertEquals(referenceChecksum(bytes, block), Page.checksum(MemorySegment.ofArray(bytes), block));
        }
    }

    @Test
    void everyKindOfSegmentGivesTheSameChecksum() {
        byte[] bytes = randomBytes(7);
        short expected = referenceChecksum(bytes, 42);
        long[] longs = new long[Page.SIZE / 8];
        MemorySegment.ofArray(longs).copyFrom(MemorySegment.ofArray(bytes));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment nativePage = arena.allocate(Page.SIZE, 4096);
            nativePage.copyFrom(MemorySegment.ofArray(bytes));
            MemorySegment pool = arena.allocate(3L * Page.SIZE, 4096);
            MemorySegment slice = pool.asSlice(Page.SIZE, Page.SIZE);
            slice.copyFrom(nativePage);

            assertEquals(expected, Page.checksum(nativePage, 42), "native");
            assertEquals(expected, Page.checksum(slice, 42), "slice of a pool");
            assertEquals(expected, Page.checksum(nativePage.asReadOnly(), 42), "native read-only");
            assertEquals(expected, Page.checksum(MemorySegment.ofArray(bytes), 42), "byte[]");
            assertEquals(expected, Page.checksum(MemorySegment.ofArray(bytes).asReadOnly(), 42), "byte[] read-only");
            assertEquals(expected, Page.checksum(MemorySegment.ofArray(longs), 42), "long[]");
        }
    }

    @Test
    void checksumIgnoresTheStoredChecksumAndLeavesThePageAlone() {
        byte[] bytes = randomBytes(3);
        MemorySegment page = MemorySegment.ofArray(bytes);
        short first = Page.checksum(page, 9);
        bytes[8] ^= 0x5A;
        bytes[9] ^= (byte) 0xA5;
        byte[] before = bytes.clone();
        assertEquals(first, Page.checksum(page, 9));
        assertArrayEquals(before, bytes);
    }

    @Test
    void setChecksumStoresItLittleEndianAtOffset8() {
        byte[] bytes = randomBytes(5);
        MemorySegment page = MemorySegment.ofArray(bytes);
        Page.setChecksum(page, 1234);
        int expected = Short.toUnsignedInt(referenceChecksum(bytes, 1234));
        assertEquals(expected, Page.storedChecksum(page));
        assertEquals(expected & 0xFF, bytes[8] & 0xFF);
        assertEquals(expected >>> 8, bytes[9] & 0xFF);
    }

    @Test
    void checksumIsNeverZero() {
        // The fold maps the two 16-bit values 0 and 0xFFFF to 1; everything else v to v + 1.
        assertEquals(1, Page.fold(0x00000000, 0));
        assertEquals(1, Page.fold(0xFFFF0000, 0));
        assertEquals(1, Page.fold(0x1234_1234, 0));
        assertEquals((short) 0xFFFF, Page.fold(0x0000_FFFE, 0));
        for (int crc = Integer.MIN_VALUE + 12345; crc < Integer.MAX_VALUE - 99991; crc += 99991) {
            assertNotEquals(0, Page.fold(crc, crc * 31L));
        }
    }

    @Test
    void blockNumberIsMixedIn() {
        byte[] bytes = randomBytes(11);
        MemorySegment page = MemorySegment.ofArray(bytes);
        assertNotEquals(Page.checksum(page, 0), Page.checksum(page, 1));
        assertNotEquals(Page.checksum(page, 0xFFFFFFFEL), Page.checksum(page, 0xFFFFFFFFL));
        assertEquals(referenceChecksum(bytes, 0xFFFFFFFEL), Page.checksum(page, 0xFFFFFFFEL));
    }

    /**
     * Pins the on-disk format: an empty page with a known LSN at block 3. If this changes, pages
     * written by an earlier build no longer verify. 0x3f53 was cross-checked with an independent
     * bitwise CRC32C (polynomial 0x82F63B78, reflected) written in Python.
     */
    @Test
    void knownAnswer() {
        MemorySegment page = MemorySegment.ofArray(new byte[Page.SIZE]);
        Page.init(page, 16);
        Page.setLsn(page, 0x0000_0001_0000_0028L);
        assertEquals(0x3f53, Short.toUnsignedInt(Page.checksum(page, 3)));
        assertEquals(0x3f53, Short.toUnsignedInt(referenceChecksum(page.toArray(ValueLayout.JAVA_BYTE), 3)));
    }

    @Test
    void checksumWantsAWholePage() {
        assertThrows(IllegalArgumentException.class, () -> Page.checksum(MemorySegment.ofArray(new byte[100]), 0));
        assertThrows(IllegalArgumentException.class,
                () -> Page.setChecksum(MemorySegment.ofArray(new byte[Page.SIZE + 1]), 0));
    }

    @Test
    void isNewIsUpperZero() {
        MemorySegment page = MemorySegment.ofArray(new byte[Page.SIZE]);
        assertTrue(Page.isNew(page));
        Page.init(page, 0);
        assertTrue(!Page.isNew(page));
        Page.setUpper(page, 0);
        assertTrue(Page.isNew(page));
    }
}
