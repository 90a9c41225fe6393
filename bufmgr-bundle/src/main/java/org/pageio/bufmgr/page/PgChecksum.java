package org.pageio.bufmgr.page;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * PostgreSQL's data page checksum, exactly as {@code checksum_impl.h} computes it
 * ({@code pg_checksum_page} over {@code pg_checksum_block}): what a page written by PostgreSQL with
 * data checksums on carries in {@code pd_checksum}. pageio's own pages keep pageio's checksum
 * ({@link Page#checksum}); this one is for PostgreSQL's files.
 *
 * <p>The algorithm, with {@code checksum_impl.h}'s names:
 * <pre>
 *   N_SUMS = 32, FNV_PRIME = 16777619
 *   CHECKSUM_COMP(sum, value): tmp = sum ^ value; sum = tmp * FNV_PRIME ^ (tmp &gt;&gt; 17)
 *
 *   pg_checksum_block(page):            the page as uint32 data[BLCKSZ / (4 * N_SUMS)][N_SUMS] = [64][32]
 *     sums[j] = checksumBaseOffsets[j]
 *     for i in 0..63, j in 0..31:  CHECKSUM_COMP(sums[j], data[i][j])
 *     for i in 0..1,  j in 0..31:  CHECKSUM_COMP(sums[j], 0)          two rounds of zeros
 *     return sums[0] ^ sums[1] ^ … ^ sums[31]
 *
 *   pg_checksum_page(page, blkno):      pd_checksum read as 0 while computing
 *     checksum = pg_checksum_block(page) ^ blkno
 *     return (checksum % 65535) + 1     1..65535, never 0
 * </pre>
 * The {@code uint32} words are read in the machine's byte order, as PostgreSQL's C reads them; the
 * files of a little-endian machine are read here (PostgreSQL's files are not portable between byte
 * orders either). {@code pd_checksum} is bytes 8..9, the low half of word {@code data[0][2]}: that
 * word is masked instead of the page being changed, so the page is only read (PostgreSQL stores 0
 * there and puts the old value back).
 *
 * <p><b>Speed.</b> The sums run as one recurrence over the page's 2048 words: with
 * {@code t[0..31]} the base offsets, {@code t[i + 32] = CHECKSUM_COMP(t[i], word[i])}, so
 * {@code t[32 * (r + 1) + j]} is {@code sums[j]} after row {@code r}, and the last 32 entries are the
 * sums of {@code pg_checksum_block}; the same operations on the same values in the same order per
 * sum. One loop of 2016 iterations whose dependence distance is 32 words lets C2's SuperWord use
 * whole vector registers; the row-by-row form (an inner loop of 32 over a lane array, PostgreSQL's
 * shape) was vectorized only in part: a loop of 32 trips per row, run 64 times a page.
 * {@code PgChecksumBench} ({@code bench/}; 2-core AMD EPYC with AVX-512, Temurin 25): 397 ns
 * per 8 KiB page, against 735 ns for the row form, and none allocated per page (the recurrence
 * array is a field); docs/performance.md compares it with PostgreSQL's C.
 * Copying the page into an {@code int[]} first ran slower in either form; 32 sums as local
 * variables spill on x86's 16 registers; a column at a time (one sum over 64 rows) is a chain of
 * dependent multiplications.
 *
 * <p><b>Threads.</b> An instance holds its recurrence array: one thread at a time (a verifier keeps one per
 * thread). The page is read with plain accesses, as {@link Page#checksum}.
 */
public final class PgChecksum {

    /** {@code N_SUMS}: the number of sums computed in parallel. */
    public static final int N_SUMS = 32;
    /** {@code FNV_PRIME}: the FNV-1a prime multiplier. */
    public static final int FNV_PRIME = 16777619;

    /** {@code checksumBaseOffsets}: the sums' initial values. */
    private static final int[] CHECKSUM_BASE_OFFSETS = {
        0x5B1F36E9, 0xB8525960, 0x02AB50AA, 0x1DE66D2A,
        0x79FF467A, 0x9BB9F8A3, 0x217E7CD2, 0x83E13D2C,
        0xF8D4474F, 0xE39EB970, 0x42C6AE16, 0x993216FA,
        0x7B093B5D, 0x98DAFF3C, 0xF718902A, 0x0B1C9CDB,
        0xE58F764B, 0x187636BC, 0x5D7B3BB1, 0xE73DE7DE,
        0x92BEC979, 0xCCA6C0B2, 0x304A0979, 0x85AA43D4,
        0x783125BB, 0x6CA8EAA2, 0xE407EAC6, 0x4B5CFC3E,
        0x9FBF8C76, 0x15CA20BE, 0xF2CA9FD3, 0x959BD756
    };

    /** {@code data[0][2]}, the word that holds {@code pd_checksum} in its low half (little-endian). */
    private static final int CHECKSUM_WORD = Page.OFFSET_CHECKSUM / Integer.BYTES;
    /** What is left of {@link #CHECKSUM_WORD} with {@code pd_checksum} read as 0. */
    private static final int CHECKSUM_WORD_MASK = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN ? 0xFFFF_0000 : 0x0000_FFFF;
    /** A word in the machine's order, as PostgreSQL's C reads {@code uint32 data[][]}. */
    private static final ValueLayout.OfInt WORD = ValueLayout.JAVA_INT_UNALIGNED;

    /** The page's words, {@code data[i][j]} being word {@code i * N_SUMS + j}. */
    private static final int WORDS = Page.SIZE / Integer.BYTES;
    /** The recurrence: {@code t[32 * (r + 1) + j]} is {@code sums[j]} after row {@code r} (see Speed); reused. */
    private final int[] t = new int[N_SUMS + WORDS];

    /**
     * {@code pg_checksum_page}: the checksum PostgreSQL stores in {@code pd_checksum} for
     * {@code page} at block {@code blkno} of its relation fork ({@code segno * RELSEG_SIZE +} the
     * block in its segment file). Reads the page, never writes it; allocates nothing. Meaningful
     * for pages that are not new ({@code pd_upper != 0}): PostgreSQL never checksums a new page.
     *
     * @param page  exactly {@link Page#SIZE} bytes
     * @param blkno PostgreSQL's {@code BlockNumber}, an unsigned 32-bit value (only its low 32 bits are used)
     * @return 1..65535
     * @throws IllegalArgumentException if {@code page} is not {@link Page#SIZE} bytes
     */
    public int checksumPage(MemorySegment page, long blkno) {
        if (page.byteSize() != Page.SIZE) {
            throw new IllegalArgumentException("pg_checksum_page: a page is " + Page.SIZE + " bytes, this segment is "
                    + page.byteSize());
        }
        int checksum = checksumBlock(page) ^ (int) blkno;
        return (int) (Integer.toUnsignedLong(checksum) % 65535) + 1;
    }

    /**
     * {@code pg_checksum_block} with {@code pd_checksum} read as 0: the 32 sums over the page's
     * 64 rows of 32 words, two rounds of zeros, the sums XORed together. The page must be
     * {@link Page#SIZE} bytes ({@link #checksumPage} checks).
     */
    int checksumBlock(MemorySegment page) {
        int[] t = this.t;
        // row 0: sums[j] = CHECKSUM_COMP(checksumBaseOffsets[j], data[0][j]); data[0][2] holds pd_checksum, read as 0
        for (int j = 0; j < N_SUMS; j++) {
            int value = page.get(WORD, (long) j * Integer.BYTES);
            if (j == CHECKSUM_WORD) {
                value &= CHECKSUM_WORD_MASK;
            }
            t[N_SUMS + j] = comp(CHECKSUM_BASE_OFFSETS[j], value);
        }
        // rows 1..63: word i goes into sums[i % 32], whose value before it is t[i]
        for (int i = N_SUMS; i < WORDS; i++) {
            int tmp = t[i] ^ page.get(WORD, (long) i * Integer.BYTES);
            t[i + N_SUMS] = tmp * FNV_PRIME ^ (tmp >>> 17);
        }
        // two rounds of zeros, then the XOR of the sums (the last row of t)
        int result = 0;
        for (int j = WORDS; j < WORDS + N_SUMS; j++) {
            result ^= comp(comp(t[j], 0), 0);
        }
        return result;
    }

    /** {@code CHECKSUM_COMP}: one FNV-1a step with the high bits folded back in. */
    private static int comp(int checksum, int value) {
        int tmp = checksum ^ value;
        return tmp * FNV_PRIME ^ (tmp >>> 17);
    }
}
