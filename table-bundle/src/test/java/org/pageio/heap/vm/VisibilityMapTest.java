package org.pageio.heap.vm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.pageio.heap.vm.VisibilityMap.VISIBILITYMAP_ALL_FROZEN;
import static org.pageio.heap.vm.VisibilityMap.VISIBILITYMAP_ALL_VISIBLE;
import static org.pageio.heap.vm.VisibilityMap.VISIBILITYMAP_VALID_BITS;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.page.PageVerifier;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.table.TableInfo;
import org.pageio.table.TableShape;
import org.pageio.table.VisibilityMapSummary;
import org.pageio.table.engine.TableEngine;

/** The visibility map on real files, through a buffer pool: PostgreSQL's bit positions, durability, damage, stat_io, the loader's map. */
class VisibilityMapTest {

    @TempDir
    Path dir;

    private final List<AutoCloseable> open = new ArrayList<>();
    private BufferPool pool;

    @AfterEach
    void tearDown() throws Exception {
        closePool();
    }

    private void closePool() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        open.clear();
    }

    private BufferPool pool() {
        BufMgrSettings s = new BufMgrSettings.Builder().sharedBuffers(256).maxSessions(4).segmentBlocks(100).build();
        BufferManagerCore core = BufferManagerCore.open(dir, s, new SyncIoMethod());
        open.add(core);
        pool = core.pool();
        return pool;
    }

    private SmgrRelation heap(long relNumber) {
        return pool.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, relNumber));
    }

    private Path vmFile(long relNumber) {
        return dir.resolve("base").resolve(relNumber + "_vm");
    }

    private static final long[] BLOCKS = {0, 3, 4, 32671, 32672};
    private static final int[] FLAGS = {VISIBILITYMAP_ALL_VISIBLE, VISIBILITYMAP_VALID_BITS, VISIBILITYMAP_ALL_FROZEN,
        VISIBILITYMAP_VALID_BITS, VISIBILITYMAP_ALL_VISIBLE};

    private void setFive(long relNumber) throws IOException {
        try (BufferSession s = pool.openSession("client")) {
            VisibilityMap vm = new VisibilityMap(s, heap(relNumber), null);
            for (int i = 0; i < BLOCKS.length; i++) {
                assertEquals(0, vm.set(BLOCKS[i], FLAGS[i]), "block " + BLOCKS[i] + " had no bits");
            }
        }
    }

    @Test
    void layoutIsPostgres() {
        assertEquals(8168, VisibilityMap.MAPSIZE);
        assertEquals(24, VisibilityMap.MAP_OFFSET);
        assertEquals(32672, VisibilityMap.HEAPBLOCKS_PER_PAGE);
        assertEquals(0, VisibilityMap.heapBlkToMapBlock(32671));
        assertEquals(1, VisibilityMap.heapBlkToMapBlock(32672));
        assertEquals(8167, VisibilityMap.heapBlkToMapByte(32671));
        assertEquals(6, VisibilityMap.heapBlkToOffset(32671));
        assertEquals(0, VisibilityMap.heapBlkToMapByte(32672));
        assertEquals(2, VisibilityMap.mapBlocks(32673));
    }

    /** The bits sit where PostgreSQL puts them, in pages that pass verification, in the file {@code <rel>_vm}. */
    @Test
    void bitsAreAtPostgresBytesAndBitsInTheVmFile() throws Exception {
        pool();
        setFive(16384);
        pool.checkpoint();
        byte[] file = Files.readAllBytes(vmFile(16384));
        assertEquals(2 * Page.SIZE, file.length, "two map pages: block 32672 is the first of the second");
        assertEquals((byte) 0xC1, file[24], "block 0 all-visible (bit 0), block 3 both (bits 6, 7)");
        assertEquals((byte) 0x02, file[25], "block 4 all-frozen (bit 1 of byte 1)");
        assertEquals((byte) 0xC0, file[24 + 8167], "block 32671: bits 6, 7 of the page's last byte");
        assertEquals((byte) 0x01, file[Page.SIZE + 24], "block 32672: bit 0 of byte 0 of map page 1");
        int others = 0;
        for (int i = 26; i < file.length; i++) {
            if (i != 24 + 8167 && i != Page.SIZE + 24 && file[i] != 0 && !(i >= Page.SIZE && i < Page.SIZE + 24)) {
                others++;
            }
        }
        assertEquals(0, others, "no other bit is set");
        for (int b = 0; b < 2; b++) {
            MemorySegment page = MemorySegment.ofArray(file).asSlice((long) b * Page.SIZE, Page.SIZE);
            assertEquals(PageVerifier.VALID, PageVerifier.verify(page, b, true), "map page " + b);
            assertTrue(Page.storedChecksum(page) != 0, "map page " + b + " carries a checksum");
            assertEquals(24, Page.lower(page));
            assertEquals(Page.SIZE, Page.upper(page));
        }
    }

    /** A fresh buffer manager over the same directory reads the bits back. */
    @Test
    void bitsSurviveARestart() throws Exception {
        pool();
        setFive(16385);
        pool.checkpoint();
        closePool();
        pool();
        try (BufferSession s = pool.openSession("client")) {
            VisibilityMap vm = new VisibilityMap(s, heap(16385), null);
            for (int i = 0; i < BLOCKS.length; i++) {
                assertEquals(FLAGS[i], vm.getStatus(BLOCKS[i]), "block " + BLOCKS[i]);
            }
            assertEquals(0, vm.getStatus(1));
            assertEquals(0, vm.getStatus(32673));
            assertEquals(0, vm.getStatus(1_000_000), "beyond the map: no bits");
            assertEquals(new VisibilityMap.Counts(4, 3), vm.count());
        }
    }

    @Test
    void clearOfOneBlockLeavesTheOthers() throws Exception {
        pool();
        setFive(16386);
        try (BufferSession s = pool.openSession("client")) {
            VisibilityMap vm = new VisibilityMap(s, heap(16386), null);
            assertTrue(vm.clear(3, VISIBILITYMAP_ALL_VISIBLE));
            assertFalse(vm.clear(3, VISIBILITYMAP_ALL_VISIBLE), "nothing left to clear");
            assertEquals(VISIBILITYMAP_ALL_FROZEN, vm.getStatus(3));
            assertTrue(vm.clear(3, VISIBILITYMAP_VALID_BITS));
            assertEquals(0, vm.getStatus(3));
            for (int i = 0; i < BLOCKS.length; i++) {
                if (BLOCKS[i] != 3) {
                    assertEquals(FLAGS[i], vm.getStatus(BLOCKS[i]), "block " + BLOCKS[i]);
                }
            }
            assertEquals(new VisibilityMap.Counts(3, 2), vm.count());
            assertEquals(VISIBILITYMAP_ALL_VISIBLE, vm.set(0, VISIBILITYMAP_ALL_FROZEN), "set returns the bits before");
            assertEquals(new VisibilityMap.Counts(3, 3), vm.count());
            IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> vm.set(0, 4));
            assertTrue(bad.getMessage().startsWith("visibility map flags 0x04 are not valid"), bad.getMessage());
        }
    }

    /** A relation without a vm fork (loaded before there were maps) reads as no bits set; nothing is created. */
    @Test
    void aMissingForkReadsAsAllZero() throws Exception {
        pool();
        try (BufferSession s = pool.openSession("client")) {
            VisibilityMap vm = new VisibilityMap(s, heap(16387), null);
            assertEquals(0, vm.getStatus(0));
            assertEquals(0, vm.getStatus(40_000));
            assertFalse(vm.clear(0, VISIBILITYMAP_VALID_BITS));
            assertEquals(new VisibilityMap.Counts(0, 0), vm.count());
            assertEquals(0, vm.mapBlocks());
        }
        assertFalse(Files.exists(vmFile(16387)));
    }

    @Test
    void aDamagedMapPageIsReportedWithRelationForkBlockAndWhatFailed() throws Exception {
        pool();
        setFive(16388);
        pool.checkpoint();
        closePool();
        try (RandomAccessFile f = new RandomAccessFile(vmFile(16388).toFile(), "rw")) {
            f.seek(Page.SIZE + 4000);
            int b = f.read();
            f.seek(Page.SIZE + 4000);
            f.write(b ^ 0x08);
        }
        pool();
        try (BufferSession s = pool.openSession("client")) {
            VisibilityMap vm = new VisibilityMap(s, heap(16388), null);
            assertEquals(VISIBILITYMAP_VALID_BITS, vm.getStatus(3), "map page 0 is sound");
            IOException e = assertThrows(IOException.class, () -> vm.getStatus(32672));
            assertTrue(e.getMessage().matches("invalid page in block 1 of relation pg_default/16388 fork vm \\(file .*/base/16388_vm\\):"
                    + " page checksum mismatch; .*"), e.getMessage());
            assertEquals(1, e.getMessage().lines().count());
        }
    }

    /** The fork's reads, extends and writes count in stat_io under object relation. */
    @Test
    void statIoCountsTheForksIoUnderRelation() throws Exception {
        pool();
        long written = relation(StatIo.Column.WRITE_BYTES);
        long extendsBefore = relation(StatIo.Column.EXTENDS);
        setFive(16389);
        assertEquals(extendsBefore + 2, relation(StatIo.Column.EXTENDS), "two map pages extended");
        pool.checkpoint();
        assertEquals(written + 2 * Page.SIZE, relation(StatIo.Column.WRITE_BYTES), "two map pages written by the checkpoint");
        closePool();
        pool();
        long reads = relation(StatIo.Column.READS);
        try (BufferSession s = pool.openSession("client")) {
            VisibilityMap vm = new VisibilityMap(s, heap(16389), null);
            vm.getStatus(0);
            vm.getStatus(32672);
        }
        assertEquals(reads + 2, relation(StatIo.Column.READS), "two map pages read");
    }

    private long relation(StatIo.Column c) {
        long n = 0;
        for (StatIo.Row r : pool.stats().rows()) {
            if (r.object() == StatIo.IoObject.RELATION) {
                n += r.value(c);
            }
        }
        return n;
    }

    /** A loaded table is all-visible and all-frozen (COPY FREEZE): page flags and both map bits; dropping it removes the map. */
    @Test
    void aLoadedTableIsAllVisibleAndAllFrozen() throws Exception {
        pool();
        TableEngine engine = new TableEngine(pool);
        for (org.pageio.table.LoadSink sink : org.pageio.table.LoadSink.values()) {
            String name = "t_" + sink.label();
            TableInfo t = engine.load(name, TableShape.PREFETCH_TEST, 5_000, 1, sink, null).table();
            assertEquals(new VisibilityMapSummary(t.blocks(), t.blocks()), engine.visibilityMapSummary(name), sink.label());
            SmgrRelation heap = engine.heap(t);
            for (long b = 0; b < t.blocks(); b++) {
                byte[] page = new byte[Page.SIZE];
                try (RandomAccessFile f = new RandomAccessFile(heap.segmentPath(b).toFile(), "r")) {
                    f.seek(heap.segmentOffset(b));
                    f.readFully(page);
                }
                MemorySegment p = MemorySegment.ofArray(page);
                assertEquals(Page.PD_ALL_VISIBLE, Page.flags(p) & Page.PD_ALL_VISIBLE, sink.label() + " block " + b);
                assertEquals(PageVerifier.VALID, PageVerifier.verify(p, b, true), sink.label() + " block " + b);
            }
            byte[] map = Files.readAllBytes(vmFile(t.relNumber()));
            assertEquals(Page.SIZE, map.length);
            assertEquals(PageVerifier.VALID, PageVerifier.verify(MemorySegment.ofArray(map), 0, true));
            try (BufferSession s = pool.openSession("client")) {
                VisibilityMap vm = new VisibilityMap(s, heap, null);
                assertEquals(VISIBILITYMAP_VALID_BITS, vm.getStatus(t.blocks() - 1));
                assertEquals(0, vm.getStatus(t.blocks()), "past the heap's end");
            }
            engine.drop(name);
            assertFalse(Files.exists(vmFile(t.relNumber())), "dropped with its table");
            assertFalse(Files.exists(heap.segmentPath(0)));
        }
    }

    /** A table loaded before the loader wrote maps has no vm fork: its summary is 0 and 0, not an error. */
    @Test
    void aTableWithoutAMapSummarisesAsZero() throws Exception {
        pool();
        TableEngine engine = new TableEngine(pool);
        TableInfo t = engine.load("old", TableShape.T, 1_000, 1, org.pageio.table.LoadSink.DIRECT, null).table();
        Files.delete(vmFile(t.relNumber()));
        closePool();
        pool();
        engine = new TableEngine(pool);
        assertEquals(new VisibilityMapSummary(0, 0), engine.visibilityMapSummary("old"));
    }
}
