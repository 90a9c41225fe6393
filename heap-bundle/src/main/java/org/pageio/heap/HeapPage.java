package org.pageio.heap;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.pageio.bufmgr.page.Page;

/**
 * The heap page: PostgreSQL's layout ({@code bufpage.h}, {@code itemid.h}, {@code htup_details.h})
 * over an 8 KiB {@link MemorySegment}, little-endian. The 24-byte page header, its checksum and
 * its verification are {@link Page}'s and {@link org.pageio.bufmgr.page.PageVerifier}'s (the
 * buffer manager's own code); this class adds line pointers and tuples.
 *
 * <pre>
 *  0        24                pd_lower             pd_upper                            8192
 *  +--------+----+----+----+--+---- free ----------+--------+--------+--------+--------+
 *  | header |lp1 |lp2 |... |                       | tuple n| ...    | tuple 2| tuple 1|
 *  +--------+----+----+----+-----------------------+--------+--------+--------+--------+
 *  line pointer (u32): lp_off bits 0..14 | lp_flags bits 15..16 (1 = LP_NORMAL) | lp_len bits 17..31
 *
 *  tuple:  0 t_xmin u32 | 4 t_xmax u32 | 8 t_cid u32 | 12 t_ctid (bi_hi u16, bi_lo u16, posid u16)
 *         18 t_infomask2 u16 (natts) | 20 t_infomask u16 | 22 t_hoff u8 (= 24) | 23 pad
 *         24 columns, each aligned to its type (int 4, bigint 8, text 4: u32 varlena header
 *            {@code total_len << 2} then the bytes); the tuple's length is MAXALIGNed on the page.
 * </pre>
 * No special space ({@code pd_special = 8192}). Line pointer numbers (PostgreSQL's
 * {@code OffsetNumber}) start at 1.
 *
 * <p>All methods are static, allocate nothing and keep no state: any thread.
 */
public final class HeapPage {

    /** Bytes in a line pointer ({@code ItemIdData}). */
    public static final int LINE_POINTER_SIZE = 4;
    /** Bytes in a tuple header ({@code SizeofHeapTupleHeader} rounded to MAXALIGN = t_hoff). */
    public static final int TUPLE_HEADER_SIZE = 24;
    /** {@code lp_flags} of a line pointer free for reuse ({@code LP_UNUSED}; {@code lp_len} 0). */
    public static final int LP_UNUSED = 0;
    /** {@code lp_flags} of a used line pointer. */
    public static final int LP_NORMAL = 1;
    /**
     * {@code lp_flags} of a HOT chain's root after pruning ({@code LP_REDIRECT}): {@code lp_off} holds
     * the line of the chain's next member, {@code lp_len} 0.
     */
    public static final int LP_REDIRECT = 2;
    /** {@code lp_flags} of a dead line pointer whose index entries still point at it ({@code LP_DEAD}; no storage). */
    public static final int LP_DEAD = 3;
    /** {@code t_xmin} of loaded tuples: FrozenTransactionId. */
    public static final int FROZEN_XID = 2;
    /** {@code t_infomask}: HEAP_XMIN_COMMITTED | HEAP_XMIN_INVALID (= frozen) | HEAP_XMAX_INVALID. */
    public static final int INFOMASK_FROZEN = 0x0300 | 0x0800;
    /** Most tuples on a page ({@code MaxHeapTuplesPerPage}). */
    public static final int MAX_TUPLES = 291;

    static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private HeapPage() {
    }

    /** Initialises an empty heap page (no special space). */
    public static void init(MemorySegment page) {
        Page.init(page, 0);
    }

    /** Number of line pointers ({@code PageGetMaxOffsetNumber}). */
    public static int lineCount(MemorySegment page) {
        int lower = Page.lower(page);
        return lower <= Page.HEADER_SIZE ? 0 : (lower - Page.HEADER_SIZE) / LINE_POINTER_SIZE;
    }

    /** The raw line pointer {@code line} (1-based). */
    public static int linePointer(MemorySegment page, int line) {
        return page.get(U32, Page.HEADER_SIZE + (long) (line - 1) * LINE_POINTER_SIZE);
    }

    public static int lpOff(int lp) {
        return lp & 0x7FFF;
    }

    public static int lpFlags(int lp) {
        return (lp >>> 15) & 0x3;
    }

    public static int lpLen(int lp) {
        return lp >>> 17;
    }

    /**
     * Writes line pointer {@code line} (1-based; the caller has made room up to it):
     * {@code lp_off | lp_flags << 15 | lp_len << 17}, as {@code ItemIdSetNormal}, {@code ItemIdSetRedirect},
     * {@code ItemIdSetDead} and {@code ItemIdSetUnused} do.
     */
    public static void setLinePointer(MemorySegment page, int line, int off, int flags, int len) {
        page.set(U32, Page.HEADER_SIZE + (long) (line - 1) * LINE_POINTER_SIZE, off | (flags << 15) | (len << 17));
    }

    /**
     * {@code PageSetPrunable}: records in {@code pd_prune_xid} that {@code xid} left a tuple that
     * pruning may remove once {@code xid} is no longer running; keeps the older id when one is set.
     */
    public static void setPrunable(MemorySegment page, int xid) {
        int old = Page.pruneXid(page);
        if (old == 0 || Integer.compareUnsigned(xid, old) < 0) {
            page.set(U32, Page.OFFSET_PRUNE_XID, xid);
        }
    }

    /** {@code PageClearPrunable}: no prunable tuple left on the page ({@code pd_prune_xid} = 0). */
    public static void clearPrunable(MemorySegment page) {
        page.set(U32, Page.OFFSET_PRUNE_XID, 0);
    }

    /**
     * Offset of the tuple at {@code line}, or -1 when the line pointer is not LP_NORMAL or points
     * outside the tuple space (a damaged page that still passed verification cannot make a scan read
     * outside the page).
     */
    public static int tupleOffset(MemorySegment page, int line) {
        int lp = linePointer(page, line);
        int off = lpOff(lp);
        int len = lpLen(lp);
        if (lpFlags(lp) != LP_NORMAL || off < TUPLE_HEADER_SIZE || off + len > Page.SIZE || len < TUPLE_HEADER_SIZE) {
            return -1;
        }
        return off;
    }

    /**
     * Reserves space for a tuple of {@code len} bytes and writes its line pointer and header
     * ({@code PageAddItem} for a frozen tuple whose {@code t_ctid} points to itself). Returns the
     * tuple's offset (the caller writes the columns at {@code offset + 24 …}), or -1 when the page
     * is full.
     */
    public static int addTuple(MemorySegment page, long block, int len, int natts) {
        int lower = Page.lower(page);
        int upper = Page.upper(page);
        int aligned = Page.maxAlign(len);
        int line = (lower - Page.HEADER_SIZE) / LINE_POINTER_SIZE + 1;
        if (upper - aligned < lower + LINE_POINTER_SIZE || line > MAX_TUPLES) {
            return -1;
        }
        int off = upper - aligned;
        page.set(U32, lower, off | (LP_NORMAL << 15) | (len << 17));
        page.set(U32, off, FROZEN_XID);
        page.set(U32, off + 4, 0);
        page.set(U32, off + 8, 0);
        page.set(U16, off + 12, (short) (block >>> 16));
        page.set(U16, off + 14, (short) block);
        page.set(U16, off + 16, (short) line);
        page.set(U16, off + 18, (short) natts);
        page.set(U16, off + 20, (short) INFOMASK_FROZEN);
        page.set(ValueLayout.JAVA_BYTE, off + 22, (byte) TUPLE_HEADER_SIZE);
        page.set(ValueLayout.JAVA_BYTE, off + 23, (byte) 0);
        Page.setLower(page, lower + LINE_POINTER_SIZE);
        Page.setUpper(page, off);
        return off;
    }

    /** Sets {@code t_ctid}'s block ({@code bi_hi}, {@code bi_lo}) of the tuple at {@code tuple} (the loader's page template). */
    public static void setCtidBlock(MemorySegment page, int tuple, short hi, short lo) {
        page.set(U16, tuple + 12, hi);
        page.set(U16, tuple + 14, lo);
    }

    /** {@code t_xmin} of the tuple at {@code tuple}: the inserting transaction. */
    public static int xmin(MemorySegment page, int tuple) {
        return page.get(U32, tuple);
    }

    /** {@code t_xmax} of the tuple at {@code tuple}: the deleting (or updating) transaction, 0 if none. */
    public static int xmax(MemorySegment page, int tuple) {
        return page.get(U32, tuple + 4);
    }

    public static void setXmin(MemorySegment page, int tuple, int xid) {
        page.set(U32, tuple, xid);
    }

    public static void setXmax(MemorySegment page, int tuple, int xid) {
        page.set(U32, tuple + 4, xid);
    }

    /** {@code t_infomask} of the tuple at {@code tuple} (unsigned). */
    public static int infomask(MemorySegment page, int tuple) {
        return Short.toUnsignedInt(page.get(U16, tuple + 20));
    }

    public static void setInfomask(MemorySegment page, int tuple, int infomask) {
        page.set(U16, tuple + 20, (short) infomask);
    }

    /** {@code t_infomask2} of the tuple at {@code tuple} (unsigned): natts in the low 11 bits, then flags. */
    public static int infomask2(MemorySegment page, int tuple) {
        return Short.toUnsignedInt(page.get(U16, tuple + 18));
    }

    public static void setInfomask2(MemorySegment page, int tuple, int infomask2) {
        page.set(U16, tuple + 18, (short) infomask2);
    }

    /** Sets the whole {@code t_ctid} of the tuple at {@code tuple}. */
    public static void setCtid(MemorySegment page, int tuple, long block, int line) {
        page.set(U16, tuple + 12, (short) (block >>> 16));
        page.set(U16, tuple + 14, (short) block);
        page.set(U16, tuple + 16, (short) line);
    }

    /** Whether the page carries {@code PD_ALL_VISIBLE}: every tuple on it is visible to every snapshot. */
    public static boolean allVisible(MemorySegment page) {
        return (Page.flags(page) & Page.PD_ALL_VISIBLE) != 0;
    }

    /** Number of attributes recorded in the tuple header at {@code tuple}. */
    public static int natts(MemorySegment page, int tuple) {
        return page.get(U16, tuple + 18) & 0x07FF;
    }

    /** {@code t_ctid} block of the tuple at {@code tuple}. */
    public static long ctidBlock(MemorySegment page, int tuple) {
        return ((long) Short.toUnsignedInt(page.get(U16, tuple + 12)) << 16) | Short.toUnsignedInt(page.get(U16, tuple + 14));
    }

    /** {@code t_ctid} line of the tuple at {@code tuple}. */
    public static int ctidLine(MemorySegment page, int tuple) {
        return Short.toUnsignedInt(page.get(U16, tuple + 16));
    }

    public static int getInt(MemorySegment page, int at) {
        return page.get(U32, at);
    }

    public static long getLong(MemorySegment page, int at) {
        return page.get(U64, at);
    }

    public static void setInt(MemorySegment page, int at, int v) {
        page.set(U32, at, v);
    }

    public static void setLong(MemorySegment page, int at, long v) {
        page.set(U64, at, v);
    }

    /** Length in bytes of the text whose 4-byte varlena header is at {@code at}. */
    public static int textLength(MemorySegment page, int at) {
        return (page.get(U32, at) >>> 2) - 4;
    }

    /** Writes a 4-byte varlena header for {@code n} bytes of text at {@code at}. */
    public static void setTextHeader(MemorySegment page, int at, int n) {
        page.set(U32, at, (n + 4) << 2);
    }

    /**
     * Whether the {@code n} bytes at {@code at} contain {@code pattern} (the {@code LIKE '%p%'}
     * test). No allocation.
     */
    public static boolean contains(MemorySegment page, long at, int n, byte[] pattern) {
        int m = pattern.length;
        if (m == 0) {
            return true;
        }
        byte first = pattern[0];
        long end = at + n - m;
        outer:
        for (long i = at; i <= end; i++) {
            if (page.get(ValueLayout.JAVA_BYTE, i) != first) {
                continue;
            }
            for (int j = 1; j < m; j++) {
                if (page.get(ValueLayout.JAVA_BYTE, i + j) != pattern[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}
