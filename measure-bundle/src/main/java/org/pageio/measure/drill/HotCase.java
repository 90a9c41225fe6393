package org.pageio.measure.drill;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.table.TableInfo;

/**
 * A table wholly in shared buffers: what the buffer manager costs per block when no block needs
 * I/O. {@code count(*)} of {@link DrillOptions#SMALL_TABLE} as the sequential scan runs it
 * ({@link SliceScan}: one read stream per pass, {@code SEQUENTIAL | USE_BATCHING}, bulk-read ring,
 * {@code effective_io_concurrency = 16}) on one session, with the read stream's all-cached fast path
 * and without it ({@code ReadStream.Options.fastPath}), against a plain loop that counts the same
 * tuples with the same per-page code over a copy of the same pages in one off-heap segment
 * ({@link PlainPages}): the ratio is the buffer manager's cost.
 *
 * <p><b>Hot.</b> The rig's pool holds at least four times the table
 * ({@link DrillPools#hotSharedBuffers}): PostgreSQL's sequential scan reads through the bulk-read
 * ring only above a quarter of {@code shared_buffers}, so at that size it would keep the whole
 * table. pageio's scan takes the ring whatever the size, so the pages are read in without a ring
 * first ({@link SliceScan#prewarm}); a hit never touches the ring. A run counts only when
 * {@code stat_io} says every block was a hit and none was read. Hits never reach the
 * {@code io_method}, so one rig runs the case: {@code sync}'s when it runs.
 *
 * <p><b>Measured.</b> Each run repeats the scan until it has lasted at least
 * {@value #MIN_RUN_NANOS} ns and reports ns per block (its time ÷ passes × blocks). Two unrecorded
 * runs of each runner first (JIT), then {@code --rounds} rounds with the runner order rotated. Every
 * pass's count is checked against the generator. Runs in the drill's thread.
 */
final class HotCase {

    static final String FAST_PATH = "pageio, fast path";
    static final String NO_FAST_PATH = "pageio, no fast path";
    static final String PLAIN_LOOP = "plain loop";
    static final List<String> RUNNERS = List.of(FAST_PATH, NO_FAST_PATH, PLAIN_LOOP);
    /** The shortest run: the scan is repeated until it has lasted this long. */
    static final long MIN_RUN_NANOS = 100_000_000L;

    /**
     * One run: {@code passes} scans of the whole table.
     *
     * @param runner          {@link #FAST_PATH}, {@link #NO_FAST_PATH} or {@link #PLAIN_LOOP}
     * @param round           1-based
     * @param nanos           the run's time, every pass
     * @param passes          scans of the whole table
     * @param hits            {@code stat_io} hits over the run (0 for the plain loop)
     * @param reads           {@code stat_io} reads over the run (0 when hot)
     * @param fastPathReturns buffers the streams returned through the fast path
     * @param cpuNanos        the process's CPU time over the run, -1 if unknown
     * @param counted         whether the run counts (every block a hit, none read)
     * @param note            why not, when not
     */
    record Run(String runner, int round, long nanos, long passes, long hits, long reads, long fastPathReturns, long cpuNanos,
            boolean counted, String note) {

        double nsPerBlock(long blocks) {
            return nanos / ((double) passes * blocks);
        }
    }

    /**
     * The case's runs.
     *
     * @param table         the table's name
     * @param rows          its rows
     * @param blocks        its blocks
     * @param method        the rig's {@code io_method}
     * @param sharedBuffers the rig's pool in blocks
     * @param runs          in the order they ran
     */
    record Result(String table, long rows, long blocks, String method, int sharedBuffers, List<Run> runs) {

        Result {
            runs = List.copyOf(runs);
        }

        /** The counted runs of {@code runner}. */
        List<Run> of(String runner) {
            return runs.stream().filter(r -> r.counted() && r.runner().equals(runner)).toList();
        }

        /** The median ns per block of {@code runner}'s counted runs, or NaN. */
        double nsPerBlock(String runner) {
            return median(of(runner).stream().mapToDouble(r -> r.nsPerBlock(blocks)).sorted().toArray());
        }

        /** How many times the plain loop's blocks per second {@code runner} reaches (plain ns ÷ its ns), or NaN. */
        double againstPlainLoop(String runner) {
            return nsPerBlock(PLAIN_LOOP) / nsPerBlock(runner);
        }

        /** How many times as fast as without it the fast path is, or NaN. */
        double fastPathSpeedup() {
            return nsPerBlock(NO_FAST_PATH) / nsPerBlock(FAST_PATH);
        }
    }

    static double median(double[] sorted) {
        int n = sorted.length;
        return n == 0 ? Double.NaN : n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private final DrillOptions opts;
    private final DrillProgress progress;
    private final RunProbe probe;

    HotCase(DrillOptions opts, DrillProgress progress, RunProbe probe) {
        this.opts = opts;
        this.progress = progress;
        this.probe = probe;
    }

    /**
     * Runs the case on table {@code t} in {@code rig} (method {@code method}, a pool of
     * {@code sharedBuffers} blocks, at least four times the table), its files found through
     * {@code smgr}.
     */
    Result run(StorageManager smgr, TableInfo t, String method, DrillPools.Rig rig, int sharedBuffers) throws IOException {
        SmgrRelation heap = rig.smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, t.relNumber()));
        long blocks = t.blocks();
        rig.empty(method);
        long read = SliceScan.prewarm(rig.pool, heap, blocks);
        progress.line(String.format(Locale.ROOT, "drill: hot: %s (%,d blocks) read into io_method=%s's shared buffers (%,d blocks"
                + " read, shared_buffers=%dMB)", t.name(), blocks, method, read, sharedBuffers / 128));
        List<Run> runs = new ArrayList<>();
        try (PlainPages plain = new PlainPages(DrillTables.heapFiles(smgr, t), opts.segmentBlocks(), blocks)) {
            for (String r : RUNNERS) {
                progress.status(String.format(Locale.ROOT, "drill: hot warm-up (not recorded)  %-22s …", r));
                runOne(r, 0, t, heap, rig, plain); // twice: the JIT compiles each runner's loop on its own profile
                Run w = runOne(r, 0, t, heap, rig, plain);
                progress.line(String.format(Locale.ROOT, "drill: hot warm-up (not recorded)  %-22s %7.1f ns/block", r,
                        w.nsPerBlock(blocks)));
            }
            for (int round = 1; round <= opts.rounds(); round++) {
                for (int i = 0; i < RUNNERS.size(); i++) {
                    String r = RUNNERS.get((i + round - 1) % RUNNERS.size());
                    progress.status(String.format(Locale.ROOT, "drill: hot round %d/%d  %-22s running…", round, opts.rounds(), r));
                    Run x = runOne(r, round, t, heap, rig, plain);
                    runs.add(x);
                    progress.line(String.format(Locale.ROOT, "drill: hot round %d/%d  %-22s %7.1f ns/block  %,d passes in %.1f ms%s",
                            round, opts.rounds(), r, x.nsPerBlock(blocks), x.passes(), x.nanos() / 1e6,
                            x.counted() ? "" : "  NOT COUNTED: " + x.note()));
                }
            }
        }
        return new Result(t.name(), t.rows(), blocks, method, sharedBuffers, runs);
    }

    private Run runOne(String runner, int round, TableInfo t, SmgrRelation heap, DrillPools.Rig rig, PlainPages plain)
            throws IOException {
        long blocks = t.blocks();
        long passes = 0;
        if (runner.equals(PLAIN_LOOP)) {
            RunProbe.Snapshot before = probe.now();
            long t0 = System.nanoTime();
            long nanos;
            do {
                check(plain.count(0, blocks), t, runner);
                passes++;
            } while ((nanos = System.nanoTime() - t0) < MIN_RUN_NANOS);
            RunProbe.Snapshot after = probe.now();
            return new Run(runner, round, nanos, passes, 0, 0, 0, cpu(before, after), true, null);
        }
        ReadStream.Options options = new ReadStream.Options(DrillOptions.DEFAULT_EIC_VALUE, ReadStream.Options.INHERIT, null,
                runner.equals(FAST_PATH));
        SliceScan.prewarm(rig.pool, heap, blocks); // every block there, whatever ran before
        rig.stats.reset();
        SliceScan scan = new SliceScan();
        RunProbe.Snapshot before;
        RunProbe.Snapshot after;
        long nanos;
        try (BufferSession s = rig.pool.openSession("client")) {
            before = probe.now();
            long t0 = System.nanoTime();
            do {
                check(scan.count(s, heap, 0, blocks, options), t, runner);
                passes++;
            } while ((nanos = System.nanoTime() - t0) < MIN_RUN_NANOS);
            after = probe.now();
        }
        long hits = 0;
        long reads = 0;
        for (StatIo.Row row : rig.stats.rows()) {
            hits += row.value(StatIo.Column.HITS);
            reads += row.value(StatIo.Column.READS);
        }
        String note = reads == 0 && hits == passes * blocks ? null : String.format(Locale.ROOT, "not hot: %,d reads and %,d hits"
                + " over %,d passes of %,d blocks", reads, hits, passes, blocks);
        return new Run(runner, round, nanos, passes, hits, reads, scan.fastPathReturns, cpu(before, after), note == null, note);
    }

    private static long cpu(RunProbe.Snapshot before, RunProbe.Snapshot after) {
        return before.cpuNanos() < 0 || after.cpuNanos() < 0 ? -1 : after.cpuNanos() - before.cpuNanos();
    }

    private static void check(long count, TableInfo t, String runner) {
        if (count != t.rows()) {
            throw new IllegalStateException("hot case, " + runner + ": count(*) of " + t.name() + " returned " + count
                    + " rows, expected " + t.rows());
        }
    }

    /** The case's table (Markdown rows), then what it says: the lines both the text and the Markdown show. */
    static List<String> table(Result r) {
        List<String> out = new ArrayList<>();
        int rounds = r.runs().stream().mapToInt(Run::round).max().orElse(0);
        out.add(String.format(Locale.ROOT, "A table wholly in shared buffers: count(*) of %s (%,d rows, %,d blocks, %s), every block a"
                + " hit; io_method=%s (hits never reach the method), shared_buffers=%dMB (at least 4× the table). Each run repeats"
                + " the scan for at least %d ms; ns per block, medians of %d round(s).", r.table(), r.rows(), r.blocks(),
                Drill.mb(r.blocks() * StorageManager.BLCKSZ), r.method(), r.sharedBuffers() / 128, MIN_RUN_NANOS / 1_000_000,
                rounds));
        out.add("");
        out.add("| runner | ns per block | min–max ns per block | million blocks/s | × plain loop | passes per run | shared hit per pass"
                + " | blocks read | fast-path returns per pass | CPU ns per block | runs counted |");
        out.add("|---|---|---|---|---|---|---|---|---|---|---|");
        for (String runner : RUNNERS) {
            List<Run> all = r.runs().stream().filter(x -> x.runner().equals(runner)).toList();
            List<Run> ok = r.of(runner);
            if (ok.isEmpty()) {
                out.add("| " + runner + " | – | – | – | – | – | – | – | – | – | 0/" + all.size() + " |");
                continue;
            }
            double[] ns = ok.stream().mapToDouble(x -> x.nsPerBlock(r.blocks())).sorted().toArray();
            double med = median(ns);
            boolean plain = runner.equals(PLAIN_LOOP);
            Run first = ok.get(0);
            long cpuRuns = ok.stream().filter(x -> x.cpuNanos() >= 0).count();
            double cpu = cpuRuns == ok.size() ? median(ok.stream().mapToDouble(x -> x.cpuNanos() / ((double) x.passes() * r.blocks()))
                    .sorted().toArray()) : Double.NaN;
            out.add(String.format(Locale.ROOT, "| %s | %.1f | %.1f–%.1f | %.1f | %s | %d | %s | %s | %s | %s | %d/%d |", runner, med, ns[0],
                    ns[ns.length - 1], 1e3 / med, plain ? "–" : String.format(Locale.ROOT, "%.2f×", r.againstPlainLoop(runner)),
                    first.passes(), plain ? "–" : String.valueOf(first.hits() / first.passes()),
                    plain ? "–" : String.valueOf(ok.stream().mapToLong(Run::reads).sum()),
                    plain ? "–" : String.valueOf(first.fastPathReturns() / first.passes()),
                    Double.isNaN(cpu) ? "–" : String.format(Locale.ROOT, "%.1f", cpu), ok.size(), all.size()));
        }
        out.add("");
        out.add("The pageio rows scan as the sequential scan does (one read stream per pass: SEQUENTIAL | USE_BATCHING, bulk-read ring,"
                + " effective_io_concurrency=16; the pages were read in first without a ring, since pageio's scan takes the ring"
                + " whatever the table's size and a hit never touches it); \"no fast path\" is the same stream with"
                + " ReadStream.Options.fastPath off. The plain loop counts the same tuples with the same per-page code over a copy of"
                + " the pages in one off-heap segment: no mapping lookup, no pin, no stream. CPU is the whole process's (JIT and GC"
                + " included).");
        double fast = r.againstPlainLoop(FAST_PATH);
        double slow = r.againstPlainLoop(NO_FAST_PATH);
        double speedup = r.fastPathSpeedup();
        if (!Double.isNaN(fast)) {
            out.add("");
            out.add(String.format(Locale.ROOT, "The buffer manager gives %.2f× the plain loop's blocks per second with the fast path,"
                    + " %.2f× without it; the fast path makes the scan %.2f× as fast (%.1f ns per block saved).", fast, slow, speedup,
                    r.nsPerBlock(NO_FAST_PATH) - r.nsPerBlock(FAST_PATH)));
        }
        return out;
    }

    /** What the case says, in plain language. */
    static List<String> reading(Result r) {
        double fast = r.againstPlainLoop(FAST_PATH);
        if (Double.isNaN(fast)) {
            return List.of("Table in shared buffers: no run counted.");
        }
        return List.of(String.format(Locale.ROOT, "Table in shared buffers (%s, %,d blocks): the buffer manager %.1f ns per block with the"
                + " fast path, %.1f without, the plain loop %.1f: %.2f× the plain loop's blocks per second (%.2f× without the fast"
                + " path), and the fast path %.2f× as fast as without.", r.table(), r.blocks(), r.nsPerBlock(FAST_PATH),
                r.nsPerBlock(NO_FAST_PATH), r.nsPerBlock(PLAIN_LOOP), fast, r.againstPlainLoop(NO_FAST_PATH), r.fastPathSpeedup()));
    }
}
