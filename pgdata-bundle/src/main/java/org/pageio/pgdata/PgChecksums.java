package org.pageio.pgdata;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.page.PgChecksum;
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
 * by PostgreSQL's algorithm on the page in shared buffers. A file's descriptors are closed when its
 * stream is done.
 *
 * <p>One thread: the caller's (the session's owner). Nothing allocated per page.
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

    /** What a run tells as it goes. Called on the verifying thread. */
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
     * cluster: {@link PgCluster#openBufferManager}).
     *
     * @throws PgDataException when data checksums are off ({@code data checksums are not enabled in
     *         cluster}, before any file is read), or for a file pg_checksums would stop at (a partial
     *         block, a name it cannot read)
     * @throws IOException naming the relation, block and file for a read that failed
     */
    public static Result check(PgCluster cluster, BufferPool pool, Listener listener) throws IOException {
        ControlFile control = cluster.controlFile();
        if (!control.dataChecksums()) {
            throw new PgDataException("data checksums are not enabled in cluster (\"" + cluster.directory()
                    + "\": data_checksum_version 0)");
        }
        if (pool.storage() != cluster.storage()) {
            throw new IllegalArgumentException("the pool does not read this cluster: open it with PgCluster.openBufferManager");
        }
        List<RelationFile> files = cluster.relationFiles();
        long total = 0;
        for (RelationFile f : files) {
            total += f.size();
        }
        long relseg = control.relsegSize();
        PgChecksum pg = new PgChecksum();
        long filesScanned = 0;
        long blocksScanned = 0;
        long bad = 0;
        long current = 0;
        BufferAccessStrategy ring = pool.strategy(BufferAccessStrategy.Type.BULKREAD);
        try (BufferSession session = pool.openSession("pg_checksums")) {
            for (RelationFile file : files) {
                long size = file.size();
                long blocks = size / StorageManager.BLCKSZ;
                SmgrRelation rel = cluster.relation(file);
                long first = file.segno() * relseg;
                filesScanned++;
                if (blocks > 0) {
                    try (ReadStream stream = new ReadStream(session, rel, ReadStream.blockRange(first, blocks),
                            ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING, ring)) {
                        for (long blockno = 0; blockno < blocks; blockno++) {
                            int buf = stream.next();
                            MemorySegment page = session.page(buf);
                            blocksScanned++;
                            // new pages have no checksum yet
                            if (!Page.isNew(page)) {
                                int csum = pg.checksumPage(page, first + blockno);
                                int stored = Page.storedChecksum(page);
                                if (csum != stored) {
                                    bad++;
                                    listener.badBlock(new BadBlock(file, blockno, csum, stored));
                                }
                            }
                            session.releaseBuffer(buf);
                        }
                    } finally {
                        rel.close();
                    }
                }
                current += blocks * StorageManager.BLCKSZ;
                if (size % StorageManager.BLCKSZ != 0) {
                    throw new PgDataException("could not read block " + blocks + " in file \"" + file.path() + "\": read "
                            + size % StorageManager.BLCKSZ + " of " + StorageManager.BLCKSZ);
                }
                listener.progress(current, total);
            }
        }
        return new Result(filesScanned, blocksScanned, bad, control.dataChecksumVersion());
    }
}
