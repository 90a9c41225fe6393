package org.pageio.bufmgr.page;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.pageio.bufmgr.page.PageVerifier.BAD_CHECKSUM;
import static org.pageio.bufmgr.page.PageVerifier.BAD_HEADER;
import static org.pageio.bufmgr.page.PageVerifier.VALID;
import static org.pageio.bufmgr.page.PageVerifier.VALID_ZERO;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import java.util.function.Consumer;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link PageVerifier}: PostgreSQL's {@code PageIsVerified} rules, on native pages as the pool holds them. */
class PageVerifierTest {
    private static final long BLOCK = 7;

    private Arena arena;
    private MemorySegment page;

    @BeforeEach
    void allocate() {
        arena = Arena.ofConfined();
        page = arena.allocate(Page.SIZE, 4096);
    }

    @AfterEach
    void free() {
        arena.close();
    }

    /** A heap page as the table bundle would write it: header, line pointers, tuples, special space. */
    static void fillLikeAHeapPage(MemorySegment page, long seed) {
        Random random = new Random(seed);
        Page.init(page, 16);
        Page.setLsn(page, 0x0000_0003_0A00_1F28L);
        Page.setPruneXid(page, 731);
        int lower = Page.HEADER_SIZE + 4 * 40;
        int upper = Page.SIZE - 16 - 40 * 120;
        for (int at = Page.HEADER_SIZE; at < lower; at++) {
            page.set(ValueLayout.JAVA_BYTE, at, (byte) random.nextInt());
        }
        for (int at = upper; at < Page.SIZE; at++) {
            page.set(ValueLayout.JAVA_BYTE, at, (byte) random.nextInt());
        }
        Page.setLower(page, lower);
        Page.setUpper(page, upper);
        Page.setFlags(page, Page.PD_HAS_FREE_LINES);
    }

    private static void flip(MemorySegment page, long bit) {
        long at = bit >>> 3;
        page.set(ValueLayout.JAVA_BYTE, at, (byte) (page.get(ValueLayout.JAVA_BYTE, at) ^ (1 << (bit & 7))));
    }

    // ---------------------------------------------------------------- valid pages

    @ParameterizedTest
    @ValueSource(ints = {0, 8, 13, 4096})
    void initializedAndChecksummedPageIsValid(int specialSize) {
        for (long block : new long[] {0, 1, BLOCK, 131_071, 0xFFFF_FFFEL}) {
            Page.init(page, specialSize);
            Page.setChecksum(page, block);
            assertEquals(VALID, PageVerifier.verify(page, block, true), "block " + block);
            assertEquals(VALID, PageVerifier.verify(page, block, false), "block " + block);
        }
        fillLikeAHeapPage(page, 1);
        Page.setChecksum(page, BLOCK);
        assertEquals(VALID, PageVerifier.verify(page, BLOCK, true));
    }

    @Test
    void allZeroPageIsValidZeroEvenWithChecksums() {
        for (long block : new long[] {0, BLOCK, 0xFFFF_FFFEL}) {
            assertEquals(VALID_ZERO, PageVerifier.verify(page, block, true));
            assertEquals(VALID_ZERO, PageVerifier.verify(page, block, false));
        }
        assertTrue(PageVerifier.isAllZero(page));
        assertTrue(PageVerifier.isAccepted(VALID_ZERO, false));
        assertEquals("all-zero page in block 7 (valid)", PageVerifier.describe(VALID_ZERO, page, BLOCK));
    }

    @Test
    void verifyDoesNotWriteThePage() {
        fillLikeAHeapPage(page, 2);
        Page.setChecksum(page, BLOCK);
        page.set(ValueLayout.JAVA_BYTE, 5000, (byte) 1); // now a checksum failure
        byte[] before = page.toArray(ValueLayout.JAVA_BYTE);
        assertEquals(BAD_CHECKSUM, PageVerifier.verify(page, BLOCK, true));
        assertArrayEquals(before, page.toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void heapAndReadOnlySegmentsVerifyAlike() {
        fillLikeAHeapPage(page, 3);
        Page.setChecksum(page, BLOCK);
        byte[] bytes = page.toArray(ValueLayout.JAVA_BYTE);
        long[] longs = page.toArray(ValueLayout.JAVA_LONG);
        for (MemorySegment s : new MemorySegment[] {
                page.asReadOnly(), MemorySegment.ofArray(bytes), MemorySegment.ofArray(bytes).asReadOnly(),
                MemorySegment.ofArray(longs)}) {
            assertEquals(VALID, PageVerifier.verify(s, BLOCK, true), s.toString());
            assertEquals(BAD_CHECKSUM, PageVerifier.verify(s, BLOCK + 1, true), s.toString());
        }
    }

    // ---------------------------------------------------------------- corruption

    /**
     * Every one of the 65,536 bits, flipped alone, fails: the header checks catch some, the
     * checksum all the others (guaranteed for odd-weight errors, see {@link Page}). Eight pages,
     * because PostgreSQL's plain {@code % 65535} fold would let a single flip through on about 60%
     * of pages (measured): this test is what catches a return to it.
     */
    @Test
    void everySingleBitFlipAnywhereFails() {
        int[] counts = new int[4];
        for (long seed = 0; seed < 8; seed++) {
            fillLikeAHeapPage(page, seed);
            long block = seed == 0 ? 0xFFFF_FFFEL : seed * 7919;
            Page.setChecksum(page, block);
            for (long bit = 0; bit < Page.SIZE * 8L; bit++) {
                flip(page, bit);
                int code = PageVerifier.verify(page, block, true);
                flip(page, bit);
                if (code != BAD_CHECKSUM && code != BAD_HEADER) {
                    fail("flipping bit " + bit + " (byte " + (bit >>> 3) + ") gave "
                            + PageVerifier.name(code) + ": " + PageVerifier.describe(code, page, block));
                }
                counts[code]++;
            }
            assertEquals(VALID, PageVerifier.verify(page, block, true), "flips undone");
        }
        assertTrue(counts[BAD_HEADER] > 0 && counts[BAD_CHECKSUM] > 0,
                "both header and checksum failures expected: " + counts[BAD_HEADER] + ", " + counts[BAD_CHECKSUM]);
    }

    @Test
    void flipsInsideTheChecksumFieldAreChecksumFailures() {
        fillLikeAHeapPage(page, 4);
        Page.setChecksum(page, BLOCK);
        for (long bit = Page.OFFSET_CHECKSUM * 8L; bit < (Page.OFFSET_CHECKSUM + 2) * 8L; bit++) {
            flip(page, bit);
            assertEquals(BAD_CHECKSUM, PageVerifier.verify(page, BLOCK, true), "bit " + bit);
            assertEquals(VALID, PageVerifier.verify(page, BLOCK, false), "bit " + bit + ", checksums off");
            flip(page, bit);
        }
    }

    /** 3 and 5 flipped bits anywhere (odd weight): always caught, by the argument in {@link Page}. */
    @Test
    void oddNumbersOfFlippedBitsFail() {
        fillLikeAHeapPage(page, 5);
        Page.setChecksum(page, BLOCK);
        Random random = new Random(5);
        for (int trial = 0; trial < 20_000; trial++) {
            int weight = trial % 2 == 0 ? 3 : 5;
            long[] bits = random.longs(weight, 0, Page.SIZE * 8L).distinct().toArray();
            if (bits.length != weight) {
                continue;
            }
            for (long bit : bits) {
                flip(page, bit);
            }
            int code = PageVerifier.verify(page, BLOCK, true);
            for (long bit : bits) {
                flip(page, bit);
            }
            assertTrue(code == BAD_CHECKSUM || code == BAD_HEADER, "trial " + trial + ": " + PageVerifier.name(code));
        }
    }

    @Test
    void anySingleBitFlipOfAZeroPageIsABadHeader() {
        for (long bit = 0; bit < Page.SIZE * 8L; bit++) {
            flip(page, bit);
            assertEquals(BAD_HEADER, PageVerifier.verify(page, BLOCK, true), "bit " + bit);
            assertEquals(BAD_HEADER, PageVerifier.verify(page, BLOCK, false), "bit " + bit);
            flip(page, bit);
        }
    }

    @Test
    void pageReadAtAnotherBlockFailsItsChecksum() {
        fillLikeAHeapPage(page, 6);
        Page.setChecksum(page, BLOCK);
        // Guaranteed for all blocks below 65,536 whose XOR with 7 is not 0xFFFF.
        for (long other = 0; other < 65_536; other++) {
            if (other != BLOCK && (other ^ BLOCK) != 0xFFFF) {
                assertEquals(BAD_CHECKSUM, PageVerifier.verify(page, other, true), "block " + other);
            }
        }
        // Guaranteed whenever the two numbers differ in an odd number of bits.
        long big = 0xDEAD_BEEFL;
        Page.setChecksum(page, big);
        for (int bit = 0; bit < 32; bit++) {
            assertEquals(BAD_CHECKSUM, PageVerifier.verify(page, big ^ (1L << bit), true), "bit " + bit);
        }
        assertEquals(VALID, PageVerifier.verify(page, big, false), "no block check without checksums");
        assertEquals(VALID, PageVerifier.verify(page, big + 1, false));
    }

    @Test
    void checksumFailureIsDescribedWithBothValues() {
        fillLikeAHeapPage(page, 7);
        Page.setChecksum(page, BLOCK);
        page.set(ValueLayout.JAVA_BYTE, 6000, (byte) ~page.get(ValueLayout.JAVA_BYTE, 6000));
        assertEquals(BAD_CHECKSUM, PageVerifier.verify(page, BLOCK, true));
        String expected = String.format("checksum mismatch in block 7: computed 0x%04x, stored 0x%04x",
                Short.toUnsignedInt(Page.checksum(page, BLOCK)), Page.storedChecksum(page));
        assertEquals(expected, PageVerifier.describe(BAD_CHECKSUM, page, BLOCK));
    }

    // ---------------------------------------------------------------- header sanity

    static Stream<Arguments> insaneHeaders() {
        return Stream.of(
                insane("lower > upper", p -> {
                    p.set(Page.U16, Page.OFFSET_LOWER, (short) 30000);
                    p.set(Page.U16, Page.OFFSET_UPPER, (short) 100);
                }, "pd_lower 30000 > pd_upper 100"),
                insane("lower inside the header", p -> p.set(Page.U16, Page.OFFSET_LOWER, (short) 10),
                        "pd_lower 10 < header size 24"),
                insane("upper > special", p -> {
                    p.set(Page.U16, Page.OFFSET_UPPER, (short) 8192);
                    p.set(Page.U16, Page.OFFSET_SPECIAL, (short) 8000);
                }, "pd_upper 8192 > pd_special 8000"),
                insane("special > 8192", p -> {
                    p.set(Page.U16, Page.OFFSET_UPPER, (short) 8000);
                    p.set(Page.U16, Page.OFFSET_SPECIAL, (short) 8200);
                }, "pd_special 8200 > page size 8192"),
                insane("special misaligned", p -> {
                    p.set(Page.U16, Page.OFFSET_UPPER, (short) 8000);
                    p.set(Page.U16, Page.OFFSET_SPECIAL, (short) 8188);
                }, "pd_special 8188 is not a multiple of 8"),
                insane("unknown flag bits", p -> p.set(Page.U16, Page.OFFSET_FLAGS, (short) 0x0011),
                        "pd_flags 0x0011 has unknown bits 0x0010 (valid: 0x0007)"),
                insane("layout version 5", p -> p.set(Page.U16, Page.OFFSET_PAGESIZE_VERSION, (short) 0x2005),
                        "pd_pagesize_version 0x2005 (page size 8192, layout version 5), expected 0x2004"),
                insane("4 KiB page size", p -> p.set(Page.U16, Page.OFFSET_PAGESIZE_VERSION, (short) 0x1004),
                        "pd_pagesize_version 0x1004 (page size 4096, layout version 4)"),
                insane("pagesize_version zero", p -> p.set(Page.U16, Page.OFFSET_PAGESIZE_VERSION, (short) 0),
                        "pd_pagesize_version 0x0000"),
                insane("new page with data", p -> p.set(Page.U16, Page.OFFSET_UPPER, (short) 0),
                        "pd_upper is 0 (new page) but the page is not all zeros (first non-zero byte at offset 0)"));
    }

    private static Arguments insane(String name, Consumer<MemorySegment> corrupt, String message) {
        return Arguments.of(name, corrupt, message);
    }

    /** The header is broken but the checksum matches it, so only the header checks can object. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("insaneHeaders")
    void insaneHeaderIsBadHeaderNamingFieldAndValues(String name, Consumer<MemorySegment> corrupt, String message) {
        fillLikeAHeapPage(page, 8);
        corrupt.accept(page);
        Page.setChecksum(page, BLOCK);
        assertEquals(BAD_HEADER, PageVerifier.verify(page, BLOCK, true));
        assertEquals(BAD_HEADER, PageVerifier.verify(page, BLOCK, false));
        String described = PageVerifier.describe(BAD_HEADER, page, BLOCK);
        assertTrue(described.startsWith("invalid page header in block 7: "), described);
        assertTrue(described.contains(message), described);
        assertFalse(PageVerifier.isAccepted(BAD_HEADER, true));
    }

    @Test
    void badHeaderWinsOverBadChecksum() {
        fillLikeAHeapPage(page, 9);
        Page.setChecksum(page, BLOCK);
        page.set(Page.U16, Page.OFFSET_LOWER, (short) 9000); // header insane and checksum stale
        assertEquals(BAD_HEADER, PageVerifier.verify(page, BLOCK, true));
        assertTrue(PageVerifier.describe(BAD_CHECKSUM, page, BLOCK).contains("pd_lower 9000 > pd_upper"),
                "describe reports what the page shows now");
    }

    @Test
    void withChecksumsOffOnlyTheHeaderCounts() {
        fillLikeAHeapPage(page, 10);
        Page.setChecksum(page, BLOCK);
        page.set(ValueLayout.JAVA_BYTE, 7000, (byte) ~page.get(ValueLayout.JAVA_BYTE, 7000));
        page.set(Page.U16, Page.OFFSET_CHECKSUM, (short) 0);
        assertEquals(VALID, PageVerifier.verify(page, BLOCK, false));
        assertEquals(VALID, PageVerifier.verify(page, BLOCK + 1, false));
        assertEquals(BAD_CHECKSUM, PageVerifier.verify(page, BLOCK, true));
        page.set(Page.U16, Page.OFFSET_FLAGS, (short) 0x0100);
        assertEquals(BAD_HEADER, PageVerifier.verify(page, BLOCK, false));
    }

    @Test
    void segmentOfAnotherSizeIsABadHeaderNotAnException() {
        MemorySegment half = arena.allocate(4096);
        assertEquals(BAD_HEADER, PageVerifier.verify(half, BLOCK, true));
        assertEquals(BAD_HEADER, PageVerifier.verify(MemorySegment.NULL, BLOCK, true));
        assertEquals("invalid page header in block 7: segment is 4096 bytes, a page is 8192",
                PageVerifier.describe(BAD_HEADER, half, BLOCK));
    }

    // ---------------------------------------------------------------- helpers of the API

    @Test
    void acceptance() {
        assertTrue(PageVerifier.isAccepted(VALID, false));
        assertTrue(PageVerifier.isAccepted(VALID_ZERO, false));
        assertFalse(PageVerifier.isAccepted(BAD_CHECKSUM, false));
        assertTrue(PageVerifier.isAccepted(BAD_CHECKSUM, true), "ignore_checksum_failure on a sane header");
        assertFalse(PageVerifier.isAccepted(BAD_HEADER, true));
        assertFalse(PageVerifier.isAccepted(42, true));
        assertEquals("BAD_CHECKSUM", PageVerifier.name(BAD_CHECKSUM));
        assertEquals("code 42", PageVerifier.name(42));
    }

    @Test
    void describeCopesWithPagesThatChangedSinceVerification() {
        fillLikeAHeapPage(page, 11);
        Page.setChecksum(page, BLOCK);
        assertEquals("page header in block 7 is sane now (changed since verification?)",
                PageVerifier.describe(BAD_HEADER, page, BLOCK));
        assertTrue(PageVerifier.describe(BAD_CHECKSUM, page, BLOCK).endsWith("(they match now: changed since verification?)"));
        assertEquals("valid page in block 7", PageVerifier.describe(VALID, page, BLOCK));
        assertEquals("unknown verification result 42 in block 7", PageVerifier.describe(42, page, BLOCK));
        page.fill((byte) 0);
        assertEquals("page in block 7 is all zeros now (changed since verification?)",
                PageVerifier.describe(BAD_CHECKSUM, page, BLOCK));
    }

    @Test
    void isAllZeroLooksAtEveryByteOfAnySize() {
        for (int size : new int[] {0, 1, 7, 63, 64, 65, 127, 8191, 8192, 8193}) {
            MemorySegment s = arena.allocate(Math.max(size, 1)).asSlice(0, size);
            assertTrue(PageVerifier.isAllZero(s), "size " + size);
            for (int at = 0; at < size; at += Math.max(1, size / 17)) {
                s.set(ValueLayout.JAVA_BYTE, at, (byte) 0x80);
                assertFalse(PageVerifier.isAllZero(s), "size " + size + ", byte " + at);
                s.set(ValueLayout.JAVA_BYTE, at, (byte) 0);
            }
            if (size > 0) {
                s.set(ValueLayout.JAVA_BYTE, size - 1, (byte) 1);
                assertFalse(PageVerifier.isAllZero(s), "size " + size + ", last byte");
            }
        }
    }
}
