package org.pageio.heap.xact;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Locale;

/**
 * Transaction ids and their status, durable: PostgreSQL's {@code nextXid} ({@code varsup.c}) and
 * commit log ({@code clog.c}, {@code pg_xact}).
 *
 * <p><b>The counter.</b> Ids start at {@link #FIRST_NORMAL_XID} (3; 0 is invalid, 1 bootstrap, 2
 * frozen). The control file {@code <data>/pg_xid_control} holds a limit: every id handed out is
 * below it. When the next id reaches the limit, the limit moves {@link #XID_PREFETCH} ids ahead and
 * is written first (tmp file, fsync, atomic rename, directory fsync), as PostgreSQL logs the next
 * range of OIDs before handing one out. After a restart counting starts at the limit on disk, so an
 * id is never handed out twice; the ones skipped are simply never used.
 *
 * <p><b>The commit log.</b> {@code <data>/pg_xact/SSSS}: two bits per id ({@link #IN_PROGRESS} 0,
 * {@link #COMMITTED} 1, {@link #ABORTED} 2; PostgreSQL's {@code TRANSACTION_STATUS_*}), id
 * {@code x} in byte {@code x / 4} at bit {@code (x % 4) * 2}, 32 pages of 8 KiB per segment file
 * (1,048,576 ids) named by the segment number in 4 hex digits: {@code clog.c}'s bytes. A commit
 * writes its two bits and fsyncs the segment before {@link #commit} returns; an abort is written
 * without fsync (a lost abort reads as in progress, which after a restart is aborted). Bytes beyond
 * a file's end read as 0, in progress.
 *
 * <p><b>After a crash.</b> An id whose status on disk is still in progress and that this instance
 * did not hand out (it is not running) was running when the process stopped: {@link #status} reads
 * it as aborted ({@code TransactionIdDidCommit} false and {@code TransactionIdIsInProgress} false).
 *
 * <p><b>The horizon.</b> Every {@link Snapshot} is registered from {@link #snapshot} until it is
 * closed, with its {@code xmin} (the lowest id running when it was taken, or its {@code xmax} when
 * none was). {@link #oldestXmin} is the oldest of those and of the ids running now, or
 * {@link #nextXid} when there are none: PostgreSQL's {@code GetOldestNonRemovableTransactionId}
 * (the {@code GlobalVisState} horizon) for one data directory, without replication slots or
 * {@code vacuum_defer_cleanup_age}. A tuple deleted by a transaction that committed before
 * {@code oldestXmin} is seen by no snapshot now or later, so pruning may remove it
 * ({@link VacuumCutoffs#satisfiesVacuum}).
 *
 * <p>One instance per data directory (the table engine's); thread-safe, every method synchronised.
 * No wraparound: ids are 32 bits and the counter refuses to pass {@link #MAX_XID}.
 */
public final class Transactions {

    public static final int INVALID_XID = 0;
    public static final int FROZEN_XID = 2;
    public static final int FIRST_NORMAL_XID = 3;
    /** The last id pageio hands out (no wraparound: {@code 2^31 - 1}, as far as PostgreSQL's horizon reaches). */
    public static final long MAX_XID = Integer.MAX_VALUE;
    /** Ids reserved by one control file write. */
    public static final int XID_PREFETCH = 1024;

    /** {@code TRANSACTION_STATUS_IN_PROGRESS}. */
    public static final int IN_PROGRESS = 0x00;
    /** {@code TRANSACTION_STATUS_COMMITTED}. */
    public static final int COMMITTED = 0x01;
    /** {@code TRANSACTION_STATUS_ABORTED}. */
    public static final int ABORTED = 0x02;

    /** Ids per clog byte ({@code CLOG_XACTS_PER_BYTE}). */
    public static final int XACTS_PER_BYTE = 4;
    /** Bytes per clog segment file: {@code SLRU_PAGES_PER_SEGMENT} (32) pages of 8 KiB. */
    public static final int SEGMENT_BYTES = 32 * 8192;
    /** Ids per segment file. */
    public static final long XACTS_PER_SEGMENT = (long) SEGMENT_BYTES * XACTS_PER_BYTE;

    static final String CONTROL = "pg_xid_control";
    static final String CLOG_DIR = "pg_xact";

    private final Path data;
    private final Path clogDir;
    private long nextXid;
    private long limit;
    /** Ids handed out by this instance and neither committed nor aborted (sorted, {@code nrunning} used). */
    private int[] running = new int[4];
    private int nrunning;
    /** Snapshots taken and not yet closed (PostgreSQL's registered snapshots, each proc's {@code xmin}). */
    private Snapshot[] snapshots = new Snapshot[8];
    private int nsnapshots;

    public Transactions(Path dataDirectory) throws IOException {
        this.data = dataDirectory;
        this.clogDir = dataDirectory.resolve(CLOG_DIR);
        Files.createDirectories(clogDir);
        long onDisk = readLimit();
        this.limit = onDisk;
        this.nextXid = onDisk;
    }

    private long readLimit() throws IOException {
        Path f = data.resolve(CONTROL);
        String s;
        try {
            s = Files.readString(f, StandardCharsets.US_ASCII).strip();
        } catch (NoSuchFileException e) {
            return FIRST_NORMAL_XID;
        }
        String key = "next_xid_limit=";
        if (!s.startsWith(key)) {
            throw new IOException("transaction id control file " + f + " is damaged: expected next_xid_limit=N, found \""
                    + s.lines().findFirst().orElse("") + "\"");
        }
        try {
            long v = Long.parseLong(s.substring(key.length()).strip());
            if (v < FIRST_NORMAL_XID || v > MAX_XID + XID_PREFETCH) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IOException("transaction id control file " + f + " is damaged: next_xid_limit is not a transaction id ("
                    + s + ")");
        }
    }

    private void writeLimit(long v) throws IOException {
        Path f = data.resolve(CONTROL);
        Path tmp = data.resolve(CONTROL + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(("next_xid_limit=" + v + "\n").getBytes(StandardCharsets.US_ASCII)));
            ch.force(true);
        }
        Files.move(tmp, f, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        fsyncDirectory(data);
    }

    private static void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    /** The id the next {@link #assign} hands out ({@code nextXid}). */
    public synchronized long nextXid() {
        return nextXid;
    }

    /**
     * A new transaction id, running until {@link #commit} or {@link #abort} ({@code GetNewTransactionId}).
     * The control file is written and fsynced first whenever the id reaches the reserved range's end.
     */
    public synchronized int assign() throws IOException {
        if (nextXid > MAX_XID) {
            throw new IOException("transaction ids are exhausted (" + MAX_XID + " handed out); pageio does not wrap around");
        }
        if (nextXid >= limit) {
            long l = Math.min(nextXid + XID_PREFETCH, MAX_XID + 1);
            writeLimit(l);
            limit = l;
        }
        int xid = (int) nextXid++;
        if (nrunning == running.length) {
            running = Arrays.copyOf(running, nrunning * 2);
        }
        running[nrunning++] = xid; // ids grow: the array stays sorted
        return xid;
    }

    /** Commits {@code xid}: its status is written and the clog segment fsynced before this returns. */
    public synchronized void commit(int xid) throws IOException {
        requireRunning(xid);
        setStatus(xid, COMMITTED, true);
        removeRunning(xid);
    }

    /** Aborts {@code xid} (not fsynced: a lost abort reads as aborted after a restart anyway). */
    public synchronized void abort(int xid) throws IOException {
        requireRunning(xid);
        try {
            setStatus(xid, ABORTED, false);
        } finally {
            removeRunning(xid);
        }
    }

    private void requireRunning(int xid) {
        if (Arrays.binarySearch(running, 0, nrunning, xid) < 0) {
            throw new IllegalStateException("transaction " + Integer.toUnsignedString(xid) + " is not running");
        }
    }

    private void removeRunning(int xid) {
        int i = Arrays.binarySearch(running, 0, nrunning, xid);
        if (i >= 0) {
            System.arraycopy(running, i + 1, running, i, nrunning - i - 1);
            nrunning--;
        }
    }

    /**
     * The status of {@code xid}: {@link #COMMITTED}, {@link #ABORTED}, or {@link #IN_PROGRESS} only
     * while this instance runs it; an id the clog shows in progress that is not running (a crash
     * stopped it) is {@link #ABORTED}. The frozen and bootstrap ids are committed.
     */
    public synchronized int status(int xid) throws IOException {
        long x = Integer.toUnsignedLong(xid);
        if (x == FROZEN_XID || x == 1) {
            return COMMITTED;
        }
        if (x == INVALID_XID) {
            return ABORTED;
        }
        if (Arrays.binarySearch(running, 0, nrunning, xid) >= 0) {
            return IN_PROGRESS;
        }
        int s = clogStatus(x);
        return s == COMMITTED ? COMMITTED : ABORTED;
    }

    /**
     * A snapshot of now: every id committed before this call is visible through it, none running or
     * handed out later ({@code GetSnapshotData} with {@code xmax = nextXid}, {@code xip} the ids
     * running and {@code xmin} the lowest of them, or {@code xmax}). It is registered until
     * {@link Snapshot#close}: while it is open, {@link #oldestXmin} is at most its {@code xmin}, so
     * nothing it can see is pruned. Take it in try-with-resources.
     */
    public synchronized Snapshot snapshot() {
        int[] xip = Arrays.copyOf(running, nrunning);
        Snapshot s = new Snapshot(this, nrunning > 0 ? running[0] : nextXid, nextXid, xip);
        if (nsnapshots == snapshots.length) {
            snapshots = Arrays.copyOf(snapshots, nsnapshots * 2);
        }
        snapshots[nsnapshots++] = s;
        return s;
    }

    /** {@link Snapshot#close}: forgets {@code s}; a snapshot already forgotten is left alone. */
    synchronized void unregister(Snapshot s) {
        for (int i = 0; i < nsnapshots; i++) {
            if (snapshots[i] == s) {
                System.arraycopy(snapshots, i + 1, snapshots, i, nsnapshots - i - 1);
                snapshots[--nsnapshots] = null;
                return;
            }
        }
    }

    /**
     * The oldest id any running transaction or open snapshot may still need
     * ({@code GetOldestNonRemovableTransactionId}): the lowest of the open snapshots' {@code xmin}s
     * and of the ids running now, or {@link #nextXid} when there are none. A deleter that committed
     * below it deleted for every snapshot there is or will be.
     */
    public synchronized long oldestXmin() {
        long oldest = nrunning > 0 ? Math.min(running[0], nextXid) : nextXid; // running is sorted
        for (int i = 0; i < nsnapshots; i++) {
            oldest = Math.min(oldest, snapshots[i].xmin());
        }
        return oldest;
    }

    /** Snapshots open now (tests, views). */
    public synchronized int openSnapshots() {
        return nsnapshots;
    }

    /** {@link VacuumCutoffs#of}: the cutoffs for pruning and freezing now. */
    public VacuumCutoffs vacuumCutoffs(boolean freezeAll) {
        return VacuumCutoffs.of(this, freezeAll);
    }

    /** The two bits on disk for {@code xid}; 0 (in progress) beyond a file's end or without the file. */
    synchronized int clogStatus(long xid) throws IOException {
        Path f = segment(xid);
        if (!Files.exists(f)) {
            return IN_PROGRESS;
        }
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            long pos = byteInSegment(xid);
            if (ch.read(b, pos) < 1) {
                return IN_PROGRESS;
            }
            return (b.get(0) >> shift(xid)) & 0x03;
        }
    }

    private void setStatus(int xid, int status, boolean fsync) throws IOException {
        long x = Integer.toUnsignedLong(xid);
        Path f = segment(x);
        boolean created = !Files.exists(f);
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            long pos = byteInSegment(x);
            int old = ch.read(b, pos) < 1 ? 0 : b.get(0);
            int v = (old & ~(0x03 << shift(x))) | (status << shift(x));
            ch.write(ByteBuffer.wrap(new byte[] {(byte) v}), pos);
            if (fsync) {
                ch.force(false);
            }
        }
        if (created && fsync) {
            fsyncDirectory(clogDir);
        }
    }

    /** The segment file of {@code xid}: {@code pg_xact/SSSS}. */
    Path segment(long xid) {
        return clogDir.resolve(String.format(Locale.ROOT, "%04X", xid / XACTS_PER_SEGMENT));
    }

    static long byteInSegment(long xid) {
        return xid % XACTS_PER_SEGMENT / XACTS_PER_BYTE;
    }

    static int shift(long xid) {
        return (int) (xid % XACTS_PER_BYTE) * 2;
    }
}
