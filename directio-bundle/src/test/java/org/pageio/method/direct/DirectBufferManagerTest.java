package org.pageio.method.direct;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.pageio.api.AioContext;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.bufmgr.stream.StreamStats;

/**
 * io_method=direct under the whole buffer manager, as the container runs it: the storage manager
 * opens with O_DIRECT (the method bypasses the page cache), a sequential scan starts at full size,
 * and pages written through the page cache just before are what the direct reads return.
 */
@Timeout(60)
class DirectBufferManagerTest {

    static final int BLOCKS = 96;

    @TempDir
    Path dir;

    static void writePages(SmgrRelation rel, int version) throws Exception {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate((long) BLOCKS * Page.SIZE, 4096);
            for (int b = 0; b < BLOCKS; b++) {
                MemorySegment page = buf.asSlice((long) b * Page.SIZE, Page.SIZE);
                Page.init(page, 0);
                page.set(ValueLayout.JAVA_INT_UNALIGNED, 4096, b * 1000 + version);
                Page.setChecksum(page, b);
            }
            rel.write(0, buf, BLOCKS);
        }
    }

    /**
     * Creates relation {@code relNumber} through a buffered storage manager with
     * {@link #writePages} of version {@code synced}, fsync'ed, then of version {@code unsynced}
     * left dirty in the page cache (0: none).
     */
    RelFileLocator writeThroughPageCache(int relNumber, int synced, int unsynced) throws Exception {
        RelFileLocator loc = new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, relNumber);
        try (StorageManager buffered = new StorageManager(dir, StorageManager.DEFAULT_SEGMENT_BLOCKS, false)) {
            SmgrRelation w = buffered.open(loc);
            w.create();
            writePages(w, synced);
            w.sync();
            if (unsynced != 0) {
                writePages(w, unsynced);
            }
        }
        return loc;
    }

    @ParameterizedTest
    @ValueSource(strings = {"io_uring", "threads"})
    void bufferedWritesThenADirectScanReturnsTheNewPages(String engine) throws Exception {
        DirectIoMethod m = new DirectIoMethod(new DirectSettings(DirectSettings.EngineChoice.parse(engine), 4));
        assertTrue(m.bypassesPageCache());
        // version 2 is only in the page cache (dirty), not synced
        RelFileLocator loc = writeThroughPageCache(7001, 1, 2);
        BufMgrSettings.Builder b = new BufMgrSettings.Builder().sharedBuffers(1024).maxSessions(4);
        b.directIo = m.bypassesPageCache(); // what BufferManagerComponent does
        BufMgrSettings settings = b.build();
        try (BufferManagerCore core = BufferManagerCore.open(dir, settings, m)) {
            StorageManager smgr = core.storage();
            BufferPool pool = core.pool();
            SmgrRelation rel = smgr.open(loc);
            StreamStats stats;
            try (BufferSession s = pool.openSession("client");
                    ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, BLOCKS),
                            ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING, pool.strategy(BufferAccessStrategy.Type.BULKREAD))) {
                for (int blk = 0; blk < BLOCKS; blk++) {
                    int buf = stream.next();
                    assertEquals(blk * 1000 + 2, s.page(buf).get(ValueLayout.JAVA_INT_UNALIGNED, 4096),
                            "block " + blk + " has the bytes written through the page cache");
                    s.releaseBuffer(buf);
                }
                assertEquals(-1, stream.next());
                stats = stream.stats();
            } finally {
                pool.close();
            }
            assertTrue(DirectFiles.isDirect(rel.fd(0)), "the storage manager opened the file with O_DIRECT");
            // full size from the first read: 96 blocks in 6 reads of 16
            assertEquals(6, stats.ioCount(), stats.toString());
        } finally {
            m.close();
        }
    }

    /**
     * The pool offers its pages for io_uring's registered buffers (on by default): single-block
     * random reads go in as {@code READ_FIXED}, with the same bytes; turned off, none do. The
     * pool withdraws the offer when it closes. The same with the pool in 2 MB pages
     * ({@code huge_pages = try}, the default) and in 4 kB pages ({@code off}).
     */
    @ParameterizedTest
    @CsvSource({"true, TRY", "false, TRY", "true, OFF"})
    void randomReadsGoIntoRegisteredBuffersUnlessTurnedOff(boolean registered, BufMgrSettings.HugePages huge)
            throws Exception {
        DirectIoMethod m = new DirectIoMethod(new DirectSettings(DirectSettings.EngineChoice.IO_URING, 4));
        RelFileLocator loc = writeThroughPageCache(7002, 3, 0);
        BufMgrSettings.Builder b = new BufMgrSettings.Builder().sharedBuffers(256).maxSessions(4);
        b.directIo = true;
        b.registeredBuffers = registered;
        b.hugePages = huge;
        BufMgrSettings settings = b.build();
        int[] order = {50, 3, 77, 12, 95, 40, 8, 63}; // no block followed by the next: one read each
        try (BufferManagerCore core = BufferManagerCore.open(dir, settings, m)) {
            StorageManager smgr = core.storage();
            AioContext aio = core.aio();
            BufferPool pool = core.pool();
            assertEquals(registered, aio.registeredBuffers() != null);
            assertTrue(pool.hugePages().startsWith(huge == BufMgrSettings.HugePages.OFF ? "off: huge_pages = off"
                    : thpAllowed() ? "on: 2 MB of 2 MB" : "off: "), pool.hugePages());
            SmgrRelation rel = smgr.open(loc);
            ReadStream.BlockCallback cb = new ReadStream.BlockCallback() {
                int i;

                @Override
                public long nextBlock(ReadStream st) {
                    return i == order.length ? ReadStream.END : order[i++];
                }
            };
            try (BufferSession s = pool.openSession("client");
                    ReadStream stream = new ReadStream(s, rel, cb, ReadStream.USE_BATCHING, null)) {
                for (int blk : order) {
                    int buf = stream.next();
                    assertEquals(blk * 1000 + 3, s.page(buf).get(ValueLayout.JAVA_INT_UNALIGNED, 4096), "block " + blk);
                    s.releaseBuffer(buf);
                }
                assertEquals(-1, stream.next());
            } finally {
                pool.close();
            }
            assertNull(aio.registeredBuffers(), "the pool withdrew its pages when it closed");
            assertEquals(registered ? order.length : 0, m.ringCounters().fixedIos(), "reads into registered buffers");
        } finally {
            m.close();
        }
    }

    /** Whether this kernel may give the pool transparent huge pages (not 'never', not absent). */
    static boolean thpAllowed() throws java.io.IOException {
        Path p = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
        return java.nio.file.Files.exists(p) && !java.nio.file.Files.readString(p).contains("[never]");
    }
}
