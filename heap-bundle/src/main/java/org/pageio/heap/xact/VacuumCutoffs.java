package org.pageio.heap.xact;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import org.pageio.heap.HeapPage;

/**
 * What pruning and freezing may do now: PostgreSQL's {@code struct VacuumCutoffs}
 * ({@code vacuum_get_cutoffs}) reduced to {@link #oldestXmin} and {@link #freezeLimit} (no
 * multixacts, no {@code relfrozenxid}), with {@code HeapTupleSatisfiesVacuum}
 * ({@link #satisfiesVacuum}) judging tuples against them.
 *
 * <p><b>{@code OldestXmin}</b> is {@link Transactions#oldestXmin} when the cutoffs are taken: a
 * deleter that committed below it deleted for every snapshot open then or taken later, so its tuple
 * is {@link #HEAPTUPLE_DEAD} and may be removed. An id running when the cutoffs were taken is not
 * below it, nor is one handed out later, so a commit after this point never turns a tuple some
 * snapshot sees into a dead one.
 *
 * <p><b>{@code FreezeLimit}.</b> {@code VACUUM FREEZE} ({@code freezeAll}) freezes every tuple
 * whose inserter committed below {@code OldestXmin}: {@code FreezeLimit = OldestXmin}, as
 * PostgreSQL's {@code vacuum_freeze_min_age = 0}. Otherwise it is {@link Transactions#INVALID_XID}
 * (0) and nothing is frozen: pageio's departure from {@code vacuum_freeze_min_age} (50 million ids
 * by default), since pageio has no wraparound that freezing would have to prevent and its ids
 * would rarely reach any age.
 *
 * <p>Statuses come from {@link Transactions#status} (running, committed, aborted or stopped by a
 * crash); no hint bits are set, and the last 8 final answers (committed or aborted)
 * are cached. One VACUUM's or one scan's: the calling thread only.
 */
public final class VacuumCutoffs {

    /** {@code HEAPTUPLE_DEAD}: no snapshot sees the tuple, now or later; it may be removed. */
    public static final int HEAPTUPLE_DEAD = 0;
    /** {@code HEAPTUPLE_LIVE}: inserted by a committed transaction and not deleted (or the deleter aborted). */
    public static final int HEAPTUPLE_LIVE = 1;
    /** {@code HEAPTUPLE_RECENTLY_DEAD}: deleted by a committed transaction that an open snapshot may not see yet. */
    public static final int HEAPTUPLE_RECENTLY_DEAD = 2;
    /** {@code HEAPTUPLE_INSERT_IN_PROGRESS}: the inserter is still running. */
    public static final int HEAPTUPLE_INSERT_IN_PROGRESS = 3;
    /** {@code HEAPTUPLE_DELETE_IN_PROGRESS}: the inserter committed, the deleter is still running. */
    public static final int HEAPTUPLE_DELETE_IN_PROGRESS = 4;

    static final int CACHE = 8;

    private final Transactions xacts;
    private final long oldestXmin;
    private final long freezeLimit;
    private final int[] cacheXid = new int[CACHE];
    private final int[] cacheStatus = new int[CACHE];
    private int cacheNext;

    private VacuumCutoffs(Transactions xacts, long oldestXmin, long freezeLimit) {
        this.xacts = xacts;
        this.oldestXmin = oldestXmin;
        this.freezeLimit = freezeLimit;
    }

    /**
     * The cutoffs now ({@code vacuum_get_cutoffs}): {@link #oldestXmin} from {@code x}, and with
     * {@code freezeAll} ({@code VACUUM FREEZE}) a {@link #freezeLimit} equal to it, else 0.
     */
    public static VacuumCutoffs of(Transactions x, boolean freezeAll) {
        long oldest = x.oldestXmin();
        return new VacuumCutoffs(x, oldest, freezeAll ? oldest : Transactions.INVALID_XID);
    }

    /** {@code OldestXmin}: every id below it has ended, and every snapshot open or to come sees its outcome. */
    public long oldestXmin() {
        return oldestXmin;
    }

    /**
     * {@code FreezeLimit}: a tuple whose inserter committed below it is frozen by a VACUUM that
     * freezes; 0 (freeze nothing) unless the cutoffs were taken for {@code VACUUM FREEZE}.
     */
    public long freezeLimit() {
        return freezeLimit;
    }

    /** Whether {@code xid} precedes {@code limit} ({@code TransactionIdPrecedes}; the permanent ids 1 and 2 precede every normal id). */
    public static boolean precedes(int xid, long limit) {
        return Integer.toUnsignedLong(xid) < limit;
    }

    /**
     * {@code HeapTupleSatisfiesVacuum} for the tuple at offset {@code tupleOff} of {@code page}:
     * {@link #HEAPTUPLE_DEAD}, {@link #HEAPTUPLE_LIVE}, {@link #HEAPTUPLE_RECENTLY_DEAD},
     * {@link #HEAPTUPLE_INSERT_IN_PROGRESS} or {@link #HEAPTUPLE_DELETE_IN_PROGRESS}. Without
     * multixacts or subtransactions; a {@code t_xmax} with {@code HEAP_XMAX_LOCK_ONLY} is a row lock,
     * not a delete.
     *
     * <ul>
     *   <li>Inserter: frozen or {@code HEAP_XMIN_COMMITTED}: committed; {@code HEAP_XMIN_INVALID}:
     *       aborted, DEAD; else the status: running, INSERT_IN_PROGRESS (DELETE_IN_PROGRESS when the
     *       same transaction deleted it too); aborted or stopped by a crash, DEAD.</li>
     *   <li>Deleter: none ({@code HEAP_XMAX_INVALID}) or a lock: LIVE; running: DELETE_IN_PROGRESS;
     *       aborted or crashed: LIVE; committed ({@code HEAP_XMAX_COMMITTED} or the clog) below
     *       {@link #oldestXmin}: DEAD, otherwise RECENTLY_DEAD.</li>
     * </ul>
     */
    public int satisfiesVacuum(MemorySegment page, int tupleOff) {
        int infomask = HeapPage.infomask(page, tupleOff);
        if ((infomask & Snapshot.HEAP_XMIN_COMMITTED) == 0) { // frozen has HEAP_XMIN_COMMITTED set
            if ((infomask & Snapshot.HEAP_XMIN_INVALID) != 0) {
                return HEAPTUPLE_DEAD;
            }
            int xmin = HeapPage.xmin(page, tupleOff);
            switch (status(xmin)) {
                case Transactions.IN_PROGRESS -> {
                    if ((infomask & (Snapshot.HEAP_XMAX_INVALID | Snapshot.HEAP_XMAX_LOCK_ONLY)) != 0) {
                        return HEAPTUPLE_INSERT_IN_PROGRESS;
                    }
                    return HeapPage.xmax(page, tupleOff) == xmin ? HEAPTUPLE_DELETE_IN_PROGRESS
                            : HEAPTUPLE_INSERT_IN_PROGRESS;
                }
                case Transactions.COMMITTED -> {
                }
                default -> {
                    return HEAPTUPLE_DEAD; // aborted, or stopped by a crash
                }
            }
        }
        if ((infomask & (Snapshot.HEAP_XMAX_INVALID | Snapshot.HEAP_XMAX_LOCK_ONLY)) != 0) {
            return HEAPTUPLE_LIVE;
        }
        int xmax = HeapPage.xmax(page, tupleOff);
        if ((infomask & Snapshot.HEAP_XMAX_COMMITTED) == 0) {
            switch (status(xmax)) {
                case Transactions.IN_PROGRESS -> {
                    return HEAPTUPLE_DELETE_IN_PROGRESS;
                }
                case Transactions.COMMITTED -> {
                }
                default -> {
                    return HEAPTUPLE_LIVE; // the deleter aborted or was stopped by a crash
                }
            }
        }
        return precedes(xmax, oldestXmin) ? HEAPTUPLE_DEAD : HEAPTUPLE_RECENTLY_DEAD;
    }

    /** The status of {@code xid}, committed and aborted answers cached (they never change). */
    int status(int xid) {
        for (int i = 0; i < CACHE; i++) {
            if (cacheXid[i] == xid && xid != Transactions.INVALID_XID) {
                return cacheStatus[i];
            }
        }
        int s;
        try {
            s = xacts.status(xid);
        } catch (IOException e) {
            throw new UncheckedIOException("reading the status of transaction " + Integer.toUnsignedString(xid)
                    + " in the commit log: " + e.getMessage(), e);
        }
        if (s != Transactions.IN_PROGRESS) {
            cacheXid[cacheNext] = xid;
            cacheStatus[cacheNext] = s;
            cacheNext = (cacheNext + 1) % CACHE;
        }
        return s;
    }
}
