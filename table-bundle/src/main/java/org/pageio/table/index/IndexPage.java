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
 *  internal entry: key i64 | child block u32 | heap TID u32: the separator, (key, TID) of the
 *                  lowest entry under the child when the entry was made (TID 0 before version 3)
 *  special:        magic u32 "PIDX" | flags u16 (1 meta, 2 leaf, 4 internal) | level u16
 *                  | right sibling u32 (0xFFFFFFFF = none) | change count u32
 *  metapage (block 0), body at 24: magic u32 | version u32 | root u32 | height u32 | entries u64
 *                  | key columns u32 (version 2; a version 1 metapage is a one-column index)
 * </pre>
 * A key is one i64: the column's value, or for an index on two integer columns
 * {@link #compositeKey}{@code (c1, c2)}, which orders as the pair does, lexicographically.
 * Entries are ordered by (key, heap TID), the TID as {@link IndexBuilder#tid} (nbtree's heap TID
 * tiebreaker, {@code heapkeyspace}); a version 3 metapage says the separators carry their TID, so
 * an insert descends to the one leaf its (key, TID) belongs on.
 *
 * <p><b>Change count.</b> Readers ({@link IndexCursor}) take no lock; a writer changes a page under
 * its content lock between {@link #beginChange} (count made odd) and {@link #endChange} (even
 * again), and a reader copies what it needs and accepts the copy only if the count was even and
 * unchanged around it ({@link #stableCount}, {@link #unchanged}), else copies again: a sequence
 * lock, pageio's stand-in for the share content lock PostgreSQL's readers take ({@code _bt_readpage}
 * under {@code BT_READ}).
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

    private static final ValueLayout.OfInt COUNT = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final java.lang.invoke.VarHandle CHANGE_COUNT = COUNT.varHandle();
    private static final long CHANGE_COUNT_AT = SPECIAL_AT + 12;

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

    /** Writes internal entry {@code i}: separator {@code (key, tid)} and the child's block. */
    static void setInternal(MemorySegment page, int i, long key, long child, long tid) {
        int at = Page.HEADER_SIZE + i * ENTRY;
        page.set(U64, at, key);
        page.set(U32, at + 8, (int) child);
        page.set(U32, at + 12, (int) tid);
    }

    /** The separator's heap TID of internal entry {@code i} ({@link IndexBuilder#tid}; 0 before version 3). */
    public static long separatorTid(MemorySegment page, int i) {
        return Integer.toUnsignedLong(page.get(U32, Page.HEADER_SIZE + (long) i * ENTRY + 12));
    }

    /** The heap TID of leaf entry {@code i} as {@link IndexBuilder#tid}. */
    public static long tid(MemorySegment page, int i) {
        return IndexBuilder.tid(block(page, i), line(page, i));
    }

    /** Copies entries {@code [from, from + n)} of {@code src} to {@code [to, to + n)} of {@code dst} (overlap allowed). */
    static void copyEntries(MemorySegment src, int from, MemorySegment dst, int to, int n) {
        if (n > 0) {
            MemorySegment.copy(src, Page.HEADER_SIZE + (long) from * ENTRY, dst, Page.HEADER_SIZE + (long) to * ENTRY,
                    (long) n * ENTRY);
        }
    }

    /** The page's level: 0 for a leaf, the height above the leaves for an internal page. */
    public static int level(MemorySegment page) {
        return page.get(U16, SPECIAL_AT + 6);
    }

    /** Starts a change of a page whose content lock the caller holds: the change count becomes odd. */
    static void beginChange(MemorySegment page) {
        CHANGE_COUNT.setOpaque(page, CHANGE_COUNT_AT, (int) CHANGE_COUNT.getOpaque(page, CHANGE_COUNT_AT) + 1);
        java.lang.invoke.VarHandle.storeStoreFence(); // the odd count before any changed byte
    }

    /** Ends the change {@link #beginChange} started: the count is even again, after every changed byte. */
    static void endChange(MemorySegment page) {
        CHANGE_COUNT.setRelease(page, CHANGE_COUNT_AT, (int) CHANGE_COUNT.getOpaque(page, CHANGE_COUNT_AT) + 1);
    }

    /** The change count once no change is under way (even); read before copying from the page. */
    public static int stableCount(MemorySegment page) {
        int c;
        while (((c = (int) CHANGE_COUNT.getAcquire(page, CHANGE_COUNT_AT)) & 1) != 0) {
            Thread.onSpinWait();
        }
        return c;
    }

    /** Whether the page did not change since {@link #stableCount} returned {@code count}: what was read in between holds. */
    public static boolean unchanged(MemorySegment page, int count) {
        java.lang.invoke.VarHandle.acquireFence(); // the copy's reads before the count's
        return (int) CHANGE_COUNT.getOpaque(page, CHANGE_COUNT_AT) == count;
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

    /** The metapage's version: 2 records the key columns, 3 says separators carry their heap TID. */
    public static final int META_VERSION = 3;

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

    /** The metapage's version (1, 2 or 3). */
    public static int metaVersion(MemorySegment page) {
        return page.get(U32, Page.HEADER_SIZE + 4);
    }

    /** Entries in the index, as its metapage counts them. */
    public static long metaEntries(MemorySegment page) {
        return page.get(U64, Page.HEADER_SIZE + 16);
    }

    static void setMetaEntries(MemorySegment page, long entries) {
        page.set(U64, Page.HEADER_SIZE + 16, entries);
    }

    static void setMetaRoot(MemorySegment page, long root, int height) {
        page.set(U32, Page.HEADER_SIZE + 8, (int) root);
        page.set(U32, Page.HEADER_SIZE + 12, height);
    }

    public static long metaRoot(MemorySegment page) {
        return Integer.toUnsignedLong(page.get(U32, Page.HEADER_SIZE + 8));
    }

    public static int metaHeight(MemorySegment page) {
        return page.get(U32, Page.HEADER_SIZE + 12);
    }

    /** First index {@code i} with {@code key(i) >= k} (count when none). */
    static int lowerBound(MemorySegment page, long k) {
        return lowerBound(page, k, count(page));
    }

    /** First index {@code i < n} with {@code key(i) >= k} ({@code n} when none). */
    static int lowerBound(MemorySegment page, long k, int n) {
        int lo = 0;
        int hi = n;
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
