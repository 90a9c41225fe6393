package org.pageio.table.index;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.pageio.bufmgr.page.Page;

/**
 * Index pages: the buffer manager's 24-byte page header (with checksum), then a sorted array of
 * 16-byte entries from offset 24 to {@code pd_lower}, and a 16-byte special space.
 * <pre>
 *  0       24                                   pd_lower         8176              8192
 *  +-------+--------+--------+-----+------------+--- free ---------+-----------------+
 *  |header |entry 0 |entry 1 | ... | entry n-1  |                  | special (16)    |
 *  +-------+--------+--------+-----+------------+------------------+-----------------+
 *  leaf entry:     key i64 | heap block u32 | heap line u16 | pad u16
 *  internal entry: key i64 (lowest key of the child) | child block u32 | pad u32
 *  special:        magic u32 "PIDX" | flags u16 (1 meta, 2 leaf, 4 internal) | level u16
 *                  | right sibling u32 (0xFFFFFFFF = none) | reserved u32
 *  metapage (block 0), body at 24: magic u32 | version u32 | root u32 | height u32 | entries u64
 *                  | key columns u32 (version 2; a version 1 metapage is a one-column index)
 * </pre>
 * A key is one i64: the column's value, or for an index on two integer columns
 * {@link #compositeKey}{@code (c1, c2)}, which orders as the pair does, lexicographically.
 * {@code pd_upper = pd_special = 8176}: the free space is between the entries and the special
 * space, so {@link org.pageio.bufmgr.page.PageVerifier}'s header rules hold.
 */
public final class IndexPage {

    public static final int ENTRY = 16;
    public static final int SPECIAL = 16;
    public static final int SPECIAL_AT = Page.SIZE - SPECIAL;
    public static final int CAPACITY = (SPECIAL_AT - Page.HEADER_SIZE) / ENTRY;
    public static final int MAGIC = 0x58444950; // "PIDX" little-endian
    public static final int META = 1;
    public static final int LEAF = 2;
    public static final int INTERNAL = 4;
    public static final int NO_SIBLING = -1;

    static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private IndexPage() {
    }

    static void init(MemorySegment page, int flags, int level) {
        Page.init(page, SPECIAL);
        page.set(U32, SPECIAL_AT, MAGIC);
        page.set(U16, SPECIAL_AT + 4, (short) flags);
        page.set(U16, SPECIAL_AT + 6, (short) level);
        page.set(U32, SPECIAL_AT + 8, NO_SIBLING);
    }

    static void setEntry(MemorySegment page, int i, long key, long blockOrChild, int line) {
        int at = Page.HEADER_SIZE + i * ENTRY;
        page.set(U64, at, key);
        page.set(U32, at + 8, (int) blockOrChild);
        page.set(U16, at + 12, (short) line);
        page.set(U16, at + 14, (short) 0);
    }

    static void setCount(MemorySegment page, int n) {
        Page.setLower(page, Page.HEADER_SIZE + n * ENTRY);
    }

    static void setSibling(MemorySegment page, long block) {
        page.set(U32, SPECIAL_AT + 8, (int) block);
    }

    public static int count(MemorySegment page) {
        return (Page.lower(page) - Page.HEADER_SIZE) / ENTRY;
    }

    public static long key(MemorySegment page, int i) {
        return page.get(U64, Page.HEADER_SIZE + (long) i * ENTRY);
    }

    public static long block(MemorySegment page, int i) {
        return Integer.toUnsignedLong(page.get(U32, Page.HEADER_SIZE + (long) i * ENTRY + 8));
    }

    public static int line(MemorySegment page, int i) {
        return Short.toUnsignedInt(page.get(U16, Page.HEADER_SIZE + (long) i * ENTRY + 12));
    }

    public static int magic(MemorySegment page) {
        return page.get(U32, SPECIAL_AT);
    }

    public static int flags(MemorySegment page) {
        return page.get(U16, SPECIAL_AT + 4);
    }

    public static long sibling(MemorySegment page) {
        int s = page.get(U32, SPECIAL_AT + 8);
        return s == NO_SIBLING ? -1 : Integer.toUnsignedLong(s);
    }

    /** The metapage's version: 2 records the key columns. */
    public static final int META_VERSION = 2;

    static void initMeta(MemorySegment page, long root, int height, long entries, int keyColumns) {
        init(page, META, 0);
        page.set(U32, Page.HEADER_SIZE, MAGIC);
        page.set(U32, Page.HEADER_SIZE + 4, META_VERSION);
        page.set(U32, Page.HEADER_SIZE + 8, (int) root);
        page.set(U32, Page.HEADER_SIZE + 12, height);
        page.set(U64, Page.HEADER_SIZE + 16, entries);
        page.set(U32, Page.HEADER_SIZE + 24, keyColumns);
        Page.setLower(page, Page.HEADER_SIZE + 28);
    }

    /** Key columns of the index whose metapage this is: 1 for a version 1 metapage. */
    public static int metaKeyColumns(MemorySegment page) {
        return page.get(U32, Page.HEADER_SIZE + 4) >= 2 ? page.get(U32, Page.HEADER_SIZE + 24) : 1;
    }

    /**
     * The key of the pair {@code (c1, c2)} of 32-bit integers: {@code c1} in the high 32 bits,
     * {@code c2 - Integer.MIN_VALUE} in the low ones, so that signed i64 order is the pair's
     * lexicographic order: {@code (c1, c2) < (d1, d2)} iff {@code c1 < d1}, or {@code c1 = d1} and {@code c2 < d2}.
     */
    public static long compositeKey(long c1, long c2) {
        return (c1 << 32) + (c2 - Integer.MIN_VALUE);
    }

    /** The first column of a {@link #compositeKey}. */
    public static long compositeFirst(long key) {
        return key >> 32;
    }

    /** The second column of a {@link #compositeKey}. */
    public static long compositeSecond(long key) {
        return (key & 0xFFFF_FFFFL) + Integer.MIN_VALUE;
    }

    public static long metaRoot(MemorySegment page) {
        return Integer.toUnsignedLong(page.get(U32, Page.HEADER_SIZE + 8));
    }

    public static int metaHeight(MemorySegment page) {
        return page.get(U32, Page.HEADER_SIZE + 12);
    }

    /** First index {@code i} with {@code key(i) >= k} (count when none). */
    static int lowerBound(MemorySegment page, long k) {
        int lo = 0;
        int hi = count(page);
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (key(page, mid) < k) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
