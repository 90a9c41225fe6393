package org.pageio.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.pageio.pgdata.PostgresServer;

/**
 * The command-line tool against the installed PostgreSQL: {@code verify} agrees with
 * {@code pg_checksums --check} (exit code, summary, the error line of a damaged block) with each
 * method the tool has, named by the data directory's settings file; {@code pgcount} agrees with
 * {@code SELECT count(*)}; refusals and usage errors end with pg_checksums' exit codes and one line.
 */
class PageioCliTest {

    private static PostgresServer pg;
    private static String heapPath;
    private static long rows;

    @TempDir
    Path data;

    @BeforeAll
    static void cluster() throws Exception {
        pg = new PostgresServer();
        pg.initdb();
        pg.start();
        pg.sql("CREATE TABLE t (id bigint, pad text);"
                + " INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(1, 4000) g;"
                + " DELETE FROM t WHERE id % 10 = 0;");
        pg.sql("CHECKPOINT");
        heapPath = pg.sql("SELECT pg_relation_filepath('t')");
        rows = Long.parseLong(pg.sql("SELECT count(*) FROM t"));
        // a running cluster: the tool refuses it as pg_checksums does
        Run running = cli("verify", "--pgdata", pg.data.toString(), "--data", Files.createTempDirectory("pageio-cli").toString());
        assertEquals(1, running.exit);
        assertTrue(running.err.startsWith("pg_checksums: error: cluster must be shut down"), running.err);
        pg.stop("fast");
    }

    @AfterAll
    static void drop() throws Exception {
        if (pg != null) {
            pg.close();
        }
    }

    record Run(int exit, String out, String err) {
    }

    static Run cli(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            exit = PageioCli.run(List.of(args), o, e);
        }
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private String method(String name) throws Exception {
        Files.createDirectories(data.resolve("conf"));
        Files.writeString(data.resolve(CliSettings.FILE), "io_method = " + name + "\neffective_io_concurrency = 8\n");
        return data.toString();
    }

    /** pg_checksums' summary lines: files, blocks, bad checksums, version. */
    private static List<String> summary(String out) {
        return out.lines().filter(l -> l.matches("(Files scanned|Blocks scanned|Bad checksums|Data checksum version):.*")).toList();
    }

    @ParameterizedTest
    @ValueSource(strings = {"sync", "worker", "io_uring", "direct", "posix_aio"})
    void aCleanClusterHasPgChecksumsSummaryWithEveryMethod(String method) throws Exception {
        PostgresServer.Run theirs = pg.pg("pg_checksums", "--check", "-D", pg.data.toString());
        assertEquals(0, theirs.exit(), theirs.err());
        Run ours = cli("verify", "--pgdata", pg.data.toString(), "--data", method(method), "--jobs", "2");
        assertEquals(0, ours.exit, ours.err);
        assertEquals("", ours.err);
        assertEquals(4, summary(theirs.out()).size(), theirs.out());
        assertEquals(summary(theirs.out()), summary(ours.out));
    }

    @Test
    void aFlippedByteIsPgChecksumsErrorLineAndExit1() throws Exception {
        Path heap = pg.data.resolve(heapPath);
        long offset = 3 * 8192 + 6000;
        byte original = PostgresServer.flip(heap, offset, 0x5A);
        try {
            PostgresServer.Run theirs = pg.pg("pg_checksums", "--check", "-D", pg.data.toString());
            assertEquals(1, theirs.exit());
            Run ours = cli("verify", "--pgdata", pg.data.toString(), "--data", method("io_uring"), "--progress");
            assertEquals(1, ours.exit, ours.out + ours.err);
            List<String> theirErrors = errors(theirs.err());
            assertEquals(1, theirErrors.size(), theirs.err());
            assertTrue(theirErrors.getFirst().contains("\"" + heap + "\", block 3: calculated checksum "), theirErrors.getFirst());
            assertEquals(theirErrors, errors(ours.err));
            assertEquals(summary(theirs.out()), summary(ours.out));
            assertTrue(ours.err.lines().anyMatch(l -> l.matches("\\s*\\d+/\\d+ MB \\(100%\\) computed")), ours.err);
        } finally {
            PostgresServer.restore(heap, offset, original);
        }
        assertEquals(0, cli("verify", "--pgdata", pg.data.toString(), "--data", method("sync")).exit);
    }

    private static List<String> errors(String err) {
        List<String> lines = new ArrayList<>();
        err.lines().filter(l -> l.startsWith("pg_checksums: error: checksum verification failed")).forEach(lines::add);
        return lines;
    }

    @Test
    void pgcountIsSelectCount() throws Exception {
        Run ours = cli("pgcount", "--pgdata", pg.data.toString(), heapPath, "--data", method("worker"));
        assertEquals(0, ours.exit, ours.err);
        assertTrue(ours.out.startsWith("count: " + rows + "\n"), ours.out);
    }

    @Test
    void aBadSettingOrDirectoryIsOneLineAndExit1() throws Exception {
        Files.createDirectories(data.resolve("conf"));
        Files.writeString(data.resolve(CliSettings.FILE), "io_combine_limit = 0\n");
        Run bad = cli("verify", "--pgdata", pg.data.toString(), "--data", data.toString());
        assertEquals(1, bad.exit);
        assertEquals("pageio: verify: 0 is outside the valid range for parameter \"io_combine_limit\" (1 .. 128) ("
                + data.resolve(CliSettings.FILE) + ", line 1)\n", bad.err);
        Run missing = cli("verify", "--pgdata", data.resolve("nothing").toString(), "--data", data.toString());
        assertEquals(1, missing.exit);
        assertEquals("pageio: verify: \"" + data.resolve("nothing") + "\" is not a directory\n", missing.err);
        // not a cluster: pg_control is missing, named
        Run notACluster = cli("verify", "--pgdata", data.toString(), "--data", method("sync"));
        assertEquals(1, notACluster.exit);
        assertTrue(notACluster.err.startsWith("pg_checksums: error: ") && notACluster.err.contains("pg_control"), notACluster.err);
    }

    @Test
    void usageErrorsExit2AndHelpExits0() {
        assertEquals(2, cli().exit);
        Run noPgdata = cli("verify");
        assertEquals(2, noPgdata.exit);
        assertTrue(noPgdata.err.startsWith("pageio: verify: needs --pgdata DIR"), noPgdata.err);
        assertEquals(2, cli("verify", "--pgdata", pg.data.toString(), "--jobs", "0").exit);
        assertEquals(2, cli("pgcount", "--pgdata", pg.data.toString()).exit);
        assertEquals(2, cli("pgcount", "--pgdata", pg.data.toString(), heapPath, "--progress").exit);
        assertEquals(2, cli("rewrite").exit);
        Run help = cli("verify", "--help");
        assertEquals(0, help.exit);
        assertTrue(help.out.startsWith("usage: pageio verify"), help.out);
    }
}
