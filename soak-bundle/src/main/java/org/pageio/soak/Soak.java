package org.pageio.soak;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.pageio.api.AioContext;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BgWriterSettings;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.method.fault.FaultInjectingMethod;
import org.pageio.method.fault.FaultPlan;
import org.pageio.table.RowFilter;
import org.pageio.table.ScanRequest;
import org.pageio.table.SetClause;
import org.pageio.table.TableService;
import org.pageio.table.TableServices;
import org.pageio.table.TableShape;
import org.pageio.table.VacuumOptions;

/**
 * The soak: for a while, sessions read and write a relation through one buffer manager while its
 * I/O method is hot-swapped round the given methods, each wrapped in a fault plan, checkpoints and
 * the background writer running; every byte read is checked against a model of what was written.
 * At the end a fresh buffer manager with no faults reads every block back against the model.
 *
 * <p>Each session owns the blocks {@code b % sessions == id}: only it writes them, so its checks
 * are exact; its streams read everyone's blocks (eviction and write-back are shared). Beside them,
 * one more session changes the rows of a table ({@link #ROWS_TABLE}) through the same pool: deletes,
 * updates in place and of its indexed column, VACUUM and scans that set the visibility map; after
 * each statement its sequential, index and index-only counts must agree with each other and with
 * the rows the deletes left. Faults that
 * a reader must see (EIO) are retried; faults the buffer manager absorbs (short reads and writes,
 * delays, reordering) must not show at all. Not thread-safe: one soak at a time per directory.
 */
public final class Soak {

    /** How the soak runs. {@code progress} gets a line every few seconds; may be null. */
    public record Options(Path dir, long durationMillis, int sessions, long seed, List<IoMethod> methods,
            long swapEveryMillis, PrintStream progress) {
        public Options {
            if (methods.isEmpty()) {
                throw new IllegalArgumentException("the soak needs at least one available I/O method");
            }
            if (sessions < 1 || sessions > 32) {
                throw new IllegalArgumentException("--sessions " + sessions + " is out of range: valid values are 1..32");
            }
        }
    }

    /** What the soak did and found; {@link #ok()} when nothing was wrong. */
    public record Result(long millis, List<String> methods, long reads, long writes, long pagesChecked, long wrongPages,
            long errorsRetried, long faultsInjected, long swaps, long checkpoints, long hangWarnings, long leakedPins,
            long leakedHandles, long rowStatements, List<String> problems) {
        public boolean ok() {
            return wrongPages == 0 && hangWarnings == 0 && leakedPins == 0 && leakedHandles == 0 && problems.isEmpty();
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "soak: %s after %.1f s over %s: %,d I/Os (%,d reads, %,d writes), %,d pages checked,"
                    + " %,d wrong, %,d errors reported and retried, %,d faults injected, %,d method swaps, %,d checkpoints,"
                    + " %,d hang warnings, %,d leaked pins, %,d leaked I/O handles, %,d row changes and VACUUMs with every plan"
                    + " agreeing%s", ok() ? "OK" : "FAILED", millis / 1000.0,
                    String.join(", ", methods), reads + writes, reads, writes, pagesChecked, wrongPages, errorsRetried, faultsInjected,
                    swaps, checkpoints, hangWarnings, leakedPins, leakedHandles, rowStatements,
                    problems.isEmpty() ? "" : "; problems: " + problems);
        }
    }

    static final long REL = 95000;
    /** The table whose rows change during the soak. */
    static final String ROWS_TABLE = "soak_rows";
    static final int ROWS = 1_000;
    static final int BLOCKS = 1024;
    /** The faults every method meets: those the buffer manager absorbs, and a rare EIO the reader retries. */
    static final String[] FAULTS = {"eio read fraction=0.002", "short_read fraction=0.02", "short_write fraction=0.02",
        "delay read delay=2 fraction=0.01", "reorder fraction=0.1"};

    private final Options o;
    private final AtomicIntegerArray model = new AtomicIntegerArray(BLOCKS);
    private final AtomicLong checked = new AtomicLong();
    private final AtomicLong wrong = new AtomicLong();
    private final AtomicLong retried = new AtomicLong();
    private final AtomicLong swaps = new AtomicLong();
    private final AtomicLong checkpoints = new AtomicLong();
    private final AtomicLong rowStatements = new AtomicLong();
    /** count(*) of the rows table after the last statement. */
    private final AtomicLong rowsLeft = new AtomicLong(ROWS);
    private final Queue<String> problems = new ConcurrentLinkedQueue<>();
    private volatile boolean stop;

    private Soak(Options o) {
        this.o = o;
    }

    /** Runs the soak; never throws for what it finds (that is in the result). */
    public static Result run(Options o) throws IOException {
        return new Soak(o).run();
    }

    private Result run() throws IOException {
        long t0 = System.nanoTime();
        long hangs0 = AioContext.hangWarnings();
        List<FaultInjectingMethod> faulty = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (IoMethod m : o.methods()) {
            faulty.add(new FaultInjectingMethod(m, FaultPlan.parse(FAULTS), o.seed()));
            names.add(m.name());
        }
        BufMgrSettings settings = new BufMgrSettings.Builder().sharedBuffers(128).maxSessions(o.sessions() + 4)
                .segmentBlocks(64).build();
        long reads;
        long writes;
        long leakedPins;
        long leakedHandles;
        try (BufferManagerCore core = BufferManagerCore.open(o.dir(), settings, faulty.get(0))) {
            core.storage().setDirectIo(faulty.get(0).bypassesPageCache());
            SmgrRelation rel = core.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, REL));
            if (rel.exists()) {
                rel.unlink(); // a soak starts from nothing
                rel = core.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, REL));
            }
            load(core, rel);
            TableService tables = loadRows(core);
            core.startBackgroundWriter(new BgWriterSettings(10, 100, 2.0));
            List<Thread> threads = new ArrayList<>();
            for (int id = 0; id < o.sessions(); id++) {
                int session = id;
                SmgrRelation r = rel;
                threads.add(Thread.ofPlatform().name("pageio soak session " + id).start(() -> session(core, r, session)));
            }
            threads.add(Thread.ofPlatform().name("pageio soak rows").start(() -> rows(tables)));
            threads.add(Thread.ofPlatform().name("pageio soak swapper").start(() -> swapper(core, faulty)));
            threads.add(Thread.ofPlatform().name("pageio soak checkpointer").start(() -> checkpointer(core)));
            long end = t0 + TimeUnit.MILLISECONDS.toNanos(o.durationMillis());
            long nextReport = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (System.nanoTime() - end < 0 && problems.isEmpty()) {
                sleep(50);
                if (o.progress() != null && System.nanoTime() - nextReport > 0) {
                    nextReport += TimeUnit.SECONDS.toNanos(5);
                    o.progress().printf(Locale.ROOT, "soak: %d s of %d: %,d pages checked, %,d wrong, %,d swaps, %,d faults%n",
                            TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0), o.durationMillis() / 1000, checked.get(),
                            wrong.get(), swaps.get(), injected(faulty));
                }
            }
            stop = true;
            for (Thread t : threads) {
                try {
                    t.join(TimeUnit.MINUTES.toMillis(2));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                if (t.isAlive()) {
                    problems.add(t.getName() + " did not stop within 2 minutes");
                }
            }
            core.stopBackgroundWriter();
            // every session has closed: no buffer may stay pinned, no handle busy, no session open
            leakedPins = core.pool().pinnedBuffers();
            leakedHandles = core.aio().snapshot().size() + core.aio().openSessions().size();
            core.checkpoint();
            reads = core.stats().total(StatIo.Column.READS);
            writes = core.stats().total(StatIo.Column.WRITES);
        }
        verifyAfresh();
        for (FaultInjectingMethod f : faulty) {
            f.close();
        }
        return new Result(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), names, reads, writes, checked.get(),
                wrong.get(), retried.get(), injected(faulty), swaps.get(), checkpoints.get(),
                AioContext.hangWarnings() - hangs0, leakedPins, leakedHandles, rowStatements.get(), List.copyOf(problems));
    }

    private void load(BufferManagerCore core, SmgrRelation rel) throws IOException {
        try (BufferSession s = core.openSession("soak")) {
            int[] bufs = new int[16];
            for (int b = 0; b < BLOCKS; b += 16) {
                long first = s.extendBy(rel, 16, bufs, null);
                for (int i = 0; i < 16; i++) {
                    s.beginModify(bufs[i]);
                    fill(s.page(bufs[i]), first + i, 0);
                    s.endModify(bufs[i], true);
                    s.releaseBuffer(bufs[i]);
                }
            }
        }
        core.checkpoint();
    }

    /** One session: reads, writes and streams, checking its own blocks against the model. */
    private void session(BufferManagerCore core, SmgrRelation rel, int id) {
        Random rnd = new Random(o.seed() * 31 + id);
        int n = o.sessions();
        try (BufferSession s = core.openSession("soak")) {
            while (!stop) {
                int op = rnd.nextInt(100);
                long own = (long) id + (long) n * rnd.nextInt((BLOCKS - 1 - id) / n + 1);
                if (op < 40) {
                    int buf = readRetrying(s, rel, own);
                    check(s.page(buf), own, model.get((int) own));
                    s.releaseBuffer(buf);
                } else if (op < 75) {
                    int buf = readRetrying(s, rel, own);
                    int gen = model.get((int) own) + 1;
                    s.beginModify(buf);
                    fill(s.page(buf), own, gen);
                    s.endModify(buf, true);
                    model.set((int) own, gen);
                    s.releaseBuffer(buf);
                } else {
                    long start = rnd.nextInt(BLOCKS - 64);
                    stream(s, rel, start, 64, id, n);
                }
            }
        } catch (IOException | RuntimeException e) {
            problems.add("session " + id + ": " + e.getMessage());
        }
    }

    private void stream(BufferSession s, SmgrRelation rel, long start, int count, int id, int n) throws IOException {
        for (int attempt = 0; ; attempt++) {
            long b = start;
            try (ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(start, count), ReadStream.SEQUENTIAL, null)) {
                for (int buf; (buf = stream.next()) >= 0; b++) {
                    if (b % n == id) {
                        check(s.page(buf), b, model.get((int) b)); // its own: nobody else changes it
                    }
                    s.releaseBuffer(buf);
                }
                return;
            } catch (IOException e) {
                retried.incrementAndGet(); // an injected EIO, named with its block: read again
                if (attempt == 10) {
                    throw e;
                }
            }
        }
    }

    private int readRetrying(BufferSession s, SmgrRelation rel, long block) throws IOException {
        for (int attempt = 0; ; attempt++) {
            try {
                return s.readBuffer(rel, block, null);
            } catch (IOException e) {
                retried.incrementAndGet();
                if (attempt == 10) {
                    throw e;
                }
            }
        }
    }

    /** The rows table, loaded afresh (a soak starts from nothing), with an index on {@code val}. */
    private TableService loadRows(BufferManagerCore core) throws IOException {
        TableService tables = TableServices.over(core.pool());
        for (int attempt = 0; ; attempt++) {
            try {
                if (tables.tables().stream().anyMatch(t -> t.name().equals(ROWS_TABLE))) {
                    tables.drop(ROWS_TABLE);
                }
                tables.load(ROWS_TABLE, TableShape.PREFETCH_TEST, ROWS, o.seed(), null);
                tables.createIndex(ROWS_TABLE, "val");
                return tables;
            } catch (IOException e) {
                retried.incrementAndGet(); // an injected EIO while building the index: again
                if (attempt == 10) {
                    throw e;
                }
            }
        }
    }

    /**
     * The rows session: a statement at a time, each retried when an injected EIO stops it (a
     * statement that fails aborts, changing nothing), then every plan's count checked.
     */
    private void rows(TableService tables) {
        Random rnd = new Random(o.seed() * 17 + 3);
        String what = "loading";
        try {
            while (!stop) {
                long a = 1 + rnd.nextInt(ROWS);
                int op = rnd.nextInt(6);
                what = switch (op) {
                    case 0 -> "DELETE WHERE id BETWEEN " + a + " AND " + (a + 4);
                    case 1 -> "UPDATE SET val = val + 0 WHERE id BETWEEN " + a + " AND " + (a + 29);
                    case 2 -> "UPDATE SET val = val + 1 WHERE id BETWEEN " + a + " AND " + (a + 9);
                    case 3 -> "VACUUM";
                    default -> "count(*)";
                };
                long deleted = retrying(() -> switch (op) {
                    case 0 -> tables.delete(ROWS_TABLE, RowFilter.range("id", a, a + 4));
                    case 1 -> {
                        tables.update(ROWS_TABLE, SetClause.parse("SET", "val", "=", "val", "+", "0"), RowFilter.range("id", a, a + 29));
                        yield 0L;
                    }
                    case 2 -> {
                        tables.update(ROWS_TABLE, SetClause.parse("SET", "val", "=", "val", "+", "1"), RowFilter.range("id", a, a + 9));
                        yield 0L;
                    }
                    case 3 -> {
                        tables.vacuum(ROWS_TABLE, VacuumOptions.DEFAULT);
                        yield 0L;
                    }
                    default -> {
                        tables.scan(ScanRequest.count(ROWS_TABLE));
                        yield 0L;
                    }
                });
                long expect = rowsLeft.addAndGet(-deleted);
                long seq = retrying(() -> tables.scan(ScanRequest.count(ROWS_TABLE)).count());
                long index = retrying(() -> tables.scan(ScanRequest.index(ROWS_TABLE, "val", Integer.MIN_VALUE, Integer.MAX_VALUE)).count());
                long ios = retrying(() -> tables.scan(ScanRequest.indexOnly(ROWS_TABLE, "val", Integer.MIN_VALUE, Integer.MAX_VALUE))
                        .count());
                rowStatements.incrementAndGet();
                if (seq != expect || index != expect || ios != expect) {
                    wrong.incrementAndGet();
                    problems.add(String.format(Locale.ROOT, "table %s after statement %d: count(*) %d by a sequential scan, %d by an"
                            + " index scan, %d by an index-only scan; %d rows are left", ROWS_TABLE, rowStatements.get(), seq, index,
                            ios, expect));
                    return;
                }
            }
        } catch (IOException | RuntimeException e) {
            problems.add("rows session, " + what + " on " + ROWS_TABLE + " (statement " + (rowStatements.get() + 1) + "): "
                    + e);
        }
    }

    private interface Statement {
        long run() throws IOException;
    }

    /**
     * Runs a statement until it gets through the faults. A statement reads many pages, each read of
     * one block failing 2% of the time (a short read inside a block is an error, as in PostgreSQL),
     * so up to {@link #STATEMENT_ATTEMPTS} attempts: one that fails aborts, changing nothing.
     */
    private long retrying(Statement s) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                return s.run();
            } catch (IOException e) {
                retried.incrementAndGet(); // an injected fault, named with its block: the statement aborted, run it again
                if (attempt == STATEMENT_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    /** Attempts of one row statement under the fault plans. */
    static final int STATEMENT_ATTEMPTS = 200;

    /** Hot-swaps the buffer manager's method round the list, I/O in flight and all. */
    private void swapper(BufferManagerCore core, List<FaultInjectingMethod> methods) {
        int next = 0;
        while (!stop) {
            sleep(o.swapEveryMillis());
            if (stop || methods.size() < 2) {
                continue;
            }
            next = (next + 1) % methods.size();
            IoMethod m = methods.get(next);
            try {
                core.swapMethod(m, TimeUnit.SECONDS.toNanos(10)); // the storage manager's O_DIRECT switched in order
                swaps.incrementAndGet();
            } catch (RuntimeException e) {
                problems.add("swap to io_method=" + m.name() + ": " + e.getMessage());
            }
        }
    }

    private void checkpointer(BufferManagerCore core) {
        while (!stop) {
            sleep(1000);
            try {
                core.checkpoint();
                checkpoints.incrementAndGet();
            } catch (IOException | RuntimeException e) {
                problems.add("checkpoint: " + e.getMessage());
            }
        }
    }

    /** A fresh buffer manager, the first method without faults: every block as the model says, the rows table's count too. */
    private void verifyAfresh() throws IOException {
        BufMgrSettings settings = new BufMgrSettings.Builder().sharedBuffers(128).maxSessions(4).segmentBlocks(64).build();
        try (BufferManagerCore core = BufferManagerCore.open(o.dir(), settings, o.methods().get(0))) {
            core.storage().setDirectIo(o.methods().get(0).bypassesPageCache());
            SmgrRelation rel = core.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, REL));
            try (BufferSession s = core.openSession("soak");
                    ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, BLOCKS), ReadStream.SEQUENTIAL, null)) {
                for (long b = 0; b < BLOCKS; b++) {
                    int buf = stream.next();
                    check(s.page(buf), b, model.get((int) b));
                    s.releaseBuffer(buf);
                }
            }
            rel.unlink();
            TableService tables = TableServices.over(core.pool());
            long seq = tables.scan(ScanRequest.count(ROWS_TABLE)).count();
            long ios = tables.scan(ScanRequest.indexOnly(ROWS_TABLE, "val", Integer.MIN_VALUE, Integer.MAX_VALUE)).count();
            if (seq != rowsLeft.get() || ios != rowsLeft.get()) {
                wrong.incrementAndGet();
                problems.add(String.format(Locale.ROOT, "table %s read afresh: count(*) %d by a sequential scan, %d by an index-only"
                        + " scan; %d rows are left", ROWS_TABLE, seq, ios, rowsLeft.get()));
            }
            tables.drop(ROWS_TABLE);
        }
    }

    private static final int HEADER = Page.HEADER_SIZE;

    /** Generation {@code gen}'s content of block {@code block}: a valid page, checksummed at write-back. */
    static void fill(MemorySegment page, long block, int gen) {
        Page.init(page, 0);
        for (int i = HEADER; i < StorageManager.BLCKSZ; i += 8) {
            page.set(ValueLayout.JAVA_LONG_UNALIGNED, i, word(block, gen, i));
        }
    }

    private static long word(long block, int gen, int i) {
        return (block << 40) ^ ((long) gen << 20) ^ i ^ 0x5DEECE66DL;
    }

    private void check(MemorySegment page, long block, int gen) {
        checked.incrementAndGet();
        for (int i = HEADER; i < StorageManager.BLCKSZ; i += 8) {
            if (page.get(ValueLayout.JAVA_LONG_UNALIGNED, i) != word(block, gen, i)) {
                wrong.incrementAndGet();
                problems.add("block " + block + " of relation " + REL + " does not hold generation " + gen
                        + " (first wrong word at byte " + i + ")");
                return;
            }
        }
    }

    private static long injected(List<FaultInjectingMethod> methods) {
        long n = 0;
        for (FaultInjectingMethod m : methods) {
            n += m.injected();
        }
        return n;
    }


    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
