package org.pageio.pgdata;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.page.PgChecksum;
import org.pageio.bufmgr.smgr.ForkNumber;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stream.ReadStream;

/**
 * {@code pg_checksums --check} ({@code src/bin/pg_checksums/pg_checksums.c}) on a stopped cluster,
 * reading every page through the buffer manager: {@code scan_directory} over the cluster's files
 * ({@link PgCluster#relationFiles()}), then {@code scan_file} on each, with its rules:
 * <ul>
 *   <li>every whole block of the file counts as scanned ({@code blocks_scanned}), new ones too;</li>
 *   <li>a new page ({@code PageIsNew}: {@code pd_upper == 0}) has no checksum yet and is skipped;</li>
 *   <li>any other page's {@code pg_checksum_page(page, blockno + segmentno * RELSEG_SIZE)}
 *       ({@link PgChecksum}) is compared with its {@code pd_checksum}; a difference is a bad
 *       block, reported as {@code checksum verification failed in file "…", block N: calculated
 *       checksum X but block contains Y}, with N the block in the file;</li>
 *   <li>a file whose size is not a whole number of blocks ends the run after its whole blocks:
 *       {@code could not read block N in file "…": read R of 8192}, as pg_checksums' {@code pg_fatal}.</li>
 * </ul>
 *
 * <p><b>How the pages are read.</b> One {@link ReadStream} per segment file over the relation fork's
 * blocks in it, {@code SEQUENTIAL | USE_BATCHING}, with a bulk-read ring: look-ahead up to
 * {@code effective_io_concurrency} reads in flight, adjacent blocks combined up to
 * {@code io_combine_limit}, on the pool's {@code io_method}. The pool is the cluster's own
 * ({@link PgCluster#openBufferManager}), over its read-only storage manager whose read completion
 * checks nothing ({@code ReadVerification.NONE}): pageio's checksum, {@code zero_damaged_pages} and
 * {@code ignore_checksum_failure} never see these pages, and each page is checksummed once, here,
 * by PostgreSQL's algorithm on the page in shared buffers.
 *
 * <p><b>Several files in flight.</b> A read stream reads one relation fork; its look-ahead never
 * reaches into the next file. So {@code jobs} threads, each with its own session, ring and
 * {@link PgChecksum}, take the files in {@code scan_directory}'s order from a shared cursor, each
 * verifying one file at a time: up to {@code jobs} files are read at once, each with its own
 * look-ahead, and their pages checksummed on as many cores. The calling thread reports: it walks the
 * files in order, waits for each to be done, and tells the listener its bad blocks and the progress,
 * so the lines, their order and the counts are those of the one-thread walk whatever finishes first.
 * It parks only for a file not done yet, and that file's worker unparks it: no lock on the per-file
 * path (a cluster has about a thousand files, most a few blocks long, and a monitor taken per file
 * by two workers and the reporter was 7% of the workers' samples in a 2 GB verification).
 * A file that ends the run (a partial block, a failed read) stops the workers from taking more; the
 * files before it are reported, the ones after it are not. A relation's descriptors (every fork and
 * segment: the storage manager closes them together) are closed when its last file is done.
 * Nothing is allocated per page (a bad block is a record).
 */
public final class PgChecksums {

    /** What the run found, {@code pg_checksums}' summary. */
    public record Result(long filesScanned, long blocksScanned, long badChecksums, int dataChecksumVersion) {

        /** The summary as {@code pg_checksums --check} prints it. */
        public String summary() {
            return "Checksum operation completed\n"
                    + "Files scanned:   " + filesScanned + "\n"
                    + "Blocks scanned:  " + blocksScanned + "\n"
                    + "Bad checksums:  " + badChecksums + "\n"
                    + "Data checksum version: " + dataChecksumVersion;
        }
    }

    /**
     * A block whose checksum does not match.
     *
     * @param file       the segment file
     * @param block      the block in the file ({@code blockno} in pg_checksums' message)
     * @param calculated {@code pg_checksum_page} of the page at its relation block number
     * @param stored     its {@code pd_checksum}
     */
    public record BadBlock(RelationFile file, long block, int calculated, int stored) {

        /** {@code pg_checksums}' line, without its {@code pg_checksums: error: } prefix. */
        public String message() {
            return String.format("checksum verification failed in file \"%s\", block %d: calculated checksum %X but block contains %X",
                    file.path(), block, calculated, stored);
        }
    }

    /** What a run tells as it goes. Called on the thread that called {@code check}, in the files' order. */
    public interface Listener {
        /** A bad block, as it is found. */
        void badBlock(BadBlock bad);

        /** Bytes read so far of the total ({@code current_size}, {@code total_size}), after each file. */
        default void progress(long currentBytes, long totalBytes) {
        }
    }

    private PgChecksums() {
    }

    /**
     * Verifies every relation file of {@code cluster} through {@code pool} (one opened on the
     * cluster: {@link PgCluster#openBufferManager}), with as many files in flight as the machine
     * has processors.
     *
     * @throws PgDataException when data checksums are off ({@code data checksums are not enabled in
     *         cluster}, before any file is read), or for a file pg_checksums would stop at (a partial
     *         block, a name it cannot read)
     * @throws IOException naming the relation, block and file for a read that failed
     */
    public static Result check(PgCluster cluster, BufferPool pool, Listener listener) throws IOException {
        return check(cluster, pool, listener, Runtime.getRuntime().availableProcessors());
    }

    /**
     * Verifies every relation file of {@code cluster} through {@code pool} (one opened on the
     * cluster: {@link PgCluster#openBufferManager}) with {@code jobs} files in flight, each on a
     * thread and a session of its own; the listener is called on the calling thread, in the files'
     * order.
     *
     * @param jobs 1 or more: the files verified at once, at most the pool's {@code max_sessions} (1: the
     *             calling thread alone, one file at a time)
     * @throws PgDataException when data checksums are off ({@code data checksums are not enabled in
     *         cluster}, before any file is read), or for a file pg_checksums would stop at (a partial
     *         block, a name it cannot read)
     * @throws IOException naming the relation, block and file for a read that failed
     * @since 1.1.0
     */
    public static Result check(PgCluster cluster, BufferPool pool, Listener listener, int jobs) throws IOException {
        if (jobs < 1) {
            throw new IllegalArgumentException("pg_checksums: jobs must be 1 or more, not " + jobs);
        }
        ControlFile control = cluster.controlFile();
        if (!control.dataChecksums()) {
            throw new PgDataException("data checksums are not enabled in cluster (\"" + cluster.directory()
                    + "\": data_checksum_version 0)");
        }
        cluster.requireOwnPool(pool);
        Walk walk = new Walk(cluster, pool, cluster.relationFiles(), control.relsegSize());
        if (jobs == 1) {
            walk.work();
        } else {
            // a session per thread: no more threads than files, nor than the pool has session slots
            walk.start(Math.min(Math.min(jobs, pool.settings().maxSessions()), Math.max(1, walk.files.size())));
        }
        try {
            return walk.report(listener, control.dataChecksumVersion());
        } finally {
            walk.stop();
        }
    }

    /** One file's outcome, written by the thread that verified it, read by the reporting one after {@link #done}. */
    private static final class Scan {
        final RelationFile file;
        /** The relation whose descriptors close when its last file is done: its main fork (every fork, every segment). */
        final SmgrRelation owner;
        final AtomicInteger filesLeft;
        List<BadBlock> bad = List.of();
        /** What ends the run at this file: a partial block, a failed read; after its bad blocks. */
        Throwable failure;
        volatile boolean done;

        Scan(RelationFile file, SmgrRelation owner, AtomicInteger filesLeft) {
            this.file = file;
            this.owner = owner;
            this.filesLeft = filesLeft;
        }
    }

    /** The files in {@code scan_directory}'s order, a cursor the workers take them from, and the reporting walk. */
    private static final class Walk {
        final PgCluster cluster;
        final BufferPool pool;
        final List<Scan> files;
        final long relseg;
        final long totalBytes;
        final AtomicInteger cursor = new AtomicInteger();
        final List<Thread> workers = new ArrayList<>();
        volatile boolean stopping;
        /** A worker's session failed: no file of its own to blame. */
        volatile Throwable broken;
        /** The reporting thread, and the file it is parked waiting for (null when it is not waiting). */
        final Thread reporter = Thread.currentThread();
        volatile Scan awaited;

        Walk(PgCluster cluster, BufferPool pool, List<RelationFile> list, long relseg) {
            this.cluster = cluster;
            this.pool = pool;
            this.relseg = relseg;
            Map<String, AtomicInteger> perRelation = new HashMap<>();
            List<Scan> scans = new ArrayList<>(list.size());
            long total = 0;
            for (RelationFile f : list) {
                String key = f.databaseDir() + "/" + f.relNumber();
                AtomicInteger left = perRelation.computeIfAbsent(key, k -> new AtomicInteger());
                left.incrementAndGet();
                SmgrRelation owner = cluster.relation(new RelationFile(f.path(), f.databaseDir(), f.relNumber(),
                        ForkNumber.MAIN_FORKNUM, 0, 0));
                scans.add(new Scan(f, owner, left));
                total += f.size();
            }
            this.files = scans;
            this.totalBytes = total;
        }

        void start(int threads) {
            for (int i = 0; i < threads; i++) {
                Thread t = Thread.ofPlatform().name("pg_checksums-" + i).daemon().unstarted(this::work);
                workers.add(t);
                t.start();
            }
        }

        /** A worker: its own session, ring and lanes; takes the next file until none is left or the run ends. */
        void work() {
            PgChecksum pg = new PgChecksum();
            BufferAccessStrategy ring = pool.strategy(BufferAccessStrategy.Type.BULKREAD);
            try (BufferSession session = pool.openSession("pg_checksums")) {
                int i;
                while (!stopping && (i = cursor.getAndIncrement()) < files.size()) {
                    Scan scan = files.get(i);
                    try {
                        scan(session, ring, pg, scan);
                    } catch (IOException | RuntimeException | Error e) {
                        scan.failure = e;
                    }
                    finish(scan);
                }
            } catch (RuntimeException | Error e) {
                // the session itself (opening, closing): the run ends at the first file left undone
                broken = e;
                stopping = true;
                LockSupport.unpark(reporter);
            }
        }

        /** {@code scan_file}: every whole block, new pages skipped, the others' checksums compared. */
        void scan(BufferSession session, BufferAccessStrategy ring, PgChecksum pg, Scan scan) throws IOException {
            RelationFile file = scan.file;
            long size = file.size();
            long blocks = size / StorageManager.BLCKSZ;
            long first = file.segno() * relseg;
            if (blocks > 0) {
                SmgrRelation rel = cluster.relation(file);
                try (ReadStream stream = new ReadStream(session, rel, ReadStream.blockRange(first, blocks),
                        ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING, ring)) {
                    for (long blockno = 0; blockno < blocks; blockno++) {
                        int buf = stream.next();
                        MemorySegment page = session.page(buf);
                        // new pages have no checksum yet
                        if (!Page.isNew(page)) {
                            int csum = pg.checksumPage(page, first + blockno);
                            int stored = Page.storedChecksum(page);
                            if (csum != stored) {
                                if (scan.bad.isEmpty()) {
                                    scan.bad = new ArrayList<>();
                                }
                                scan.bad.add(new BadBlock(file, blockno, csum, stored));
                            }
                        }
                        session.releaseBuffer(buf);
                    }
                }
            }
            if (size % StorageManager.BLCKSZ != 0) {
                throw new PgDataException("could not read block " + blocks + " in file \"" + file.path() + "\": read "
                        + size % StorageManager.BLCKSZ + " of " + StorageManager.BLCKSZ);
            }
        }

        /** Marks the file done; closes its relation's descriptors when it was the relation's last file. */
        void finish(Scan scan) {
            if (scan.failure != null) {
                stopping = true;
            }
            if (scan.filesLeft.decrementAndGet() == 0) {
                scan.owner.close();
            }
            // done, then awaited: the reporter writes awaited, then reads done (both volatile), so
            // either it sees done and does not park, or this sees it waiting and unparks it
            scan.done = true;
            if (awaited == scan) {
                LockSupport.unpark(reporter);
            }
        }

        /** The calling thread: each file in order, once done, its bad blocks and the progress, as one walk would. */
        Result report(Listener listener, int version) throws IOException {
            long filesScanned = 0;
            long blocksScanned = 0;
            long bad = 0;
            long current = 0;
            for (Scan scan : files) {
                awaitDone(scan);
                long blocks = scan.file.size() / StorageManager.BLCKSZ;
                filesScanned++;
                blocksScanned += blocks;
                for (BadBlock b : scan.bad) {
                    bad++;
                    listener.badBlock(b);
                }
                current += blocks * StorageManager.BLCKSZ;
                if (scan.failure != null) {
                    rethrow(scan.failure);
                }
                listener.progress(current, totalBytes);
            }
            return new Result(filesScanned, blocksScanned, bad, version);
        }

        private static void rethrow(Throwable t) throws IOException {
            switch (t) {
                case IOException e -> throw e;
                case RuntimeException e -> throw e;
                case Error e -> throw e;
                default -> throw new IllegalStateException(t);
            }
        }

        private void awaitDone(Scan scan) throws IOException {
            while (!scan.done) {
                Throwable b = broken;
                if (b != null || workers.stream().noneMatch(Thread::isAlive)) {
                    if (scan.done) {
                        break;
                    }
                    rethrow(b != null ? b : new IllegalStateException("pg_checksums: no thread left to verify \""
                            + scan.file.path() + "\""));
                }
                awaited = scan;
                if (!scan.done) {
                    LockSupport.parkNanos(this, 100_000_000L); // woken by finish; the timeout rechecks the workers
                }
                awaited = null;
                if (Thread.interrupted()) {
                    stopping = true;
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("pg_checksums: interrupted while verifying \"" + scan.file.path() + "\"");
                }
            }
        }

        /**
         * Ends the run: no more files taken; waits for the workers to put their files and sessions
         * down, then closes the relations of the files left undone.
         */
        void stop() {
            stopping = true;
            boolean interrupted = false;
            for (Thread t : workers) {
                while (t.isAlive()) {
                    try {
                        t.join();
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            }
            // a run that ended early leaves relations whose last file was never taken: their descriptors too
            for (Scan scan : files) {
                if (!scan.done) {
                    scan.owner.close();
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
