package org.pageio.table.load;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.ForkNumber;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.heap.HeapPage;
import org.pageio.table.LoadProgress;
import org.pageio.table.TableShape;
import org.pageio.heap.vm.VisibilityMap;

/**
 * Builds heap pages from a {@link TableShape}'s generator and hands them to a {@link PageSink} in
 * chunks of {@link #CHUNK_BLOCKS} pages (8 MiB, one combined write each, split only at segment
 * boundaries). Pages carry checksums (the same {@link Page#setChecksum} the buffer manager's
 * verification checks). Writes go around the buffer pool (the relation is new, nothing caches it).
 *
 * <h2>Loaded frozen</h2>
 * As PostgreSQL's {@code COPY FREEZE}: every tuple is frozen, every heap page carries
 * {@code PD_ALL_VISIBLE}, and the relation's visibility map ({@link VisibilityMap}, the vm fork) has
 * both bits set for every heap block. The map's pages are written after the heap's, through a sink
 * of the same factory (so the same path and the same fsync at its end): a load that returned has
 * both forks durable.
 *
 * <h2>Threads</h2>
 * {@code builders} builder threads fill a ring of {@code 2 × builders + 2} off-heap chunks, each
 * taking the next chunk number; the calling thread is the writer: it hands chunk 0, 1, 2, … to
 * the sink in block order as each is built, reports progress, and finally calls
 * {@link PageSink#finish} (the fsync). A chunk's slot is free again once the sink has written it:
 * at once for a synchronous sink; for an asynchronous one ({@link PageSink#bulk}) when its
 * {@link PageSink#writtenThrough} passes the chunk, polled after each write, or, when a builder
 * needs that slot next, after {@link PageSink#awaitWritten}. The sink is closed (its writes
 * drained) before the chunks' memory is freed. A builder waits for its slot's previous chunk to be
 * written; the writer waits for the next chunk to be built. One monitor ({@code this} of the
 * {@link Ring}) guards the ring: a few hundred hand-offs per gigabyte, nothing per page or row.
 * A failure on either side (an {@link IOException} from the sink, a runtime error in a
 * builder, an interrupt) stops both and is rethrown in the calling thread; the builders are
 * joined before {@link #load} returns or throws.
 *
 * <p>No allocation per row: values go straight from the generator into the chunk.
 * One load per instance.
 */
public final class Loader {

    /** Pages per combined write: 8 MiB. */
    public static final int CHUNK_BLOCKS = 1024;

    /** Chunks in the ring when the issuing thread builds the pages itself ({@code builders = 0}): 32 MiB. */
    public static final int INLINE_SLOTS = 4;

    private final PageSink.Factory sinks;
    private final int builders;
    private long writeNanos;
    private long syncNanos;
    private long bytes;
    // where the issuing (calling) thread's time went, per chunk, System.nanoTime: a few hundred
    // readings per GB, nothing per page
    private long buildNanos;
    private long builtWaitNanos;
    private long sinkWriteNanos;
    private long slotWaitNanos;

    /** Without a pool: {@link PageSink#direct()}, one builder per core up to 4 ({@code pageio:load} uses {@link PageSink#bulk}). */
    public Loader() {
        this(PageSink.direct(), defaultBuilders());
    }

    /**
     * @param builders builder threads; {@code 0}: the calling thread builds every page itself and
     *                 hands it to the sink (PostgreSQL's shape: one backend builds and issues its
     *                 writes, so with {@code io_method=sync} building and writing take turns in one
     *                 thread, and only an asynchronous sink overlaps them)
     */
    public Loader(PageSink.Factory sinks, int builders) {
        if (builders < 0) {
            throw new IllegalArgumentException("builders = " + builders + ": 0 (the calling thread builds) or more");
        }
        this.sinks = sinks;
        this.builders = builders;
    }

    public static int defaultBuilders() {
        return Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
    }

    /** Time to build and write the pages, before the fsync. */
    public long writeNanos() {
        return writeNanos;
    }

    /** Time of {@link PageSink#finish} (the fsync). */
    public long syncNanos() {
        return syncNanos;
    }

    public long bytes() {
        return bytes;
    }

    /** Builder threads (0: the calling thread built the pages). */
    public int builders() {
        return builders;
    }

    /**
     * Time the calling thread spent building pages (only with {@code builders = 0}; with builder
     * threads it builds nothing).
     */
    public long buildNanos() {
        return buildNanos;
    }

    /** Time the calling thread waited for the builder threads to finish the next chunk. */
    public long builtWaitNanos() {
        return builtWaitNanos;
    }

    /**
     * Time the calling thread spent in {@link PageSink#write}: the write itself for a synchronous
     * sink (and the bulk sink over {@code io_method=sync}); starting the writes, and waiting for a
     * free place among the writes in flight, for an asynchronous one.
     */
    public long sinkWriteNanos() {
        return sinkWriteNanos;
    }

    /** Time the calling thread waited in {@link PageSink#awaitWritten} for a chunk's slot to be written. */
    public long slotWaitNanos() {
        return slotWaitNanos;
    }

    /**
     * Writes {@code rows} rows of {@code shape} to {@code rel} (created here), then fsyncs it.
     * Returns the number of blocks written.
     */
    public long load(SmgrRelation rel, TableShape shape, long rows, long seed, boolean checksums, LoadProgress progress)
            throws IOException, InterruptedException {
        long blocks = loadHeap(rel, shape, rows, seed, checksums, progress);
        long t = System.nanoTime();
        writeVisibilityMap(rel, blocks, checksums);
        syncNanos += System.nanoTime() - t;
        return blocks;
    }

    /**
     * Writes the vm fork of a heap of {@code blocks} blocks loaded frozen: both bits for every block,
     * through a sink of this loader's factory, fsynced at its finish.
     */
    private void writeVisibilityMap(SmgrRelation rel, long blocks, boolean checksums) throws IOException {
        SmgrRelation vm = rel.fork(ForkNumber.VISIBILITYMAP_FORKNUM);
        long n = VisibilityMap.mapBlocks(blocks);
        if (n == 0) {
            return;
        }
        vm.create();
        int per = VisibilityMap.HEAPBLOCKS_PER_PAGE;
        // the sink (which waits for its writes in flight) closes before the arena its writes read
        try (Arena arena = Arena.ofShared(); PageSink sink = sinks.open(vm, n)) {
            MemorySegment pages = arena.allocate(Math.min(n, CHUNK_BLOCKS) * Page.SIZE, 4096);
            for (long first = 0; first < n; first += CHUNK_BLOCKS) {
                int k = (int) Math.min(CHUNK_BLOCKS, n - first);
                sink.awaitWritten(first); // the previous chunk's pages are no longer read
                for (int i = 0; i < k; i++) {
                    long b = first + i;
                    MemorySegment page = pages.asSlice((long) i * Page.SIZE, Page.SIZE);
                    VisibilityMap.initAllFrozen(page, b * per, Math.min(blocks, (b + 1) * per));
                    if (checksums) {
                        Page.setChecksum(page, b);
                    }
                }
                sink.write(first, pages, k);
            }
            sink.finish();
        }
    }

    private long loadHeap(SmgrRelation rel, TableShape shape, long rows, long seed, boolean checksums, LoadProgress progress)
            throws IOException, InterruptedException {
        rel.create();
        long blocks = shape.blocksFor(rows);
        long chunks = (blocks + CHUNK_BLOCKS - 1) / CHUNK_BLOCKS;
        int slots = builders == 0 ? INLINE_SLOTS : 2 * builders + 2;
        long t0 = System.nanoTime();
        long lastReport = t0;
        // resources close in reverse order: the sink (which waits for its writes in flight) before
        // the arena that holds the chunks those writes read
        try (Arena arena = Arena.ofShared(); PageSink sink = sinks.open(rel, blocks)) {
            PageBuilder pages = new PageBuilder(shape, rows, seed, checksums, arena);
            MemorySegment[] chunk = new MemorySegment[slots];
            for (int s = 0; s < slots; s++) {
                chunk[s] = arena.allocate((long) CHUNK_BLOCKS * Page.SIZE, 4096);
            }
            MemorySegment xs = arena.allocate(Math.max(1, shape.textLength()));
            xs.fill((byte) 'x');
            if (builders == 0) {
                // the issuing thread builds chunk k into slot k % slots, once the sink no longer
                // reads that slot (its chunk k - slots is written), then hands it to the sink: a
                // synchronous sink writes it before returning, an asynchronous one starts its
                // writes and this thread builds the next chunk while they run
                for (long k = 0; k < chunks; k++) {
                    long first = k * CHUNK_BLOCKS;
                    int n = (int) Math.min(CHUNK_BLOCKS, blocks - first);
                    long a = System.nanoTime();
                    if (k >= slots) {
                        sink.awaitWritten((k - slots + 1) * CHUNK_BLOCKS);
                    }
                    long b = System.nanoTime();
                    MemorySegment c = chunk[(int) (k % slots)];
                    pages.build(c, first, n, xs);
                    long w = System.nanoTime();
                    sink.write(first, c, n);
                    sink.writtenThrough(); // reaps completed writes (and restarts failed ones) early
                    long now = System.nanoTime();
                    slotWaitNanos += b - a;
                    buildNanos += w - b;
                    sinkWriteNanos += now - w;
                    bytes += (long) n * Page.SIZE;
                    if (now - lastReport > 100_000_000L) {
                        lastReport = now;
                        progress.progress(Math.min(rows, (first + n) * shape.rowsPerPage()), rows, bytes, now - t0);
                    }
                }
                finishSink(sink, progress, rows, t0);
                return blocks;
            }
            Ring ring = new Ring(slots, chunks);
            Thread[] threads = new Thread[(int) Math.min(builders, Math.max(1, chunks))];
            for (int i = 0; i < threads.length; i++) {
                threads[i] = Thread.ofPlatform().name("pageio loader builder " + i).daemon().start(() -> {
                    try {
                        for (long k; (k = ring.claim()) >= 0; ) {
                            long first = k * CHUNK_BLOCKS;
                            int n = (int) Math.min(CHUNK_BLOCKS, blocks - first);
                            pages.build(chunk[(int) (k % slots)], first, n, xs);
                            ring.built(k);
                        }
                    } catch (InterruptedException e) {
                        ring.fail(e);
                    } catch (RuntimeException | Error e) {
                        ring.fail(e);
                    }
                });
            }
            try {
                long released = 0; // chunks below this are written and their slots free again
                for (long k = 0; k < chunks; k++) {
                    // the builder of chunk k needs chunk k - slots's slot: an asynchronous sink may
                    // still be writing from it
                    long a = System.nanoTime();
                    if (k - slots >= released) {
                        sink.awaitWritten((k - slots + 1) * CHUNK_BLOCKS);
                        released = release(ring, released, k - slots + 1);
                    }
                    long b = System.nanoTime();
                    ring.awaitBuilt(k);
                    long first = k * CHUNK_BLOCKS;
                    int n = (int) Math.min(CHUNK_BLOCKS, blocks - first);
                    long w = System.nanoTime();
                    sink.write(first, chunk[(int) (k % slots)], n);
                    long through = sink.writtenThrough();
                    released = release(ring, released, through >= first + n ? k + 1 : through / CHUNK_BLOCKS);
                    bytes += (long) n * Page.SIZE;
                    long now = System.nanoTime();
                    slotWaitNanos += b - a;
                    builtWaitNanos += w - b;
                    sinkWriteNanos += now - w;
                    if (now - lastReport > 100_000_000L) {
                        lastReport = now;
                        progress.progress(Math.min(rows, (first + n) * shape.rowsPerPage()), rows, bytes, now - t0);
                    }
                }
            } catch (IOException | RuntimeException | InterruptedException e) {
                ring.fail(e);
                throw e;
            } finally {
                for (Thread t : threads) {
                    t.join();
                }
            }
            finishSink(sink, progress, rows, t0);
        }
        return blocks;
    }

    /** Ends a load: the sink's final writes and fsyncs, timed apart from the writing, and the last progress report. */
    private void finishSink(PageSink sink, LoadProgress progress, long rows, long t0) throws IOException {
        long t1 = System.nanoTime();
        writeNanos = t1 - t0;
        sink.finish();
        syncNanos = System.nanoTime() - t1;
        progress.progress(rows, rows, bytes, System.nanoTime() - t0);
    }

    /** Marks chunks {@code [from, to)} written (their slots free for the builders); returns the new mark. */
    private static long release(Ring ring, long from, long to) {
        for (long k = from; k < to; k++) {
            ring.written(k);
        }
        return Math.max(from, to);
    }

    /**
     * The chunk ring's hand-offs. Chunk {@code k} lives in slot {@code k % slots}; it may be built
     * once chunk {@code k - slots} is written, and written once it is built.
     */
    private static final class Ring {
        private final int slots;
        private final long chunks;
        private final long[] builtChunk;
        private long nextClaim;
        private long written;
        private Throwable failure;

        Ring(int slots, long chunks) {
            this.slots = slots;
            this.chunks = chunks;
            this.builtChunk = new long[slots];
            java.util.Arrays.fill(builtChunk, -1);
        }

        /** The next chunk to build, once its slot is free; -1 when all are claimed or the load failed. */
        synchronized long claim() throws InterruptedException {
            if (failure != null || nextClaim >= chunks) {
                return -1;
            }
            long k = nextClaim++;
            while (k - slots >= written && failure == null) {
                wait();
            }
            return failure == null ? k : -1;
        }

        synchronized void built(long k) {
            builtChunk[(int) (k % slots)] = k;
            notifyAll();
        }

        synchronized void awaitBuilt(long k) throws InterruptedException, IOException {
            while (builtChunk[(int) (k % slots)] != k && failure == null) {
                wait();
            }
            if (failure != null) {
                rethrow();
            }
        }

        synchronized void written(long k) {
            builtChunk[(int) (k % slots)] = -1;
            written = k + 1;
            notifyAll();
        }

        synchronized void fail(Throwable t) {
            if (failure == null) {
                failure = t;
            }
            notifyAll();
        }

        private void rethrow() throws IOException, InterruptedException {
            switch (failure) {
                case IOException e -> throw e;
                case InterruptedException e -> throw e;
                case RuntimeException e -> throw e;
                case Error e -> throw e;
                default -> throw new IllegalStateException(failure);
            }
        }
    }

    /**
     * Fills chunks with the generator's pages. Every full page of a shape has the same layout, so
     * a template page (header, line pointers, tuple headers, text headers, and the text itself when
     * it is {@linkplain TableShape#constantText constant}) is made once; a page is then a copy of
     * it with each row's {@code t_ctid} block, integer columns and text patched in, and its
     * checksum. The last, partial page is built tuple by tuple. Read-only after construction, so
     * the builders share it.
     */
    private static final class PageBuilder {
        private final TableShape shape;
        private final long rows;
        private final long seed;
        private final boolean checksums;
        private final int rpp;
        private final int natts;
        private final int text;
        private final int textLen;
        private final int tupleLen;
        private final int ints;
        private final int[] intOffsets;
        private final boolean[] wide;
        private final MemorySegment template;
        private final int[] tupleAt;

        PageBuilder(TableShape shape, long rows, long seed, boolean checksums, Arena arena) {
            this.shape = shape;
            this.rows = rows;
            this.seed = seed;
            this.checksums = checksums;
            this.rpp = shape.rowsPerPage();
            this.natts = shape.columns().size();
            this.text = shape.textColumn().offset();
            this.textLen = shape.textLength();
            this.tupleLen = shape.tupleLength();
            this.ints = natts - 1;
            this.intOffsets = new int[ints];
            this.wide = new boolean[ints];
            for (int c = 0; c < ints; c++) {
                intOffsets[c] = shape.columns().get(c).offset();
                wide[c] = shape.columns().get(c).type().width() == 8;
            }
            this.template = arena.allocate(Page.SIZE, 8);
            this.tupleAt = new int[rpp];
            HeapPage.init(template);
            Page.setFlags(template, Page.PD_ALL_VISIBLE); // loaded frozen (COPY FREEZE): visible to all
            MemorySegment xs = arena.allocate(Math.max(1, textLen));
            xs.fill((byte) 'x');
            for (int k = 0; k < rpp; k++) {
                tupleAt[k] = HeapPage.addTuple(template, 0, tupleLen, natts);
                HeapPage.setTextHeader(template, tupleAt[k] + text, textLen);
                if (shape.constantText()) {
                    shape.writeText(template, tupleAt[k] + text + 4, k + 1, seed, xs);
                }
            }
        }

        /** Pages {@code first .. first + n - 1} into {@code chunk}. */
        void build(MemorySegment chunk, long first, int n, MemorySegment xs) {
            long g = first * rpp + 1;
            boolean constant = shape.constantText();
            for (int i = 0; i < n; i++) {
                MemorySegment page = chunk.asSlice((long) i * Page.SIZE, Page.SIZE);
                long b = first + i;
                if (g + rpp - 1 <= rows) {
                    MemorySegment.copy(template, 0, page, 0, Page.SIZE);
                    short hi = (short) (b >>> 16);
                    short lo = (short) b;
                    for (int k = 0; k < rpp; k++, g++) {
                        int off = tupleAt[k];
                        HeapPage.setCtidBlock(page, off, hi, lo);
                        columns(page, off, g);
                        if (!constant) {
                            shape.writeText(page, off + text + 4, g, seed, xs);
                        }
                    }
                } else {
                    HeapPage.init(page);
                    Page.setFlags(page, Page.PD_ALL_VISIBLE);
                    for (int k = 0; k < rpp && g <= rows; k++, g++) {
                        int off = HeapPage.addTuple(page, b, tupleLen, natts);
                        columns(page, off, g);
                        HeapPage.setTextHeader(page, off + text, textLen);
                        shape.writeText(page, off + text + 4, g, seed, xs);
                    }
                }
                if (checksums) {
                    Page.setChecksum(page, b);
                }
            }
        }

        private void columns(MemorySegment page, int off, long g) {
            for (int c = 0; c < ints; c++) {
                long v = shape.value(c, g, seed);
                if (wide[c]) {
                    HeapPage.setLong(page, off + intOffsets[c], v);
                } else {
                    HeapPage.setInt(page, off + intOffsets[c], (int) v);
                }
            }
        }
    }
}
