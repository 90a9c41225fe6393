package org.pageio.bufmgr;

import org.pageio.api.IoHandle;
import org.pageio.api.IoReturn;
import org.pageio.bufmgr.smgr.SmgrRelation;

/**
 * One two-phase read of consecutive blocks (PostgreSQL's {@code ReadBuffersOperation}): started
 * by {@link BufferSession#startReadBuffers}, finished by {@link BufferSession#waitReadBuffers}.
 * Reused: a read stream keeps one per I/O slot, so reading allocates nothing. Owned by one
 * session's thread.
 */
public final class ReadBuffersOperation {

    /** Zero a page that fails verification, warn, and go on ({@code zero_damaged_pages}). */
    public static final int ZERO_ON_ERROR = 1;
    /**
     * Give the kernel {@code posix_fadvise(WILLNEED)} advice for the blocks that need I/O, before
     * the read starts (PostgreSQL's {@code READ_BUFFERS_ISSUE_ADVICE}): a read stream's advice, on
     * its random jumps. Blocks found in shared buffers are not advised. The read's handle then
     * carries {@link IoHandle#FLAG_ADVISED} ({@link #advised()}).
     */
    public static final int ISSUE_ADVICE = 2;
    /** Use a page whose checksum fails, with a warning ({@code ignore_checksum_failure}). */
    public static final int IGNORE_CHECKSUM_FAILURES = 4;
    /** Execute the read in the issuer, now: the caller will wait at once. */
    public static final int SYNCHRONOUSLY = 8;
    /**
     * Read the pages as they are stored: {@code zero_damaged_pages} and
     * {@code ignore_checksum_failure} do not apply to this read, so a damaged page fails it
     * whatever the settings say (a verification, which must see the damage, reads this way).
     *
     * @since 2.5.0
     */
    public static final int STRICT = 16;

    final BufferSession session;
    final IoReturn ret = new IoReturn();
    final long[] addresses;

    SmgrRelation rel;
    BufferAccessStrategy strategy;
    int flags;
    int[] buffers;
    int offset;
    long blockNum;
    int nblocks;
    int nblocksDone;
    /** Our own read in flight. */
    long ownRef = IoHandle.NO_WAIT_REF;
    /** Someone else's read of our first not-done block, adopted (PostgreSQL 19). */
    long foreignRef = IoHandle.NO_WAIT_REF;
    int ioBlocks;
    boolean readIssued;
    /** {@link #ISSUE_ADVICE} was asked for and the kernel took the advice for this read's blocks. */
    boolean advised;
    /** Entries of {@code buffers} from {@code offset} that are pinned after startReadBuffers. */
    int pinnedEntries;

    ReadBuffersOperation(BufferSession session, int maxBlocks) {
        this.session = session;
        this.addresses = new long[maxBlocks];
    }

    /** Blocks this operation covers (after {@code startReadBuffers} shortened it). */
    public int nblocks() {
        return nblocks;
    }

    public long blockNum() {
        return blockNum;
    }

    /**
     * How many entries from the operation's first one are pinned after {@code startReadBuffers}:
     * at least {@link #nblocks()}; more when a valid buffer cut the run short (it stays pinned to
     * be forwarded into the next call) or forwarded entries were not reached.
     */
    public int pinnedEntries() {
        return pinnedEntries;
    }

    /** Whether it issued at least one I/O of its own (for the read stream's statistics). */
    public boolean readIssued() {
        return readIssued;
    }

    /**
     * Whether {@link BufferSession#startReadBuffers} gave the kernel advice for this read's blocks
     * ({@link #ISSUE_ADVICE} asked for, and some blocks needed I/O).
     */
    public boolean advised() {
        return advised;
    }
}
