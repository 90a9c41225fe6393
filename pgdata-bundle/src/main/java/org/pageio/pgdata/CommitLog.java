package org.pageio.pgdata;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * A stopped cluster's commit log, {@code pg_xact}, read as {@code clog.c}'s
 * {@code TransactionIdGetStatus} reads it: two bits per transaction id
 * ({@code CLOG_BITS_PER_XACT}), four ids a byte ({@code CLOG_XACTS_PER_BYTE}), 32,768 a page
 * ({@code CLOG_XACTS_PER_PAGE}), 32 pages a segment file ({@code SLRU_PAGES_PER_SEGMENT}), the files
 * named by the segment number in four or more hex digits ({@code 0000}, {@code 0001}, …). Within a
 * byte the lowest two bits are the lowest id: {@code (byte >> (xid % 4) * 2) & 3}.
 *
 * <p>{@link #didCommit} is {@code TransactionIdDidCommit} for a cluster shut down cleanly, where no
 * transaction runs:
 * <ul>
 *   <li>{@code TRANSACTION_STATUS_COMMITTED}: committed;</li>
 *   <li>{@code TRANSACTION_STATUS_ABORTED}: not committed;</li>
 *   <li>{@code TRANSACTION_STATUS_IN_PROGRESS}: not committed. A clean shutdown leaves an id in
 *       progress only when its transaction was prepared ({@code PREPARE TRANSACTION}), still
 *       uncommitted; a backend that died before writing its abort leaves one too. Every snapshot
 *       taken now sees neither's changes, so for visibility both are "did not commit", as
 *       {@code TransactionIdDidCommit} answers;</li>
 *   <li>{@code TRANSACTION_STATUS_SUB_COMMITTED}: a subtransaction whose parent's commit was not
 *       recorded yet; whether it committed is its parent's status, found in {@code pg_subtrans},
 *       which pageio does not read: refused, naming the transaction;</li>
 *   <li>ids below {@code FirstNormalTransactionId} (3) are not in the log ({@code TransactionLogFetch}):
 *       {@code BootstrapTransactionId} (1) and {@code FrozenTransactionId} (2) committed,
 *       {@code InvalidTransactionId} (0) not.</li>
 * </ul>
 *
 * <p><b>Reads.</b> The log is small (a segment file covers a million transactions in 256 kB): a
 * segment file is read whole, with plain file reads, the first time one of its ids is asked for, and
 * kept; nothing else is allocated per call. A segment file or page that is missing (an id beyond the
 * log, or a damaged cluster) is refused with {@code SlruReportIOError}'s words, naming the file.
 *
 * <p>One thread at a time; holds no file open.
 */
public final class CommitLog {

    /** {@code TRANSACTION_STATUS_IN_PROGRESS}. */
    public static final int TRANSACTION_STATUS_IN_PROGRESS = 0x00;
    /** {@code TRANSACTION_STATUS_COMMITTED}. */
    public static final int TRANSACTION_STATUS_COMMITTED = 0x01;
    /** {@code TRANSACTION_STATUS_ABORTED}. */
    public static final int TRANSACTION_STATUS_ABORTED = 0x02;
    /** {@code TRANSACTION_STATUS_SUB_COMMITTED}. */
    public static final int TRANSACTION_STATUS_SUB_COMMITTED = 0x03;

    /** {@code InvalidTransactionId}. */
    public static final int INVALID_TRANSACTION_ID = 0;
    /** {@code BootstrapTransactionId}. */
    public static final int BOOTSTRAP_TRANSACTION_ID = 1;
    /** {@code FrozenTransactionId}. */
    public static final int FROZEN_TRANSACTION_ID = 2;
    /** {@code FirstNormalTransactionId}. */
    public static final int FIRST_NORMAL_TRANSACTION_ID = 3;

    /** {@code CLOG_BITS_PER_XACT}. */
    static final int CLOG_BITS_PER_XACT = 2;
    /** {@code CLOG_XACTS_PER_BYTE}. */
    static final int CLOG_XACTS_PER_BYTE = 4;
    /** {@code CLOG_XACTS_PER_PAGE}: {@code BLCKSZ * CLOG_XACTS_PER_BYTE}. */
    static final int CLOG_XACTS_PER_PAGE = 8192 * CLOG_XACTS_PER_BYTE;
    /** {@code CLOG_XACT_BITMASK}. */
    static final int CLOG_XACT_BITMASK = (1 << CLOG_BITS_PER_XACT) - 1;
    /** {@code SLRU_PAGES_PER_SEGMENT}. */
    static final int SLRU_PAGES_PER_SEGMENT = 32;
    /** Transaction ids a segment file covers. */
    private static final long XACTS_PER_SEGMENT = (long) CLOG_XACTS_PER_PAGE * SLRU_PAGES_PER_SEGMENT;
    /** Segment files of the whole 32-bit id space. */
    private static final int SEGMENTS = (int) ((1L << 32) / XACTS_PER_SEGMENT);

    private final Path directory;
    /** Segment files read so far, by segment number; null: not read yet. */
    private final byte[][] segments = new byte[SEGMENTS][];

    /** The commit log in {@code directory} (a cluster's {@code pg_xact}). */
    public CommitLog(Path directory) {
        this.directory = directory;
    }

    /** The commit log of {@code cluster}: its {@code pg_xact}. */
    public static CommitLog of(PgCluster cluster) {
        return new CommitLog(cluster.directory().resolve("pg_xact"));
    }

    /** The directory read. */
    public Path directory() {
        return directory;
    }

    /**
     * {@code TransactionIdGetStatus}: the two bits of {@code xid} (unsigned), one of the
     * {@code TRANSACTION_STATUS_*} constants. For an id below {@code FirstNormalTransactionId}, the
     * status {@code TransactionLogFetch} gives it (committed for 1 and 2, aborted for 0).
     *
     * @throws PgDataException when the log does not hold {@code xid}'s page, naming the file
     */
    public int status(int xid) throws PgDataException {
        if (Integer.compareUnsigned(xid, FIRST_NORMAL_TRANSACTION_ID) < 0) {
            return xid == INVALID_TRANSACTION_ID ? TRANSACTION_STATUS_ABORTED : TRANSACTION_STATUS_COMMITTED;
        }
        long id = Integer.toUnsignedLong(xid);
        int segno = (int) (id / XACTS_PER_SEGMENT);
        byte[] segment = segments[segno];
        if (segment == null) {
            segment = readSegment(xid, segno);
        }
        int byteno = (int) (id % XACTS_PER_SEGMENT / CLOG_XACTS_PER_BYTE); // TransactionIdToPage, ToPgIndex, ToByte
        if (byteno >= segment.length) {
            int pageno = (int) (id / CLOG_XACTS_PER_PAGE);
            throw new PgDataException("could not access status of transaction " + id + ": could not read from file \""
                    + segmentPath(segno) + "\" at offset " + (long) pageno % SLRU_PAGES_PER_SEGMENT * 8192
                    + ": read too few bytes (the file holds " + segment.length / 8192 + " of its pages)");
        }
        int bshift = (int) (id % CLOG_XACTS_PER_BYTE) * CLOG_BITS_PER_XACT; // TransactionIdToBIndex * CLOG_BITS_PER_XACT
        return (segment[byteno] >> bshift) & CLOG_XACT_BITMASK;
    }

    /**
     * {@code TransactionIdDidCommit} in a stopped cluster: whether {@code xid} committed (the class
     * comment: in progress and aborted both did not).
     *
     * @throws PgDataException for a subtransaction marked {@code TRANSACTION_STATUS_SUB_COMMITTED}
     *         (its fate is its parent's, in {@code pg_subtrans}, which pageio does not read), or a
     *         log that does not hold {@code xid}
     */
    public boolean didCommit(int xid) throws PgDataException {
        int status = status(xid);
        if (status == TRANSACTION_STATUS_SUB_COMMITTED) {
            throw new PgDataException("transaction " + Integer.toUnsignedString(xid) + " is TRANSACTION_STATUS_SUB_COMMITTED in \""
                    + directory + "\": whether it committed is its parent's status, in pg_subtrans, which pageio does not read");
        }
        return status == TRANSACTION_STATUS_COMMITTED;
    }

    /** {@code SlruFileName}: the segment number in at least four hex digits, upper case. */
    Path segmentPath(int segno) {
        return directory.resolve(String.format("%04X", segno));
    }

    private byte[] readSegment(int xid, int segno) throws PgDataException {
        Path file = segmentPath(segno);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            int whole = (int) Math.min(size - size % 8192, XACTS_PER_SEGMENT / CLOG_XACTS_PER_BYTE);
            ByteBuffer b = ByteBuffer.allocate(whole);
            while (b.hasRemaining()) {
                if (ch.read(b, b.position()) < 0) {
                    break;
                }
            }
            byte[] bytes = b.position() == whole ? b.array() : Arrays.copyOf(b.array(), b.position());
            segments[segno] = bytes;
            return bytes;
        } catch (NoSuchFileException e) {
            throw new PgDataException("could not access status of transaction " + Integer.toUnsignedString(xid)
                    + ": could not open file \"" + file + "\": No such file or directory");
        } catch (IOException e) {
            throw new PgDataException("could not access status of transaction " + Integer.toUnsignedString(xid)
                    + ": could not read file \"" + file + "\": " + e.getMessage());
        }
    }
}
