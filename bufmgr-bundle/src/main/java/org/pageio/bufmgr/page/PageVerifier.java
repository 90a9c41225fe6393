package org.pageio.bufmgr.page;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Page verification as PostgreSQL's {@code PageIsVerified} ({@code bufpage.c}), run by the buffer
 * manager's read-completion callback on every page read, and by maintenance scans.
 *
 * <p>Rules (design §9.4): an all-zero page is valid ({@link #VALID_ZERO}); a new page
 * ({@code pd_upper == 0}) that is not all zeros is not. Any other page needs a sane header and,
 * if data checksums are on, a matching checksum ({@link Page#checksum}). The header is sane when
 * <ul>
 *   <li>{@code pd_flags} has no bits outside {@link Page#PD_VALID_FLAG_BITS},</li>
 *   <li>{@code 24 <= pd_lower <= pd_upper <= pd_special <= 8192},</li>
 *   <li>{@code pd_special} is a multiple of {@link Page#MAXALIGN}, and</li>
 *   <li>{@code pd_pagesize_version == 0x2004}.</li>
 * </ul>
 * PostgreSQL's {@code PageIsVerified} checks neither the {@code pd_lower >= 24} bound nor
 * {@code pd_pagesize_version}; both are added here because they cost nothing and catch a page of
 * another format or a half-written header.
 *
 * <p>Result codes are plain {@code int}s. {@link #BAD_HEADER} wins over {@link #BAD_CHECKSUM}
 * (an insane header is never accepted, checksum or not, and its checksum is not computed), so
 * {@code BAD_CHECKSUM} always means "header sane, checksum wrong": exactly the case that
 * {@code ignore_checksum_failure} accepts ({@link #isAccepted}). PostgreSQL also counts a checksum
 * failure on a page whose header is insane; a caller that wants that count checks
 * {@code Page.checksum(page, blk) != (short) Page.storedChecksum(page)} on the {@code BAD_HEADER}
 * path.
 *
 * <p><b>Thread safety and cost.</b> All methods are static and pure (they read the page and
 * never write it): any thread, any time. {@link #verify} and {@link #isAllZero} never throw for an
 * accessible segment and never allocate once C2 has compiled them (see {@link Page} for the
 * measurement); a segment whose arena is closed, or a confined segment used from another thread,
 * throws as any access to it would. {@link #describe} allocates and is for the error path.
 * Measured per 8 KiB page: about 200 ns with checksums on, 5 to 12 ns with them off (header only),
 * about 120 ns for an all-zero page. Pass a page segment that already exists (one slice per buffer,
 * made once): slicing the pool on every call costs the caller 40 bytes per call, because the slice
 * escapes into this method.
 */
public final class PageVerifier {
    /** The page passed: sane header and, if checksums are on, a matching checksum. */
    public static final int VALID = 0;
    /** The page is all zeros (a block extended but never written): valid, holds nothing. */
    public static final int VALID_ZERO = 1;
    /**
     * The header is not sane, or the page is new but not all zeros, or the segment is not
     * {@link Page#SIZE} bytes. Never acceptable.
     */
    public static final int BAD_HEADER = 2;
    /** The header is sane but the checksum does not match. Acceptable when ignoring. */
    public static final int BAD_CHECKSUM = 3;

    // Why a page is not VALID: one place for verify() (hot) and describe() (cold).
    private static final int SANE = 0;
    private static final int ALL_ZERO = 1;
    private static final int WRONG_SEGMENT_SIZE = 2;
    private static final int NEW_NOT_ZERO = 3;
    private static final int UNKNOWN_FLAGS = 4;
    private static final int LOWER_IN_HEADER = 5;
    private static final int LOWER_ABOVE_UPPER = 6;
    private static final int UPPER_ABOVE_SPECIAL = 7;
    private static final int SPECIAL_BEYOND_PAGE = 8;
    private static final int SPECIAL_MISALIGNED = 9;
    private static final int WRONG_SIZE_VERSION = 10;

    private static final ValueLayout.OfLong U64 = Page.U64;

    private PageVerifier() { }

    /**
     * Verifies a page just read from {@code blockNumber} ({@code PageIsVerified}). Does not throw
     * (for an accessible segment), does not allocate, does not modify the page.
     *
     * @param page the page; a segment of another size than {@link Page#SIZE} is
     *        {@link #BAD_HEADER}
     * @param blockNumber the block the page was read from (mixed into the checksum)
     * @param checksumsEnabled whether data checksums are on; when off, only the header is checked
     * @return {@link #VALID}, {@link #VALID_ZERO}, {@link #BAD_HEADER} or {@link #BAD_CHECKSUM}
     */
    public static int verify(MemorySegment page, long blockNumber, boolean checksumsEnabled) {
        int reason = inspect(page);
        if (reason == ALL_ZERO) {
            return VALID_ZERO;
        }
        if (reason != SANE) {
            return BAD_HEADER;
        }
        if (checksumsEnabled
                && Page.fold(Page.crc32c(page), blockNumber) != page.get(Page.U16, Page.OFFSET_CHECKSUM)) {
            return BAD_CHECKSUM;
        }
        return VALID;
    }

    /**
     * Whether a page with result {@code code} may enter the buffer pool: {@link #VALID} and
     * {@link #VALID_ZERO} always, {@link #BAD_CHECKSUM} only when ignoring checksum failures
     * ({@code ignore_checksum_failure}, PostgreSQL's {@code PIV_IGNORE_CHECKSUM_FAILURE}),
     * {@link #BAD_HEADER} never.
     */
    public static boolean isAccepted(int code, boolean ignoreChecksumFailure) {
        return code == VALID || code == VALID_ZERO || (code == BAD_CHECKSUM && ignoreChecksumFailure);
    }

    /** The constant's name for a result code ({@code "VALID"}, …), or {@code "code N"}. */
    public static String name(int code) {
        return switch (code) {
            case VALID -> "VALID";
            case VALID_ZERO -> "VALID_ZERO";
            case BAD_HEADER -> "BAD_HEADER";
            case BAD_CHECKSUM -> "BAD_CHECKSUM";
            default -> "code " + code;
        };
    }

    /**
     * Explains a result of {@link #verify} for a log line, naming the field and the values, e.g.
     * {@code "invalid page header in block 7: pd_lower 30000 > pd_upper 100"} or
     * {@code "checksum mismatch in block 7: computed 0x1a2b, stored 0x3c4d"}. Error path only: it
     * allocates and recomputes. Describes the page as it is now; if it no longer shows the
     * problem {@code code} names, the message says so.
     */
    public static String describe(int code, MemorySegment page, long blockNumber) {
        String block = " in block " + Long.toUnsignedString(blockNumber);
        int reason = inspect(page);
        return switch (code) {
            case VALID -> "valid page" + block;
            case VALID_ZERO -> "all-zero page" + block + " (valid)";
            case BAD_HEADER, BAD_CHECKSUM -> {
                if (reason == ALL_ZERO) {
                    yield "page" + block + " is all zeros now (changed since verification?)";
                }
                if (reason != SANE) {
                    yield "invalid page header" + block + ": " + headerProblem(reason, page);
                }
                if (code == BAD_HEADER) {
                    yield "page header" + block + " is sane now (changed since verification?)";
                }
                int computed = Short.toUnsignedInt(Page.checksum(page, blockNumber));
                int stored = Page.storedChecksum(page);
                yield String.format("checksum mismatch%s: computed 0x%04x, stored 0x%04x%s",
                        block, computed, stored,
                        computed == stored ? " (they match now: changed since verification?)" : "");
            }
            default -> "unknown verification result " + code + block;
        };
    }

    /**
     * Whether every byte of {@code page} (any size) is zero ({@code pg_memory_is_all_zeros}).
     * Compares 64 bytes at a time as eight longs and stops at the first non-zero block; about
     * 120 ns for a zero 8 KiB page. Never allocates.
     */
    public static boolean isAllZero(MemorySegment page) {
        long size = page.byteSize();
        long at = 0;
        for (long end = size & ~63L; at < end; at += 64) {
            if ((page.get(U64, at) | page.get(U64, at + 8) | page.get(U64, at + 16)
                    | page.get(U64, at + 24) | page.get(U64, at + 32) | page.get(U64, at + 40)
                    | page.get(U64, at + 48) | page.get(U64, at + 56)) != 0) {
                return false;
            }
        }
        for (; at < size; at++) {
            if (page.get(ValueLayout.JAVA_BYTE, at) != 0) {
                return false;
            }
        }
        return true;
    }

    // ---------------------------------------------------------------- the checks

    /** Why the page is not sane, or SANE, or ALL_ZERO; the order fixes which problem describe names. */
    private static int inspect(MemorySegment page) {
        if (page.byteSize() != Page.SIZE) {
            return WRONG_SEGMENT_SIZE;
        }
        int upper = Page.upper(page);
        if (upper == 0) {
            return isAllZero(page) ? ALL_ZERO : NEW_NOT_ZERO;
        }
        int lower = Page.lower(page);
        int special = Page.special(page);
        if ((Page.flags(page) & ~Page.PD_VALID_FLAG_BITS) != 0) {
            return UNKNOWN_FLAGS;
        }
        if (lower < Page.HEADER_SIZE) {
            return LOWER_IN_HEADER;
        }
        if (lower > upper) {
            return LOWER_ABOVE_UPPER;
        }
        if (upper > special) {
            return UPPER_ABOVE_SPECIAL;
        }
        if (special > Page.SIZE) {
            return SPECIAL_BEYOND_PAGE;
        }
        if ((special & (Page.MAXALIGN - 1)) != 0) {
            return SPECIAL_MISALIGNED;
        }
        if (Page.pageSizeVersion(page) != Page.PAGE_SIZE_VERSION) {
            return WRONG_SIZE_VERSION;
        }
        return SANE;
    }

    private static String headerProblem(int reason, MemorySegment page) {
        return switch (reason) {
            case WRONG_SEGMENT_SIZE -> "segment is " + page.byteSize() + " bytes, a page is " + Page.SIZE;
            case NEW_NOT_ZERO -> "pd_upper is 0 (new page) but the page is not all zeros"
                    + " (first non-zero byte at offset " + firstNonZero(page) + ")";
            case UNKNOWN_FLAGS -> String.format("pd_flags 0x%04x has unknown bits 0x%04x (valid: 0x%04x)",
                    Page.flags(page), Page.flags(page) & ~Page.PD_VALID_FLAG_BITS, Page.PD_VALID_FLAG_BITS);
            case LOWER_IN_HEADER -> "pd_lower " + Page.lower(page) + " < header size " + Page.HEADER_SIZE;
            case LOWER_ABOVE_UPPER -> "pd_lower " + Page.lower(page) + " > pd_upper " + Page.upper(page);
            case UPPER_ABOVE_SPECIAL -> "pd_upper " + Page.upper(page) + " > pd_special " + Page.special(page);
            case SPECIAL_BEYOND_PAGE -> "pd_special " + Page.special(page) + " > page size " + Page.SIZE;
            case SPECIAL_MISALIGNED -> "pd_special " + Page.special(page)
                    + " is not a multiple of " + Page.MAXALIGN;
            case WRONG_SIZE_VERSION -> String.format(
                    "pd_pagesize_version 0x%04x (page size %d, layout version %d), expected 0x%04x (%d, %d)",
                    Page.pageSizeVersion(page), Page.pageSize(page), Page.layoutVersion(page),
                    Page.PAGE_SIZE_VERSION, Page.SIZE, Page.LAYOUT_VERSION);
            default -> "reason " + reason;
        };
    }

    private static long firstNonZero(MemorySegment page) {
        for (long at = 0; at < page.byteSize(); at++) {
            if (page.get(ValueLayout.JAVA_BYTE, at) != 0) {
                return at;
            }
        }
        return -1;
    }
}
