package org.pageio.bufmgr.page;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The 8 KiB page: PostgreSQL's {@code PageHeaderData} layout, its checksum and its
 * initialisation ({@code bufpage.h}, {@code bufpage.c}, {@code checksum_impl.h}), over a
 * {@link MemorySegment}.
 *
 * <p>Header, 24 bytes at offset 0, little-endian on every platform:
 * <pre>
 *  0  u64 pd_lsn               LSN of the last change
 *  8  u16 pd_checksum          see {@link #checksum}; 0 on pages written without checksums
 * 10  u16 pd_flags             {@link #PD_HAS_FREE_LINES} | {@link #PD_PAGE_FULL} | {@link #PD_ALL_VISIBLE}
 * 12  u16 pd_lower             end of the line-pointer array (&gt;= {@link #HEADER_SIZE})
 * 14  u16 pd_upper             start of tuple space; 0 means "new page" ({@link #isNew})
 * 16  u16 pd_special           start of the special space; {@link #SIZE} when there is none
 * 18  u16 pd_pagesize_version  {@link #SIZE} | {@link #LAYOUT_VERSION} = 0x2004
 * 20  u32 pd_prune_xid         oldest prunable XID, 0 if none
 * </pre>
 * followed by line pointers (growing up from {@code pd_lower}), free space, tuples (growing down
 * from {@code pd_upper}) and the special space ({@code pd_special} .. {@link #SIZE}).
 *
 * <p><b>Checksum.</b> CRC32C ({@link CRC32C}, an intrinsic) over all {@link #SIZE} bytes with
 * {@code pd_checksum} read as zero; then, as PostgreSQL's {@code pg_checksum_page}, the block
 * number is XORed in (so a page written at the wrong block fails) and the result is reduced to
 * 16 bits that are never 0:
 * <pre>
 *   c = crc32c(page with pd_checksum = 0) ^ (int) blkno ^ (int) (blkno &gt;&gt;&gt; 32)
 *   checksum = ((c &gt;&gt;&gt; 16) ^ (c &amp; 0xFFFF)) % 65535 + 1
 * </pre>
 * PostgreSQL reduces with {@code c % 65535 + 1} directly. Here the two halves are XORed first,
 * on purpose: CRC32C's polynomial has the factor (x + 1), so any error that flips an odd number of
 * bits changes the CRC by an odd-weight value; XOR-folding keeps the weight odd, and an odd-weight
 * 16-bit difference is neither 0 nor 0xFFFF (the only pair that {@code % 65535} merges). Hence
 * <em>every</em> error of odd weight, in particular every single-bit flip anywhere in the page, is
 * detected for every page content and block number. PostgreSQL's direct {@code % 65535} on this
 * CRC would miss some single-bit flip on most pages (measured over 100 heap-like pages × 65,536
 * flips: 84 flips undetected, on 61 of the pages). Other
 * errors pass with probability about 2<sup>-16</sup>, like PostgreSQL's checksum. Likewise a page
 * checked at a block number other than its own fails for sure when both numbers are below 65,536
 * and their XOR is not 0xFFFF, or when the numbers differ in an odd number of bits.
 *
 * <p><b>Thread safety.</b> Everything here is static and keeps no state: any thread may call any
 * method at any time. The accessors read or write the segment with plain (non-volatile) accesses;
 * whoever shares a page between threads orders those accesses (the buffer manager does, through
 * the buffer's state word). {@link #checksum} computes over the page as it is during the call, so
 * a writer whose page others may still change (hint bits) checksums a private copy, as
 * PostgreSQL's {@code PageSetChecksumCopy} does.
 *
 * <p><b>Cost</b> (measured with {@code VerifyCost} in the tests: 2-core AMD EPYC, Temurin 25).
 * {@link #checksum} takes about 200 ns per page (some 40 GB/s) and does not allocate once C2 has
 * compiled it: its {@code CRC32C} and the {@code ByteBuffer} view from
 * {@link MemorySegment#asByteBuffer()} are scalar-replaced (0 bytes over 1M calls). Interpreted, in
 * C1, or with {@code -XX:-DoEscapeAnalysis} it allocates those two objects, 80 bytes per call.
 * Native and writable {@code byte[]}-backed segments get the intrinsic; other heap segments
 * (read-only, or backed by {@code long[]} and the like) go byte by byte: about 20 µs per page, and
 * they may allocate. They are for tests and tools, not for the buffer pool.
 *
 * <p>Accessors take any segment of at least {@link #HEADER_SIZE} bytes (an
 * {@link IndexOutOfBoundsException} otherwise); {@link #checksum}, {@link #setChecksum} and
 * {@link #init} require exactly {@link #SIZE} bytes. Verification is {@link PageVerifier}'s job.
 */
public final class Page {
    /** Bytes in a page ({@code BLCKSZ}). */
    public static final int SIZE = 8192;
    /** Bytes in the page header ({@code SizeOfPageHeaderData}). */
    public static final int HEADER_SIZE = 24;
    /** Page layout version ({@code PG_PAGE_LAYOUT_VERSION}). */
    public static final int LAYOUT_VERSION = 4;
    /** The only valid {@code pd_pagesize_version}: {@code SIZE | LAYOUT_VERSION} (0x2004). */
    public static final int PAGE_SIZE_VERSION = SIZE | LAYOUT_VERSION;
    /** Alignment of {@code pd_special} and of tuples ({@code MAXIMUM_ALIGNOF}). */
    public static final int MAXALIGN = 8;

    /** {@code pd_flags}: there are unused line pointers before {@code pd_lower}. */
    public static final int PD_HAS_FREE_LINES = 0x0001;
    /** {@code pd_flags}: not enough free space for a new tuple. */
    public static final int PD_PAGE_FULL = 0x0002;
    /** {@code pd_flags}: every tuple on the page is visible to everyone. */
    public static final int PD_ALL_VISIBLE = 0x0004;
    /** Every {@code pd_flags} bit that may be set; any other bit makes the header invalid. */
    public static final int PD_VALID_FLAG_BITS = 0x0007;

    /** Offset of {@code pd_lsn} (u64). */
    public static final int OFFSET_LSN = 0;
    /** Offset of {@code pd_checksum} (u16). */
    public static final int OFFSET_CHECKSUM = 8;
    /** Offset of {@code pd_flags} (u16). */
    public static final int OFFSET_FLAGS = 10;
    /** Offset of {@code pd_lower} (u16). */
    public static final int OFFSET_LOWER = 12;
    /** Offset of {@code pd_upper} (u16). */
    public static final int OFFSET_UPPER = 14;
    /** Offset of {@code pd_special} (u16). */
    public static final int OFFSET_SPECIAL = 16;
    /** Offset of {@code pd_pagesize_version} (u16). */
    public static final int OFFSET_PAGESIZE_VERSION = 18;
    /** Offset of {@code pd_prune_xid} (u32). */
    public static final int OFFSET_PRUNE_XID = 20;

    static final ValueLayout.OfLong U64 =
            ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt U32 =
            ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfShort U16 =
            ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private Page() { }

    // ---------------------------------------------------------------- checksum

    /**
     * The checksum {@code page} must carry when stored at {@code blockNumber}; computes it, does
     * not store it, does not modify the page. Meaningful for non-new pages only (PostgreSQL never
     * checksums a page whose {@code pd_upper} is 0; {@link PageVerifier} does not either).
     *
     * @param blockNumber the block's number in its relation fork (PostgreSQL's
     *        {@code BlockNumber}, an unsigned 32-bit value; higher bits are folded in too)
     * @return a value in 1..65535 as an unsigned {@code short}
     * @throws IllegalArgumentException if {@code page} is not {@link #SIZE} bytes
     */
    public static short checksum(MemorySegment page, long blockNumber) {
        requirePage(page);
        return fold(crc32c(page), blockNumber);
    }

    /**
     * Computes {@link #checksum} and stores it in {@code pd_checksum}
     * ({@code PageSetChecksumInplace}).
     *
     * @throws IllegalArgumentException if {@code page} is not {@link #SIZE} bytes
     */
    public static void setChecksum(MemorySegment page, long blockNumber) {
        page.set(U16, OFFSET_CHECKSUM, checksum(page, blockNumber));
    }

    /** Mixes the block number into a CRC and reduces it to 1..65535 (see the class comment). */
    static short fold(int crc, long blockNumber) {
        int mixed = crc ^ (int) blockNumber ^ (int) (blockNumber >>> 32);
        int folded = (mixed >>> 16) ^ (mixed & 0xFFFF);
        return (short) (folded % 65535 + 1);
    }

    /** CRC32C of the first {@link #SIZE} bytes with {@code pd_checksum} read as zero. */
    static int crc32c(MemorySegment page) {
        CRC32C crc = new CRC32C();
        if (page.isNative() || page.heapBase().orElse(null) instanceof byte[]) {
            // A direct or array-backed view: CRC32C runs its intrinsic on it. Both objects are
            // scalar-replaced once C2 compiles this method into its caller.
            ByteBuffer view = page.asByteBuffer();
            view.limit(OFFSET_CHECKSUM);
            crc.update(view);
            crc.update(0);
            crc.update(0);
            view.limit(SIZE).position(OFFSET_CHECKSUM + 2);
            crc.update(view);
        } else {
            // Read-only or non-byte[] heap segments: no view without a copy, so go byte by byte.
            for (long at = 0; at < SIZE; at++) {
                boolean inChecksum = at == OFFSET_CHECKSUM || at == OFFSET_CHECKSUM + 1;
                crc.update(inChecksum ? 0 : page.get(ValueLayout.JAVA_BYTE, at));
            }
        }
        return (int) crc.getValue();
    }

    // ---------------------------------------------------------------- initialisation

    /**
     * Initialises an empty page with no flags ({@code PageInit(page, BLCKSZ, specialSize)}): zeroes
     * all of it, then {@code pd_lower = 24}, {@code pd_upper = pd_special = 8192 -
     * MAXALIGN(specialSize)}, {@code pd_pagesize_version = 0x2004}. {@code pd_checksum} stays 0:
     * call {@link #setChecksum} before writing the page out.
     *
     * @param specialSize bytes the access method keeps at the end of the page; rounded up to
     *        {@link #MAXALIGN}
     * @throws IllegalArgumentException if {@code page} is not {@link #SIZE} bytes, or
     *         {@code specialSize} is negative or leaves no room after the header
     */
    public static void init(MemorySegment page, int specialSize) {
        init(page, specialSize, 0);
    }

    /**
     * {@link #init(MemorySegment, int)} with initial {@code pd_flags}.
     *
     * @param flags a combination of the {@code PD_*} flags
     * @throws IllegalArgumentException as {@link #init(MemorySegment, int)}, or if {@code flags}
     *         has bits outside {@link #PD_VALID_FLAG_BITS}
     */
    public static void init(MemorySegment page, int specialSize, int flags) {
        requirePage(page);
        if (specialSize < 0 || specialSize > SIZE - HEADER_SIZE - MAXALIGN) {
            throw new IllegalArgumentException("special size " + specialSize
                    + " leaves no room on a " + SIZE + "-byte page (allowed: 0.."
                    + (SIZE - HEADER_SIZE - MAXALIGN) + ")");
        }
        if ((flags & ~PD_VALID_FLAG_BITS) != 0) {
            throw new IllegalArgumentException(String.format(
                    "pd_flags 0x%04x has bits outside 0x%04x", flags, PD_VALID_FLAG_BITS));
        }
        int special = SIZE - maxAlign(specialSize);
        page.fill((byte) 0);
        page.set(U16, OFFSET_FLAGS, (short) flags);
        page.set(U16, OFFSET_LOWER, (short) HEADER_SIZE);
        page.set(U16, OFFSET_UPPER, (short) special);
        page.set(U16, OFFSET_SPECIAL, (short) special);
        page.set(U16, OFFSET_PAGESIZE_VERSION, (short) PAGE_SIZE_VERSION);
    }

    /** {@code size} rounded up to a multiple of {@link #MAXALIGN} ({@code MAXALIGN()}). */
    public static int maxAlign(int size) {
        return (size + MAXALIGN - 1) & -MAXALIGN;
    }

    // ---------------------------------------------------------------- header reads

    /**
     * Whether the page is new, never initialised: {@code pd_upper == 0} ({@code PageIsNew}). A new
     * page is valid only if it is all zeros.
     */
    public static boolean isNew(MemorySegment page) {
        return upper(page) == 0;
    }

    /** {@code pd_lsn}, the 64-bit LSN of the last change (raw bits). */
    public static long lsn(MemorySegment page) {
        return page.get(U64, OFFSET_LSN);
    }

    /** {@code pd_checksum} as stored, 0..65535 (0 = written without checksums). */
    public static int storedChecksum(MemorySegment page) {
        return u16(page, OFFSET_CHECKSUM);
    }

    /** {@code pd_flags}, 0..65535. */
    public static int flags(MemorySegment page) {
        return u16(page, OFFSET_FLAGS);
    }

    /** {@code pd_lower}: offset of the first free byte after the line pointers. */
    public static int lower(MemorySegment page) {
        return u16(page, OFFSET_LOWER);
    }

    /** {@code pd_upper}: offset of the first tuple byte (0 on a new page). */
    public static int upper(MemorySegment page) {
        return u16(page, OFFSET_UPPER);
    }

    /** {@code pd_special}: offset of the special space ({@link #SIZE} if there is none). */
    public static int special(MemorySegment page) {
        return u16(page, OFFSET_SPECIAL);
    }

    /** {@code pd_pagesize_version}: page size in the high byte, layout version in the low one. */
    public static int pageSizeVersion(MemorySegment page) {
        return u16(page, OFFSET_PAGESIZE_VERSION);
    }

    /** Page size recorded in the header ({@code PageGetPageSize}). */
    public static int pageSize(MemorySegment page) {
        return pageSizeVersion(page) & 0xFF00;
    }

    /** Layout version recorded in the header ({@code PageGetPageLayoutVersion}). */
    public static int layoutVersion(MemorySegment page) {
        return pageSizeVersion(page) & 0x00FF;
    }

    /** {@code pd_prune_xid} (raw 32 bits; {@link Integer#toUnsignedLong} for the XID). */
    public static int pruneXid(MemorySegment page) {
        return page.get(U32, OFFSET_PRUNE_XID);
    }

    /** Bytes of the special space, {@code SIZE - pd_special} ({@code PageGetSpecialSize}). */
    public static int specialSize(MemorySegment page) {
        return SIZE - special(page);
    }

    /**
     * Bytes between the line pointers and the tuples, {@code pd_upper - pd_lower}, or 0 if the
     * header is inconsistent ({@code PageGetExactFreeSpace}).
     */
    public static int exactFreeSpace(MemorySegment page) {
        return Math.max(0, upper(page) - lower(page));
    }

    // ---------------------------------------------------------------- header writes

    /** Sets {@code pd_lsn} ({@code PageSetLSN}). */
    public static void setLsn(MemorySegment page, long lsn) {
        page.set(U64, OFFSET_LSN, lsn);
    }

    /**
     * Sets {@code pd_flags}.
     *
     * @throws IllegalArgumentException if {@code flags} has bits outside
     *         {@link #PD_VALID_FLAG_BITS}
     */
    public static void setFlags(MemorySegment page, int flags) {
        if ((flags & ~PD_VALID_FLAG_BITS) != 0) {
            throw new IllegalArgumentException(String.format(
                    "pd_flags 0x%04x has bits outside 0x%04x", flags, PD_VALID_FLAG_BITS));
        }
        page.set(U16, OFFSET_FLAGS, (short) flags);
    }

    /**
     * Sets {@code pd_lower}.
     *
     * @throws IllegalArgumentException if {@code lower} is outside {@link #HEADER_SIZE}..{@link #SIZE}
     */
    public static void setLower(MemorySegment page, int lower) {
        page.set(U16, OFFSET_LOWER, offset("pd_lower", lower, HEADER_SIZE));
    }

    /**
     * Sets {@code pd_upper}.
     *
     * @throws IllegalArgumentException if {@code upper} is outside 0..{@link #SIZE}
     */
    public static void setUpper(MemorySegment page, int upper) {
        page.set(U16, OFFSET_UPPER, offset("pd_upper", upper, 0));
    }

    /**
     * Sets {@code pd_special}.
     *
     * @throws IllegalArgumentException if {@code special} is outside 0..{@link #SIZE} or not a
     *         multiple of {@link #MAXALIGN}
     */
    public static void setSpecial(MemorySegment page, int special) {
        short value = offset("pd_special", special, 0);
        if (special % MAXALIGN != 0) {
            throw new IllegalArgumentException(
                    "pd_special " + special + " is not a multiple of " + MAXALIGN);
        }
        page.set(U16, OFFSET_SPECIAL, value);
    }

    /** Sets {@code pd_prune_xid} ({@code PageSetPrunable} without the comparison). */
    public static void setPruneXid(MemorySegment page, int xid) {
        page.set(U32, OFFSET_PRUNE_XID, xid);
    }

    // ---------------------------------------------------------------- helpers

    private static int u16(MemorySegment page, long offset) {
        return Short.toUnsignedInt(page.get(U16, offset));
    }

    private static short offset(String field, int value, int min) {
        if (value < min || value > SIZE) {
            throw new IllegalArgumentException(
                    field + " " + value + " is outside " + min + ".." + SIZE);
        }
        return (short) value;
    }

    private static void requirePage(MemorySegment page) {
        if (page.byteSize() != SIZE) {
            throw new IllegalArgumentException(
                    "a page is " + SIZE + " bytes, this segment is " + page.byteSize());
        }
    }
}
