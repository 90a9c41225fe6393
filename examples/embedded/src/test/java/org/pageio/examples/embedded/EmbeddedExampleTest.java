package org.pageio.examples.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.method.uring.UringIoMethod;
import org.pageio.table.TableShape;
import org.pageio.heap.vm.VisibilityMap;

/** The README's example runs, and what it prints is what it read. */
class EmbeddedExampleTest {

    /** 20,000 rows of t: 607 blocks. */
    static final long ROWS = 20_000;

    @Test
    void readsBackEveryBlockAndRowOnSync(@TempDir Path dir) throws Exception {
        check(dir, "sync");
    }

    @Test
    void readsBackEveryBlockAndRowOnIoUring(@TempDir Path dir) throws Exception {
        UringIoMethod probe = new UringIoMethod(UringIoMethod.DEFAULT_FORCE_ASYNC);
        // io_uring is part of this machine kind: a refusal fails the test with its cause, never skips it
        assertTrue(probe.availability().available(), () -> "io_uring: " + probe.availability().cause());
        check(dir, "io_uring");
    }

    @Test
    void mainRunsOnADirectory(@TempDir Path dir) throws Exception {
        EmbeddedExample.main(new String[] {dir.resolve("data").toString(), "sync"});
        assertTrue(Files.isDirectory(dir.resolve("data/base")), "main wrote no relation under " + dir);
    }

    /** The README's excerpt is this example's code: each of its code lines is a line of the source. */
    @Test
    void readmeExcerptIsTheExamplesCode() throws Exception {
        Path readme = Path.of("../../README.md");
        Path source = Path.of("src/main/java/org/pageio/examples/embedded/EmbeddedExample.java");
        List<String> code = Files.readAllLines(source).stream().map(EmbeddedExampleTest::code).toList();
        List<String> lines = Files.readAllLines(readme);
        int at = lines.indexOf(lines.stream().filter(l -> l.startsWith("<!-- embedded-example")).findFirst()
                .orElseThrow(() -> new AssertionError("no <!-- embedded-example --> marker in " + readme)));
        assertEquals("```java", lines.get(at + 1), "the marker is followed by the excerpt");
        int checked = 0;
        for (int i = at + 2; !lines.get(i).equals("```"); i++) {
            String line = code(lines.get(i));
            if (!line.isEmpty() && !line.startsWith("//")) {
                assertTrue(code.contains(line), "README.md line " + (i + 1) + " is not in " + source + ": " + line);
                checked++;
            }
        }
        assertTrue(checked >= 15, "only " + checked + " code lines in the README's excerpt");
    }

    /** A line without its indentation and trailing {@code // comment}. */
    private static String code(String line) {
        int comment = line.indexOf(" // ");
        return (comment >= 0 ? line.substring(0, comment) : line).strip();
    }

    private static void check(Path dir, String ioMethod) throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        EmbeddedExample.Result r = EmbeddedExample.run(dir, ioMethod, ROWS, new PrintStream(printed, true, StandardCharsets.UTF_8));
        String out = printed.toString(StandardCharsets.UTF_8);

        long blocks = TableShape.T.blocksFor(ROWS);
        assertEquals(ioMethod, r.ioMethod(), out);
        assertEquals(blocks, r.blocksWritten(), out);
        assertEquals(blocks, r.blocksRead(), "every block written is read back once, in order\n" + out);
        assertEquals(ROWS, r.rows(), out);
        assertEquals(ROWS * (ROWS + 1) / 2, r.idSum(), "id = 1..rows, each seen once\n" + out);

        // stat_io: the scan's reads are the client backend's bulk reads on this io_method, every block
        // read once (the load wrote around shared buffers, so nothing was cached), combined into fewer reads
        StatIo.Row scan = row(r.statIo(), StatIo.IoContext.BULKREAD, out);
        assertEquals(ioMethod, scan.ioMethod(), out);
        assertEquals("client backend", scan.kind(), out);
        assertEquals(blocks * 8192, scan.value(StatIo.Column.READ_BYTES), out);
        long reads = scan.value(StatIo.Column.READS);
        assertTrue(reads < blocks, "reads were combined: " + reads + " reads for " + blocks + " blocks\n" + out);
        assertEquals(blocks * 8192, r.statIo().total(StatIo.Column.READ_BYTES), "no other reads\n" + out);

        // the load's new pages: extends in the bulkwrite context, every heap block once, and the
        // visibility map fork's pages (two bits per heap block: one map page here) with them
        StatIo.Row load = row(r.statIo(), StatIo.IoContext.BULKWRITE, out);
        assertEquals(ioMethod, load.ioMethod(), out);
        long mapPages = (blocks + VisibilityMap.HEAPBLOCKS_PER_PAGE - 1) / VisibilityMap.HEAPBLOCKS_PER_PAGE;
        assertEquals(1, mapPages, out);
        assertEquals((blocks + mapPages) * 8192, load.value(StatIo.Column.EXTEND_BYTES), out);

        // what it printed says the same
        assertTrue(out.contains(String.format("read %,d blocks of t on io_method=%s: %,d rows", blocks, ioMethod, ROWS)), out);
        assertTrue(out.contains(String.format("%6d %11d", reads, blocks * 8192)), out);
    }

    /** The one stat_io row of {@code context}. */
    private static StatIo.Row row(StatIo statIo, StatIo.IoContext context, String out) {
        List<StatIo.Row> rows = statIo.rows().stream().filter(row -> row.context() == context).toList();
        assertEquals(1, rows.size(), "one " + context.label + " row in stat_io\n" + out);
        return rows.get(0);
    }
}
