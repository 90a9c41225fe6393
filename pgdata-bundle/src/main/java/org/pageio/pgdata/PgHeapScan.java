package org.pageio.pgdata;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.page.PageVerifier;
import org.pageio.bufmgr.page.PgChecksum;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.heap.HeapPage;

/**
 * {@code SELECT count(*)} of a PostgreSQL heap in a stopped cluster, each tuple's visibility decided
 * as {@code HeapTupleSatisfiesMVCC} decides it for a snapshot taken now: one that sees every
 * transaction that committed, and no other (after a clean shutdown nothing runs).
 *
 * <p><b>The scan</b> is {@code heapgettup_pagemode}'s: one read stream over the heap's blocks
 * ({@code SEQUENTIAL | USE_BATCHING}, a bulk-read ring, on the pool's {@code io_method}); on each page
 * ({@code heap_prepare_pagescan}) every {@code LP_NORMAL} line pointer is a tuple, and a page with
 * {@code PD_ALL_VISIBLE} counts them all without looking at them, as {@code all_visible} does there.
 * Each page is first checked as {@code PageIsVerified} checks it ({@link #verifyPage}): a bad header
 * or checksum is {@code invalid page in block N of relation …}, never a count over damage. New pages
 * hold no tuples.
 *
 * <p><b>A tuple</b> on another page is visible when ({@code HeapTupleSatisfiesMVCC}):
 * <ol>
 *   <li>its inserter committed: {@code HEAP_XMIN_COMMITTED} (with {@code HEAP_XMIN_INVALID} too:
 *       {@code HEAP_XMIN_FROZEN}), else not {@code HEAP_XMIN_INVALID} (aborted) and
 *       {@code TransactionIdDidCommit(xmin)} in {@code pg_xact} ({@link CommitLog});</li>
 *   <li>and it is not deleted: {@code HEAP_XMAX_INVALID}, or {@code HEAP_XMAX_IS_LOCKED_ONLY} (a row
 *       lock, a lock-only multixact included, deletes nothing), or its deleter did not commit
 *       ({@code HEAP_XMAX_COMMITTED} unset and {@code TransactionIdDidCommit(xmax)} false).</li>
 * </ol>
 * {@code HEAP_UPDATED}, {@code t_ctid} and HOT chains do not matter to a count: every version is
 * judged on its own, and exactly one of a committed chain is visible.
 *
 * <p><b>Refused</b>, naming relation, file, block and item, where the answer needs a file pageio does
 * not read: an xmax that is a {@code MultiXactId} ({@code HEAP_XMAX_IS_MULTI}) and not lock-only
 * (its updater is in {@code pg_multixact}); an inserter or deleter marked
 * {@code TRANSACTION_STATUS_SUB_COMMITTED} (its parent is in {@code pg_subtrans}); a tuple moved by a
 * pre-9.0 {@code VACUUM FULL} ({@code HEAP_MOVED_OFF}, {@code HEAP_MOVED_IN} without
 * {@code HEAP_XMIN_COMMITTED}); an {@code LP_NORMAL} line pointer outside the page.
 *
 * <p>One thread, the caller's. Nothing allocated per page or tuple; the commit log reads a segment
 * file the first time one of its ids is needed.
 */
public final class PgHeapScan {

    /** {@code HEAP_XMAX_KEYSHR_LOCK}. */
    static final int HEAP_XMAX_KEYSHR_LOCK = 0x0010;
    /** {@code HEAP_XMAX_EXCL_LOCK}. */
    static final int HEAP_XMAX_EXCL_LOCK = 0x0040;
    /** {@code HEAP_XMAX_LOCK_ONLY}: xmax, if valid, is only a locker. */
    static final int HEAP_XMAX_LOCK_ONLY = 0x0080;
    /** {@code HEAP_XMAX_SHR_LOCK}. */
    static final int HEAP_XMAX_SHR_LOCK = HEAP_XMAX_EXCL_LOCK | HEAP_XMAX_KEYSHR_LOCK;
    /** {@code HEAP_LOCK_MASK}. */
    static final int HEAP_LOCK_MASK = HEAP_XMAX_SHR_LOCK | HEAP_XMAX_EXCL_LOCK | HEAP_XMAX_KEYSHR_LOCK;
    /** {@code HEAP_XMIN_COMMITTED}. */
    static final int HEAP_XMIN_COMMITTED = 0x0100;
    /** {@code HEAP_XMIN_INVALID}. */
    static final int HEAP_XMIN_INVALID = 0x0200;
    /** {@code HEAP_XMAX_COMMITTED}. */
    static final int HEAP_XMAX_COMMITTED = 0x0400;
    /** {@code HEAP_XMAX_INVALID}. */
    static final int HEAP_XMAX_INVALID = 0x0800;
    /** {@code HEAP_XMAX_IS_MULTI}. */
    static final int HEAP_XMAX_IS_MULTI = 0x1000;
    /** {@code HEAP_MOVED_OFF | HEAP_MOVED_IN}: moved by a pre-9.0 {@code VACUUM FULL}. */
    static final int HEAP_MOVED = 0x4000 | 0x8000;

    /**
     * What the scan found.
     *
     * @param blocks            the heap's blocks ({@code RelationGetNumberOfBlocks})
     * @param allVisiblePages   pages with {@code PD_ALL_VISIBLE}, counted without a visibility test
     * @param tuples            {@code LP_NORMAL} line pointers, every version of every row
     * @param visible           tuples visible to the snapshot: {@code count(*)}
     * @param commitLogLookups  {@code TransactionIdDidCommit} calls: tuples whose hint bits did not decide
     */
    public record Count(long blocks, long allVisiblePages, long tuples, long visible, long commitLogLookups) {
    }

    private final PgCluster cluster;
    private final CommitLog clog;
    private final PgChecksum checksum = new PgChecksum();
    private long lookups;

    private PgHeapScan(PgCluster cluster) {
        this.cluster = cluster;
        this.clog = CommitLog.of(cluster);
    }

    /**
     * {@code SELECT count(*) FROM rel} for the heap whose main fork's file is
     * {@code relationFilepath} ({@code pg_relation_filepath()}'s: {@code base/5/16384}), read through
     * {@code pool} (the cluster's: {@link PgCluster#openBufferManager}).
     *
     * @throws PgDataException for a refusal (class comment) or a damaged page, naming relation, file,
     *         block and, for a tuple, its item
     * @throws IllegalArgumentException for a path that is not a relation's
     */
    public static Count count(PgCluster cluster, BufferPool pool, String relationFilepath) throws IOException {
        return count(cluster, pool, relationFilepath, ReadStream.Options.DEFAULT);
    }

    /**
     * {@link #count(PgCluster, BufferPool, String)} with the read stream's settings overridden
     * ({@code effective_io_concurrency}, {@code io_combine_limit}: {@link ReadStream.Options}), as a
     * scan run with {@code SET effective_io_concurrency} reads.
     */
    public static Count count(PgCluster cluster, BufferPool pool, String relationFilepath, ReadStream.Options options)
            throws IOException {
        cluster.requireOwnPool(pool);
        SmgrRelation rel = cluster.relation(relationFilepath);
        if (!rel.exists()) {
            throw new PgDataException("could not open file \"" + rel.segmentPath(0) + "\": No such file or directory (relation "
                    + relationFilepath + ")");
        }
        return new PgHeapScan(cluster).scan(pool, relationFilepath, rel, options);
    }

    private Count scan(BufferPool pool, String relpath, SmgrRelation rel, ReadStream.Options options) throws IOException {
        boolean checksums = cluster.controlFile().dataChecksums();
        long allVisiblePages = 0;
        long tuples = 0;
        long visible = 0;
        try {
            long nblocks = rel.nblocks();
            BufferAccessStrategy ring = pool.strategy(BufferAccessStrategy.Type.BULKREAD);
            try (BufferSession session = pool.openSession("count");
                    ReadStream stream = new ReadStream(session, rel, ReadStream.blockRange(0, nblocks),
                            ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING, ring, options)) {
                for (long block = 0; block < nblocks; block++) {
                    int buf = stream.next();
                    try {
                        MemorySegment page = session.page(buf);
                        verifyPage(page, block, checksums, rel, checksum);
                        int lines = HeapPage.lineCount(page); // PageGetMaxOffsetNumber: 0 on a new page
                        boolean allVisible = HeapPage.allVisible(page);
                        if (allVisible) {
                            allVisiblePages++;
                        }
                        for (int line = 1; line <= lines; line++) {
                            int lp = HeapPage.linePointer(page, line);
                            if (HeapPage.lpFlags(lp) != HeapPage.LP_NORMAL) {
                                continue;
                            }
                            int tuple = HeapPage.tupleOffset(page, line);
                            if (tuple < 0) {
                                throw new PgDataException(where(relpath, rel, block, line) + ": line pointer (lp_off "
                                        + HeapPage.lpOff(lp) + ", lp_len " + HeapPage.lpLen(lp) + ") lies outside the page");
                            }
                            tuples++;
                            if (allVisible || satisfiesMvcc(page, tuple, relpath, rel, block, line)) {
                                visible++;
                            }
                        }
                    } finally {
                        session.releaseBuffer(buf);
                    }
                }
            }
            return new Count(nblocks, allVisiblePages, tuples, visible, lookups);
        } finally {
            rel.close();
        }
    }

    /** {@code HeapTupleSatisfiesMVCC} for a snapshot that sees every committed transaction (class comment). */
    private boolean satisfiesMvcc(MemorySegment page, int tuple, String relpath, SmgrRelation rel, long block, int line)
            throws PgDataException {
        int infomask = HeapPage.infomask(page, tuple);
        if ((infomask & HEAP_XMIN_COMMITTED) == 0) { // !HeapTupleHeaderXminCommitted
            if ((infomask & HEAP_XMIN_INVALID) != 0) { // HeapTupleHeaderXminInvalid: aborted
                return false;
            }
            if ((infomask & HEAP_MOVED) != 0) {
                throw new PgDataException(where(relpath, rel, block, line) + ": the tuple was moved by a pre-9.0 VACUUM FULL"
                        + " (HEAP_MOVED_OFF or HEAP_MOVED_IN), whose visibility pageio does not decide");
            }
            if (!didCommit(HeapPage.xmin(page, tuple), "xmin", relpath, rel, block, line)) {
                return false; // aborted, or never committed
            }
        }
        // xmin committed
        if ((infomask & HEAP_XMAX_INVALID) != 0) { // xid invalid or aborted
            return true;
        }
        if (xmaxIsLockedOnly(infomask)) {
            return true;
        }
        if ((infomask & HEAP_XMAX_IS_MULTI) != 0) {
            throw new PgDataException(where(relpath, rel, block, line) + ": xmax " + Integer.toUnsignedString(HeapPage.xmax(page, tuple))
                    + " is a MultiXactId (HEAP_XMAX_IS_MULTI) that is not lock-only: whether its updater committed is in"
                    + " pg_multixact, which pageio does not read");
        }
        if ((infomask & HEAP_XMAX_COMMITTED) == 0) {
            // the deleter aborted, or never committed: the tuple is live
            return !didCommit(HeapPage.xmax(page, tuple), "xmax", relpath, rel, block, line);
        }
        // xmax transaction committed
        return false;
    }

    /** {@code HEAP_XMAX_IS_LOCKED_ONLY(infomask)}: xmax only locks the row (or is a pre-9.3 exclusive lock). */
    static boolean xmaxIsLockedOnly(int infomask) {
        return (infomask & HEAP_XMAX_LOCK_ONLY) != 0
                || (infomask & (HEAP_XMAX_IS_MULTI | HEAP_LOCK_MASK)) == HEAP_XMAX_EXCL_LOCK;
    }

    private boolean didCommit(int xid, String which, String relpath, SmgrRelation rel, long block, int line) throws PgDataException {
        lookups++;
        try {
            return clog.didCommit(xid);
        } catch (PgDataException e) {
            throw new PgDataException(where(relpath, rel, block, line) + ": " + which + " " + Integer.toUnsignedString(xid)
                    + ": " + e.getMessage());
        }
    }

    private static String where(String relpath, SmgrRelation rel, long block, int line) {
        return "relation " + relpath + " (file \"" + rel.segmentPath(block) + "\"), block " + block + ", item " + line;
    }

    /**
     * {@code PageIsVerified} on a page of {@code rel} read from relation block {@code block}: a page
     * that is not new has a sane header ({@code pd_flags} within {@code PD_VALID_FLAG_BITS},
     * {@code pd_lower <= pd_upper <= pd_special <= BLCKSZ}, {@code pd_special} MAXALIGNed) and, with
     * data checksums, {@code pg_checksum_page(page, block)} equal to {@code pd_checksum}; a new page
     * ({@code pd_upper == 0}) is all zeros.
     *
     * @throws PgDataException {@code invalid page in block N of relation …}, saying what is wrong
     */
    static void verifyPage(MemorySegment page, long block, boolean checksums, SmgrRelation rel, PgChecksum pg)
            throws PgDataException {
        String problem;
        if (Page.isNew(page)) {
            if (PageVerifier.isAllZero(page)) {
                return;
            }
            problem = "pd_upper is 0 but the page is not all zeros";
        } else {
            int flags = Page.flags(page);
            int lower = Page.lower(page);
            int upper = Page.upper(page);
            int special = Page.special(page);
            if ((flags & ~Page.PD_VALID_FLAG_BITS) != 0 || lower > upper || upper > special || special > Page.SIZE
                    || special != Page.maxAlign(special)) {
                problem = "page header is not sane (pd_flags 0x" + Integer.toHexString(flags) + ", pd_lower " + lower
                        + ", pd_upper " + upper + ", pd_special " + special + ")";
            } else if (checksums) {
                int calculated = pg.checksumPage(page, block);
                int stored = Page.storedChecksum(page);
                if (calculated == stored) {
                    return;
                }
                problem = String.format("page verification failed, calculated checksum %d but expected %d", calculated, stored);
            } else {
                return;
            }
        }
        throw new PgDataException("invalid page in block " + block + " of relation \"" + rel.segmentPath(block) + "\": " + problem);
    }
}
