package org.pageio.heap.xact;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import org.pageio.heap.HeapPage;

/**
 * An MVCC snapshot and PostgreSQL's {@code HeapTupleSatisfiesMVCC} reduced to what pageio has (no
 * subtransactions, no multixacts, no row locks, no command ids inside a transaction): "everything
 * committed before the snapshot was taken". An id is <em>in the snapshot</em> (still running for
 * it, {@code XidInMVCCSnapshot}) when it is {@code >= xmax} or among the ids running then.
 *
 * <p>A tuple is visible when its inserter is committed and not in the snapshot (frozen, or
 * {@code HEAP_XMIN_COMMITTED}, or committed in the clog) and its deleter is not: {@code t_xmax}
 * invalid ({@code HEAP_XMAX_INVALID}), aborted (or stopped by a crash), or in the snapshot.
 * pageio sets no hint bits while reading (a scan never dirties a page): it asks the clog, and
 * caches the last few answers per snapshot.
 *
 * <p><b>Registered while open.</b> {@link Transactions#snapshot} registers it with its {@link #xmin}
 * (the lowest id running when it was taken, or {@link #xmax}); {@link #close} unregisters it.
 * While it is open, {@link Transactions#oldestXmin} is at most its {@code xmin}, so pruning never
 * removes a tuple it can see. Take it in try-with-resources.
 *
 * <p>One scan's: the calling thread only (the cache is not shared); {@link #close} from any thread.
 */
public final class Snapshot implements AutoCloseable {

    /** {@code t_infomask}: {@code HEAP_XMIN_COMMITTED}. */
    public static final int HEAP_XMIN_COMMITTED = 0x0100;
    /** {@code t_infomask}: {@code HEAP_XMIN_INVALID}. */
    public static final int HEAP_XMIN_INVALID = 0x0200;
    /** {@code t_infomask}: {@code HEAP_XMIN_FROZEN} = committed | invalid. */
    public static final int HEAP_XMIN_FROZEN = HEAP_XMIN_COMMITTED | HEAP_XMIN_INVALID;
    /** {@code t_infomask}: {@code HEAP_XMAX_COMMITTED}. */
    public static final int HEAP_XMAX_COMMITTED = 0x0400;
    /** {@code t_infomask}: {@code HEAP_XMAX_INVALID}. */
    public static final int HEAP_XMAX_INVALID = 0x0800;
    /** {@code t_infomask}: {@code HEAP_XMAX_LOCK_ONLY}. */
    public static final int HEAP_XMAX_LOCK_ONLY = 0x0080;
    /** {@code t_infomask}: {@code HEAP_UPDATED} (this is the new version of an updated row). */
    public static final int HEAP_UPDATED = 0x2000;
    /**
     * {@code t_infomask}: {@code HEAP_XMAX_BITS}, every bit about {@code t_xmax} (committed, invalid,
     * multi, the lock bits), cleared by {@code heap_delete} before it sets the new ones.
     */
    public static final int HEAP_XMAX_BITS = 0x0400 | 0x0800 | 0x1000 | 0x0080 | 0x0040 | 0x0010;
    /** {@code t_infomask2}: {@code HEAP_KEYS_UPDATED} (deleted, or updated with key columns changed). */
    public static final int HEAP_KEYS_UPDATED = 0x2000;
    /** {@code t_infomask2}: {@code HEAP_HOT_UPDATED}. */
    public static final int HEAP_HOT_UPDATED = 0x4000;
    /** {@code t_infomask2}: {@code HEAP_ONLY_TUPLE}. */
    public static final int HEAP_ONLY_TUPLE = 0x8000;

    private final Transactions xacts;
    private final long xmin;
    private final long xmax;
    private final int[] xip;
    /** Small cache of clog answers: xid → committed (both ints; -1 = empty). */
    private final int[] cacheXid = {-1, -1, -1, -1, -1, -1, -1, -1};
    private final boolean[] cacheCommitted = new boolean[8];
    private int cacheNext;

    Snapshot(Transactions xacts, long xmin, long xmax, int[] xip) {
        this.xacts = xacts;
        this.xmin = xmin;
        this.xmax = xmax;
        this.xip = xip;
    }

    /**
     * The lowest id that was running when this snapshot was taken, or {@link #xmax} when none was
     * ({@code SnapshotData.xmin}): every id below it had committed or aborted for this snapshot.
     */
    public long xmin() {
        return xmin;
    }

    /**
     * Unregisters this snapshot: it no longer holds {@link Transactions#oldestXmin} back. Calling
     * it again does nothing. The snapshot still answers afterwards, but pruning may then remove
     * what it sees.
     */
    @Override
    public void close() {
        xacts.unregister(this);
    }

    /** The first id this snapshot sees as still running ({@code xmax}). */
    public long xmax() {
        return xmax;
    }

    /** Whether {@code xid} counts as running for this snapshot ({@code XidInMVCCSnapshot}). */
    public boolean inSnapshot(int xid) {
        return Integer.toUnsignedLong(xid) >= xmax || Arrays.binarySearch(xip, xid) >= 0;
    }

    /** Whether {@code xid} committed before this snapshot: not in it, and committed in the clog. */
    public boolean committedBefore(int xid) {
        if (xid == Transactions.FROZEN_XID || xid == 1) {
            return true;
        }
        if (xid == Transactions.INVALID_XID || inSnapshot(xid)) {
            return false;
        }
        for (int i = 0; i < cacheXid.length; i++) {
            if (cacheXid[i] == xid) {
                return cacheCommitted[i];
            }
        }
        boolean c;
        try {
            c = xacts.status(xid) == Transactions.COMMITTED;
        } catch (IOException e) {
            throw new UncheckedIOException("reading the status of transaction " + Integer.toUnsignedString(xid)
                    + " in the commit log: " + e.getMessage(), e);
        }
        cacheXid[cacheNext] = xid;
        cacheCommitted[cacheNext] = c;
        cacheNext = (cacheNext + 1) % cacheXid.length;
        return c;
    }

    /**
     * {@code HeapTupleSatisfiesMVCC} for the tuple at offset {@code tuple} of {@code page}: whether
     * this snapshot sees it.
     */
    public boolean visible(MemorySegment page, int tuple) {
        int infomask = HeapPage.infomask(page, tuple);
        if ((infomask & HEAP_XMIN_FROZEN) == HEAP_XMIN_FROZEN) {
            // frozen: inserted before every snapshot
        } else if ((infomask & HEAP_XMIN_INVALID) != 0) {
            return false; // inserter aborted
        } else {
            int xmin = HeapPage.xmin(page, tuple);
            if ((infomask & HEAP_XMIN_COMMITTED) != 0 ? inSnapshot(xmin) : !committedBefore(xmin)) {
                return false; // inserted by a transaction still running for us, aborted, or stopped by a crash
            }
        }
        if ((infomask & HEAP_XMAX_INVALID) != 0 || (infomask & HEAP_XMAX_LOCK_ONLY) != 0) {
            return true;
        }
        int xmax = HeapPage.xmax(page, tuple);
        if ((infomask & HEAP_XMAX_COMMITTED) != 0) {
            return inSnapshot(xmax);
        }
        return !committedBefore(xmax); // deleter running for us, aborted or stopped by a crash: still visible
    }

    /**
     * {@code heap_hot_search_buffer}: the offset of the version of the row whose chain starts at
     * {@code line} (an index entry's TID) that this snapshot sees, or -1. A root pruned to
     * {@code LP_REDIRECT} leads to its chain's first surviving member; from a {@code HEAP_HOT_UPDATED}
     * tuple the chain goes through its {@code t_ctid} line on the same page to a
     * {@code HEAP_ONLY_TUPLE} whose {@code t_xmin} is the updater (otherwise the chain is broken: its
     * end was pruned and the line used again). An {@code LP_DEAD} or {@code LP_UNUSED} line ends the
     * chain; a heap-only tuple cannot start one. At most one version of a row is visible to a
     * snapshot.
     */
    public int hotSearch(MemorySegment page, int line) {
        int lines = HeapPage.lineCount(page);
        if (line < 1 || line > lines) {
            return -1;
        }
        boolean atChainStart = true;
        int prevXmax = Transactions.INVALID_XID;
        for (int hops = 0; hops <= HeapPage.MAX_TUPLES; hops++) {
            int lp = HeapPage.linePointer(page, line);
            if (HeapPage.lpFlags(lp) == HeapPage.LP_REDIRECT) {
                int next = HeapPage.lpOff(lp);
                if (!atChainStart || next < 1 || next > lines || next == line) {
                    return -1; // a redirect only starts a chain
                }
                line = next;
                atChainStart = false;
                continue;
            }
            int off = HeapPage.tupleOffset(page, line);
            if (off < 0) {
                return -1; // LP_UNUSED or LP_DEAD: the end of the chain
            }
            int infomask2 = HeapPage.infomask2(page, off);
            boolean heapOnly = (infomask2 & HEAP_ONLY_TUPLE) != 0;
            if (atChainStart == heapOnly) {
                return -1; // a heap-only tuple at an index entry's line, or a non-heap-only one inside a chain
            }
            if (prevXmax != Transactions.INVALID_XID && HeapPage.xmin(page, off) != prevXmax) {
                return -1; // not the version the previous one was updated to
            }
            if (visible(page, off)) {
                return off;
            }
            if ((infomask2 & HEAP_HOT_UPDATED) == 0) {
                return -1;
            }
            int next = HeapPage.ctidLine(page, off);
            if (next < 1 || next > lines || next == line) {
                return -1;
            }
            prevXmax = HeapPage.xmax(page, off);
            line = next;
            atChainStart = false;
        }
        return -1;
    }
}
