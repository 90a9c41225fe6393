package org.pageio.table.load;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.posix.PosixException;
import org.pageio.table.HeapPage;
import org.pageio.table.LoadProgress;
import org.pageio.table.TableShape;

/**
 * Builds heap pages from a {@link TableShape}'s generator into an off-heap chunk of
 * {@link #CHUNK_BLOCKS} pages (8 MiB) and writes each chunk with one {@code pwrite} (split only at
 * segment boundaries, by {@link SmgrRelation#write}); the relation is fsynced at the end. Two
 * chunks alternate: one is filled while the other is written by a writer thread, so building and
 * writing overlap. Pages carry checksums (the same {@link Page#setChecksum} the buffer manager's
 * verification checks). Writes go around the buffer pool (the relation is new, nothing caches it).
 *
 * <p>One load per instance, in the calling thread (plus the writer thread it starts).
 */
public final class Loader {

    /** Pages per combined write: 8 MiB. */
    public static final int CHUNK_BLOCKS = 1024;

    private long writeNanos;
    private long syncNanos;
    private long bytes;

    public long writeNanos() {
        return writeNanos;
    }

    public long syncNanos() {
        return syncNanos;
    }

    public long bytes() {
        return bytes;
    }

    /**
     * Writes {@code rows} rows of {@code shape} to {@code rel} (created here), then fsyncs it.
     * Returns the number of blocks written.
     */
    public long load(SmgrRelation rel, TableShape shape, long rows, long seed, boolean checksums, LoadProgress progress)
            throws PosixException, InterruptedException {
        rel.create();
        long blocks = shape.blocksFor(rows);
        int rpp = shape.rowsPerPage();
        int natts = shape.columns().size();
        int text = shape.textColumn().offset();
        int textLen = shape.textLength();
        int tupleLen = shape.tupleLength();
        int ints = natts - 1;
        int[] intOffsets = new int[ints];
        boolean[] wide = new boolean[ints];
        for (int c = 0; c < ints; c++) {
            intOffsets[c] = shape.columns().get(c).offset();
            wide[c] = shape.columns().get(c).type().width() == 8;
        }
        long t0 = System.nanoTime();
        long lastReport = t0;
        try (Arena arena = Arena.ofShared()) {
            MemorySegment[] chunks = {arena.allocate((long) CHUNK_BLOCKS * Page.SIZE, 4096),
                    arena.allocate((long) CHUNK_BLOCKS * Page.SIZE, 4096)};
            MemorySegment xs = arena.allocate(Math.max(1, textLen));
            xs.fill((byte) 'x');
            ChunkWriter writer = new ChunkWriter(rel);
            Thread wt = Thread.ofPlatform().name("pageio loader writer").daemon().start(writer);
            try {
                long g = 1;
                int which = 0;
                for (long block = 0; block < blocks; block += CHUNK_BLOCKS) {
                    int n = (int) Math.min(CHUNK_BLOCKS, blocks - block);
                    MemorySegment chunk = chunks[which];
                    writer.awaitFree(which);
                    for (int i = 0; i < n; i++) {
                        MemorySegment page = chunk.asSlice((long) i * Page.SIZE, Page.SIZE);
                        HeapPage.init(page);
                        long b = block + i;
                        for (int k = 0; k < rpp && g <= rows; k++, g++) {
                            int off = HeapPage.addTuple(page, b, tupleLen, natts);
                            for (int c = 0; c < ints; c++) {
                                long v = shape.value(c, g, seed);
                                if (wide[c]) {
                                    HeapPage.setLong(page, off + intOffsets[c], v);
                                } else {
                                    HeapPage.setInt(page, off + intOffsets[c], (int) v);
                                }
                            }
                            HeapPage.setTextHeader(page, off + text, textLen);
                            shape.writeText(page, off + text + 4, g, seed, xs);
                        }
                        if (checksums) {
                            Page.setChecksum(page, b);
                        }
                    }
                    writer.submit(which, block, chunk, n);
                    which ^= 1;
                    bytes += (long) n * Page.SIZE;
                    long now = System.nanoTime();
                    if (now - lastReport > 100_000_000L) {
                        lastReport = now;
                        progress.progress(Math.min(g - 1, rows), rows, writer.written(), now - t0);
                    }
                }
                writer.finish();
                wt.join();
                writer.rethrow();
            } finally {
                writer.finish();
                wt.join();
            }
            long t1 = System.nanoTime();
            writeNanos = t1 - t0;
            rel.sync();
            syncNanos = System.nanoTime() - t1;
            progress.progress(rows, rows, bytes, System.nanoTime() - t0);
        }
        return blocks;
    }

    /** The writer thread: writes the chunk handed to it while the loader fills the other one. */
    private static final class ChunkWriter implements Runnable {
        private final SmgrRelation rel;
        private final boolean[] busy = new boolean[2];
        private final long[] blockOf = new long[2];
        private final int[] count = new int[2];
        private final MemorySegment[] seg = new MemorySegment[2];
        private int next;
        private boolean done;
        private PosixException failure;
        private long written;

        ChunkWriter(SmgrRelation rel) {
            this.rel = rel;
        }

        synchronized void awaitFree(int which) throws InterruptedException, PosixException {
            while (busy[which] && failure == null) {
                wait();
            }
            rethrow();
        }

        synchronized void submit(int which, long block, MemorySegment chunk, int n) {
            blockOf[which] = block;
            count[which] = n;
            seg[which] = chunk;
            busy[which] = true;
            notifyAll();
        }

        synchronized void finish() throws InterruptedException {
            while ((busy[0] || busy[1]) && failure == null) {
                wait();
            }
            done = true;
            notifyAll();
        }

        synchronized long written() {
            return written;
        }

        synchronized void rethrow() throws PosixException {
            if (failure != null) {
                throw failure;
            }
        }

        @Override
        public void run() {
            for (;;) {
                int w;
                synchronized (this) {
                    while (!busy[next] && !done) {
                        try {
                            wait();
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                    if (!busy[next]) {
                        return;
                    }
                    w = next;
                }
                try {
                    rel.write(blockOf[w], seg[w], count[w]);
                } catch (PosixException e) {
                    synchronized (this) {
                        failure = e;
                        notifyAll();
                    }
                    return;
                }
                synchronized (this) {
                    written += (long) count[w] * Page.SIZE;
                    busy[w] = false;
                    next ^= 1;
                    notifyAll();
                }
            }
        }
    }
}
