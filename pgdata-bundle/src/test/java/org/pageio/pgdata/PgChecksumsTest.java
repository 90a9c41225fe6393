package org.pageio.pgdata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.method.worker.WorkerIoMethod;
import org.pageio.method.worker.WorkerSettings;

/**
 * pageio's {@code pg_checksums --check} against PostgreSQL's, on a cluster the installed PostgreSQL
 * writes: {@code initdb --data-checksums}, a table shaped like the drill's {@code t} (id bigint, pad
 * text) with rows inserted, deleted, updated, vacuumed, a checkpoint, {@code pg_ctl stop -m fast}.
 * Both must agree on the exit, the files and blocks scanned, and on a flipped byte in a heap page
 * (the same file, block, calculated and stored checksum); a running and an uncleanly stopped
 * cluster are refused by both. Runs as {@code postgres} when the test runs as root.
 */
class PgChecksumsTest {

    private static PostgresServer pg;
    private static String heapPath;

    @TempDir
    Path tmp;

    @BeforeAll
    static void cluster() throws Exception {
        pg = new PostgresServer();
        pg.initdb();
        pg.start();
        pg.sql("CREATE TABLE t (id bigint, pad text);"
                + " INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(1, 4000) g;"
                + " DELETE FROM t WHERE id % 10 = 0;"
                + " UPDATE t SET pad = repeat('y', 200) WHERE id % 7 = 0;");
        pg.sql("VACUUM t");
        pg.sql("CHECKPOINT");
        heapPath = pg.sql("SELECT pg_relation_filepath('t')");
        // a running cluster: both refuse
        PgDataException running = assertThrows(PgDataException.class, () -> PgCluster.open(pg.data));
        assertTrue(running.getMessage().startsWith("cluster must be shut down (database cluster state: in production"),
                running.getMessage());
        PostgresServer.Run theirs = pg.pg("pg_checksums", "--check", "-D", pg.data.toString());
        assertEquals(1, theirs.exit());
        assertTrue(theirs.err().contains("cluster must be shut down"), theirs.err());
        pg.stop("fast");
    }

    @AfterAll
    static void drop() throws Exception {
        if (pg != null) {
            pg.close();
        }
    }

    /** pageio's run over a pool of its own on {@code method}; bad blocks' messages collected. */
    private static PgChecksums.Result ours(IoMethod method, List<String> errors) throws IOException {
        return ours(method, errors, 2);
    }

    /** pageio's run with {@code jobs} files in flight. */
    private static PgChecksums.Result ours(IoMethod method, List<String> errors, int jobs) throws IOException {
        try (PgCluster cluster = PgCluster.open(pg.data);
                BufferManagerCore bufmgr = cluster.openBufferManager(method,
                        new BufMgrSettings.Builder().sharedBuffers(512).maxSessions(4).build())) {
            PgChecksums.Result r = PgChecksums.check(cluster, bufmgr.pool(), bad -> errors.add(bad.message()), jobs);
            // every page went through the pool's reads
            assertEquals(r.blocksScanned() * 8192, bufmgr.stats().total(StatIo.Column.READ_BYTES));
            return r;
        }
    }

    private static final Pattern SUMMARY = Pattern.compile(
            "Checksum operation completed\nFiles scanned: +(\\d+)\nBlocks scanned: +(\\d+)\nBad checksums: +(\\d+)\nData checksum version: (\\d+)\n");

    private static void agree(PostgresServer.Run theirs, PgChecksums.Result r, List<String> errors) {
        Matcher m = SUMMARY.matcher(theirs.out());
        assertTrue(m.matches(), theirs.out() + theirs.err());
        assertEquals(Long.parseLong(m.group(1)), r.filesScanned(), "files scanned");
        assertEquals(Long.parseLong(m.group(2)), r.blocksScanned(), "blocks scanned");
        assertEquals(Long.parseLong(m.group(3)), r.badChecksums(), "bad checksums");
        assertEquals(Integer.parseInt(m.group(4)), r.dataChecksumVersion());
        assertEquals(theirs.exit(), r.badChecksums() > 0 ? 1 : 0, "exit code");
        List<String> theirErrors = theirs.err().lines().filter(l -> l.startsWith("pg_checksums: error: checksum verification failed"))
                .map(l -> l.substring("pg_checksums: error: ".length())).sorted().toList();
        assertEquals(theirErrors, errors.stream().sorted().toList());
        assertEquals(m.group(0).strip(), r.summary());
    }

    @Test
    void aCleanClusterVerifiesAsPgChecksumsVerifiesIt() throws Exception {
        PostgresServer.Run theirs = pg.pg("pg_checksums", "--check", "-D", pg.data.toString());
        assertEquals(0, theirs.exit(), theirs.err());
        for (IoMethod method : List.<IoMethod>of(new SyncIoMethod(), new WorkerIoMethod(WorkerSettings.DEFAULTS))) {
            List<String> errors = new ArrayList<>();
            PgChecksums.Result r = ours(method, errors);
            assertTrue(r.filesScanned() > 100 && r.blocksScanned() > 1000, r.toString());
            agree(theirs, r, errors);
            if (method instanceof WorkerIoMethod w) {
                w.close();
            }
        }
    }

    @Test
    void aFlippedByteInAHeapPageIsTheSameBadBlockForBoth() throws Exception {
        Path heap = pg.data.resolve(heapPath);
        long block = 2;
        byte original = PostgresServer.flip(heap, block * 8192 + 5000, 0x01);
        try {
            PostgresServer.Run theirs = pg.pg("pg_checksums", "--check", "-D", pg.data.toString());
            assertEquals(1, theirs.exit(), theirs.out() + theirs.err());
            List<String> errors = new ArrayList<>();
            PgChecksums.Result r = ours(new SyncIoMethod(), errors);
            assertEquals(1, r.badChecksums());
            assertTrue(errors.get(0).startsWith("checksum verification failed in file \"" + heap + "\", block 2: calculated checksum "),
                    errors.get(0));
            agree(theirs, r, errors);
        } finally {
            PostgresServer.restore(heap, block * 8192 + 5000, original);
        }
        // repaired: clean again
        assertEquals(0, ours(new SyncIoMethod(), new ArrayList<>()).badChecksums());
    }

    /**
     * Bad blocks in files far apart in the walk, found by threads racing each other: the same lines as
     * pg_checksums', in the order one thread walking the files reports them, whatever the number of
     * files in flight.
     */
    @Test
    void badBlocksInSeveralFilesAreReportedInTheWalksOrder() throws Exception {
        List<RelationFile> damaged = new ArrayList<>();
        try (PgCluster cluster = PgCluster.open(pg.data)) {
            List<RelationFile> files = cluster.relationFiles();
            for (int i = 0; i < files.size() && damaged.size() < 4; i += files.size() / 4) {
                // the next file from here with a first page that is not new (pd_upper, bytes 14..15, not 0)
                for (int j = i; j < files.size(); j++) {
                    RelationFile f = files.get(j);
                    if (f.size() >= 8192 && !damaged.contains(f) && pdUpper(f.path()) != 0) {
                        damaged.add(f);
                        break;
                    }
                }
            }
        }
        assertEquals(4, damaged.size(), damaged.toString());
        List<Byte> originals = new ArrayList<>();
        try {
            for (RelationFile f : damaged) {
                originals.add(PostgresServer.flip(f.path(), 6000, 0x01));
            }
            PostgresServer.Run theirs = pg.pg("pg_checksums", "--check", "-D", pg.data.toString());
            List<String> one = new ArrayList<>();
            PgChecksums.Result r1 = ours(new SyncIoMethod(), one, 1);
            assertEquals(4, r1.badChecksums());
            agree(theirs, r1, one);
            WorkerIoMethod worker = new WorkerIoMethod(WorkerSettings.DEFAULTS);
            try {
                for (IoMethod method : List.<IoMethod>of(new SyncIoMethod(), worker)) {
                    for (int jobs : new int[] {2, 4}) {
                        List<String> many = new ArrayList<>();
                        PgChecksums.Result r = ours(method, many, jobs);
                        assertEquals(one, many, method.name() + " with " + jobs + " files in flight");
                        assertEquals(r1, r);
                    }
                }
            } finally {
                worker.close();
            }
        } finally {
            for (int i = 0; i < originals.size(); i++) {
                PostgresServer.restore(damaged.get(i).path(), 6000, originals.get(i));
            }
        }
        assertEquals(0, ours(new SyncIoMethod(), new ArrayList<>(), 4).badChecksums());
    }

    /** A file that ends in a partial block stops both runs there, with the same line, whatever is in flight. */
    @Test
    void aPartialBlockEndsTheRunAsPgChecksumsEndsIt() throws Exception {
        Path heap = pg.data.resolve(heapPath);
        long size = Files.size(heap);
        Files.write(heap, new byte[100], java.nio.file.StandardOpenOption.APPEND);
        try {
            PostgresServer.Run theirs = pg.pg("pg_checksums", "--check", "-D", pg.data.toString());
            assertEquals(1, theirs.exit(), theirs.out() + theirs.err());
            String line = "could not read block " + size / 8192 + " in file \"" + heap + "\": read 100 of 8192";
            assertTrue(theirs.err().contains("pg_checksums: error: " + line), theirs.err());
            for (int jobs : new int[] {1, 4}) {
                PgDataException e = assertThrows(PgDataException.class, () -> ours(new SyncIoMethod(), new ArrayList<>(), jobs));
                assertEquals(line, e.getMessage(), jobs + " files in flight");
            }
        } finally {
            try (RandomAccessFile f = new RandomAccessFile(heap.toFile(), "rw")) {
                f.setLength(size);
            }
        }
        assertEquals(0, ours(new SyncIoMethod(), new ArrayList<>(), 4).badChecksums());
    }

    private static int pdUpper(Path file) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            f.seek(14);
            return Short.toUnsignedInt(Short.reverseBytes(f.readShort()));
        }
    }

    /** The relation as pg_relation_filepath prints it, read through the cluster's pool. */
    @Test
    void aRelationOpensByItsFilepath() throws Exception {
        try (PgCluster cluster = PgCluster.open(pg.data)) {
            var rel = cluster.relation(heapPath);
            assertEquals(pg.data.resolve(heapPath).toAbsolutePath().normalize(), rel.segmentPath(0));
            assertEquals(Files.size(pg.data.resolve(heapPath)) / 8192, rel.nblocks());
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> cluster.relation("base/x/1"));
            assertTrue(e.getMessage().contains("pg_relation_filepath"), e.getMessage());
            assertTrue(cluster.tablespaceVersionDirectory().matches("PG_1[5-8]_" + cluster.controlFile().catalogVersionNo()),
                    cluster.tablespaceVersionDirectory());
        }
    }

    /** A copy of the control file with data checksums off (CRC recomputed): refused before any file is read. */
    @Test
    void aClusterWithoutChecksumsIsRefused() throws Exception {
        Path copy = tmp.resolve("nochecksums");
        Files.createDirectories(copy.resolve("global"));
        Files.copy(pg.data.resolve("PG_VERSION"), copy.resolve("PG_VERSION"));
        byte[] control = Files.readAllBytes(pg.data.resolve("global/pg_control"));
        ByteBuffer b = ByteBuffer.wrap(control).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(252, 0);
        CRC32C crc = new CRC32C();
        crc.update(control, 0, 288);
        b.putInt(288, (int) crc.getValue());
        Files.write(copy.resolve("global/pg_control"), control);
        try (PgCluster cluster = PgCluster.open(copy);
                BufferManagerCore bufmgr = cluster.openBufferManager(new SyncIoMethod(),
                        new BufMgrSettings.Builder().sharedBuffers(64).maxSessions(2).build())) {
            PgDataException e = assertThrows(PgDataException.class, () -> PgChecksums.check(cluster, bufmgr.pool(), bad -> { }));
            assertTrue(e.getMessage().startsWith("data checksums are not enabled in cluster"), e.getMessage());
        }
        // and a damaged control file: its CRC
        b.putInt(252, 1);
        Files.write(copy.resolve("global/pg_control"), control);
        PgDataException crcBad = assertThrows(PgDataException.class, () -> PgCluster.open(copy));
        assertTrue(crcBad.getMessage().startsWith("pg_control CRC value is incorrect"), crcBad.getMessage());
    }
}
