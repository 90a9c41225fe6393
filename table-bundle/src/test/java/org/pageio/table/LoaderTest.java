package org.pageio.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.page.PageVerifier;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.posix.PosixException;
import org.pageio.table.load.Loader;
import org.pageio.table.load.PageSink;

/** The loader's builders and sinks: same bytes whichever way, every page valid, failures stop everything. */
class LoaderTest {

    @TempDir
    Path dir;

    /** Two full chunks and a bit, ending in a partial page, in 100-block segments. */
    static final long ROWS = 2L * Loader.CHUNK_BLOCKS * 47 + 100 * 47 + 5;

    @Test
    void everySinkAndBuilderCountWritesTheSameValidPages() throws Exception {
        try (StorageManager smgr = new StorageManager(dir, 100, false)) {
            List<byte[]> files = new ArrayList<>();
            Object[][] cases = {{PageSink.plain(), 1}, {PageSink.buffered(), 3}, {PageSink.direct(), 2}};
            long rel = 20_000;
            for (Object[] c : cases) {
                SmgrRelation r = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, rel++));
                List<Long> seen = new ArrayList<>();
                Loader l = new Loader((PageSink.Factory) c[0], (Integer) c[1]);
                long blocks = l.load(r, TableShape.PREFETCH_TEST, ROWS, 7, true, (done, total, bytes, nanos) -> seen.add(done));
                assertEquals(TableShape.PREFETCH_TEST.blocksFor(ROWS), blocks);
                assertEquals(blocks, r.nblocks());
                assertEquals(blocks * 8192, l.bytes());
                assertEquals(ROWS, seen.get(seen.size() - 1), "the last progress report is complete");
                files.add(concat(r, blocks));
            }
            for (int i = 1; i < files.size(); i++) {
                assertArrayEquals(files.get(0), files.get(i), "case " + i + " wrote other bytes");
            }
            byte[] all = files.get(0);
            long blocks = TableShape.PREFETCH_TEST.blocksFor(ROWS);
            try (Arena a = Arena.ofConfined()) {
                MemorySegment page = a.allocate(8192);
                for (long b = 0; b < blocks; b++) {
                    MemorySegment.copy(MemorySegment.ofArray(all), b * 8192, page, 0, 8192);
                    assertEquals(PageVerifier.VALID, PageVerifier.verify(page, b, true), "block " + b);
                    int lines = HeapPage.lineCount(page);
                    assertEquals(b == blocks - 1 ? 5 : 47, lines, "block " + b);
                    int line = (int) (b % lines) + 1;
                    int off = HeapPage.tupleOffset(page, line);
                    long g = b * 47 + line;
                    assertEquals(g, HeapPage.getInt(page, off + 24));
                    assertEquals(TableShape.PREFETCH_TEST.value(1, g, 7), HeapPage.getInt(page, off + 28));
                    assertEquals(TableShape.PREFETCH_TEST.value(2, g, 7), HeapPage.getInt(page, off + 32));
                    assertEquals(b, HeapPage.ctidBlock(page, off));
                    assertEquals(line, HeapPage.ctidLine(page, off));
                    for (int i = 0; i < 128; i += 13) {
                        assertEquals(TableShape.PREFETCH_TEST.textByte(g, 7, i),
                                page.get(java.lang.foreign.ValueLayout.JAVA_BYTE, off + 40 + i), "block " + b + " byte " + i);
                    }
                }
            }
        }
    }

    @Test
    void aFailingWriteStopsTheBuildersAndNamesTheFile() throws Exception {
        try (StorageManager smgr = new StorageManager(dir, 100, false)) {
            SmgrRelation r = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 30_000));
            PageSink.Factory failing = (rel, blocks) -> new PageSink() {
                int writes;

                @Override
                public void write(long block, MemorySegment pages, int n) throws PosixException {
                    if (++writes == 2) {
                        throw new PosixException("pwrite", rel.segmentPath(block), 28, "blocks " + block + ".. of relation " + rel);
                    }
                }

                @Override
                public void finish() {
                }

                @Override
                public void close() {
                }
            };
            int before = Thread.activeCount();
            PosixException e = assertThrows(PosixException.class,
                    () -> new Loader(failing, 2).load(r, TableShape.T, 40L * Loader.CHUNK_BLOCKS * 33, 1, true, LoadProgress.NONE));
            assertTrue(e.getMessage().contains("ENOSPC") && e.getMessage().contains("blocks 1024.."), e.getMessage());
            assertTrue(Thread.activeCount() <= before, "builders joined");
        }
    }

    private static byte[] concat(SmgrRelation r, long blocks) throws Exception {
        byte[] out = new byte[(int) (blocks * 8192)];
        int at = 0;
        for (Path p : r.segmentPaths(blocks)) {
            byte[] b = Files.readAllBytes(p);
            System.arraycopy(b, 0, out, at, b.length);
            at += b.length;
        }
        assertEquals(out.length, at);
        return out;
    }
}
