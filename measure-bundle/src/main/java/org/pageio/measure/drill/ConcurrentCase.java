package org.pageio.measure.drill;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.measure.cache.CacheState;
import org.pageio.measure.fio.Fio;
import org.pageio.measure.fio.FioJob;
import org.pageio.measure.fio.FioResult;
import org.pageio.table.TableInfo;
import org.pageio.table.TableShape;

/**
 * Sessions scanning at once. {@link DrillOptions#SMALL_TABLE} is cut into N equal, disjoint slices
 * of its blocks ({@link #slices}: block {@code k × blocks / N} up to the next one's), and N sessions,
 * each on its own thread and its own {@code BufferSession}, {@code count(*)} one slice each
 * ({@link SliceScan}: the sequential scan's stream, {@code effective_io_concurrency = 16}), started
 * together (every thread has opened its session and waits at a latch; the clock starts when the
 * drill's thread opens it). Every N reads the same bytes, so the aggregate MB/s (the table's bytes ÷
 * the time from the start to the last session's end) compares across N; each session's own time
 * (start to its end) gives the fairness figure, slowest ÷ fastest. Every session's count is checked
 * against the generator.
 *
 * <p><b>Cache states</b>, per method (each on its rig, a pool of at least four times the table,
 * {@link DrillPools#hotSharedBuffers}): <em>hot</em>, the table in shared buffers (read in without
 * a ring first; a run counts only if {@code stat_io} says no block was read), each session scanning
 * its slice {@code passes} times so that one session's run lasts about
 * {@value #HOT_RUN_NANOS} ns; <em>OS-warm</em>, shared buffers emptied and the files in the
 * page cache (at least 99% resident); <em>cold</em>, shared buffers emptied and the files evicted
 * and proven 0% resident ({@link CaseCache}). The OS-warm runs scan the drill's table {@code t}
 * (1.9 GB at the default rows) instead of the small one: the small one is read from the page cache
 * in a few milliseconds, too short a run to measure, and a second pass cannot stand in, because N
 * sessions' bulk-read rings (each {@code io_combine_limit × (effective_io_concurrency + 1)}) hold
 * a slice of it whole.
 *
 * <p><b>Baselines</b> over the same slices: hot, the {@link PlainPages plain loop} on N threads
 * (what the machine's cores give the same work without a buffer manager); OS-warm and cold, N
 * threads of {@code FileChannel} (each its slice in {@code io_combine_limit} positional reads, one
 * at a time) and fio with {@code numjobs = N}, each job at depth 16 over its own region of the
 * heap file (the same total depth as the sessions'; each region a session's slice in whole reads of
 * 128 KiB, or of the slice when it is smaller, so fio reads up to 16 blocks a job fewer and its
 * MB/s is over its own bytes; buffered, and cold also O_DIRECT), when fio is installed and the heap
 * is one segment file.
 *
 * <p>At most {@value #MAX_ROUNDS} rounds; one unrecorded OS-warm run of every method that runs
 * OS-warm (not one that bypasses the page cache) and of {@code FileChannel} at the most sessions
 * first. Runs in the drill's thread; the sessions on
 * threads of their own, started and joined in each run.
 */
final class ConcurrentCase {

    /** Rounds of this case at most. */
    static final int MAX_ROUNDS = 2;
    static final String PLAIN_LOOP = HotCase.PLAIN_LOOP;
    static final String FILE_CHANNEL = Drill.FILE_CHANNEL;
    static final String FIO_BUFFERED = "fio buffered";
    static final String FIO_DIRECT = "fio direct";
    /** fio's read size: io_combine_limit's default. */
    static final int FIO_KIB = 128;

    /** Where the table is when the sessions start. */
    enum State {
        HOT("hot", "in shared buffers"), WARM("OS-warm", "in the page cache, shared buffers empty"),
        COLD("cold", "evicted and proven cold, shared buffers empty");

        final String label;
        final String description;

        State(String label, String description) {
            this.label = label;
            this.description = description;
        }
    }

    /** Blocks {@code [first, first + count)}. */
    record Slice(long first, long count) {
    }

    /** {@code blocks} cut into {@code n} disjoint slices that cover them once, sizes within one block of each other. */
    static List<Slice> slices(long blocks, int n) {
        List<Slice> out = new ArrayList<>(n);
        for (int k = 0; k < n; k++) {
            long a = k * blocks / n;
            long b = (k + 1) * blocks / n;
            out.add(new Slice(a, b - a));
        }
        return out;
    }

    /**
     * One run of N sessions (or baseline threads, or fio jobs).
     *
     * @param state        the cache state
     * @param sessions     N
     * @param runner       a method, {@link #PLAIN_LOOP}, {@link #FILE_CHANNEL}, {@link #FIO_BUFFERED} or {@link #FIO_DIRECT}
     * @param round        1-based
     * @param wallNanos    from the start to the last session's end (fio's own runtime for fio)
     * @param sessionNanos each session's time from the start, by slice (empty for fio)
     * @param bytes        bytes the run read or counted (passes × the table's for the sessions)
     * @param cpuNanos     the process's CPU time over the run (fio's own for fio), -1 if unknown
     * @param reads        {@code stat_io} reads (the blocks' reads, I/Os of fio or FileChannel for them)
     * @param hits         {@code stat_io} hits
     * @param streamIos    the sessions' streams' reads started
     * @param streamWaits  times the sessions waited for a read
     * @param fastPathReturns buffers the sessions' streams returned through the all-cached fast path
     * @param contextSwitches the process's context switches over the run (every thread), -1 if unknown and for fio
     * @param counted      whether the run counts
     * @param note         why not, when not
     */
    record Run(State state, int sessions, String runner, int round, long wallNanos, long[] sessionNanos, long bytes, long cpuNanos,
            long reads, long hits, long streamIos, long streamWaits, long fastPathReturns, long contextSwitches, boolean counted,
            String note) {

        Run {
            sessionNanos = sessionNanos.clone();
        }

        double mbPerSecond() {
            return wallNanos == 0 ? Double.NaN : bytes / 1e6 / (wallNanos / 1e9);
        }

        /** The slowest session's time ÷ the fastest's, NaN without them. */
        double fairness() {
            if (sessionNanos.length == 0) {
                return Double.NaN;
            }
            long min = Arrays.stream(sessionNanos).min().getAsLong();
            return min == 0 ? Double.NaN : (double) Arrays.stream(sessionNanos).max().getAsLong() / min;
        }
    }

    /**
     * The case's runs.
     *
     * @param table      the table's name
     * @param rows       its rows
     * @param blocks     its blocks
     * @param hotPasses  times each session scans its slice in a hot run
     * @param warmTable  the table the OS-warm runs scan
     * @param warmBlocks its blocks
     * @param sessions   the numbers of sessions, in run order
     * @param runners    per state, the runners in report order
     * @param fioNote    why fio did not run, or null
     * @param runs       in the order they ran
     */
    record Result(String table, long rows, long blocks, long hotPasses, String warmTable, long warmBlocks, List<Integer> sessions,
            Map<State, List<String>> runners,
            String fioNote, List<Run> runs) {

        Result {
            sessions = List.copyOf(sessions);
            runners = Map.copyOf(runners);
            runs = List.copyOf(runs);
        }

        long bytes() {
            return blocks * StorageManager.BLCKSZ;
        }

        /** The counted runs of {@code runner} with {@code n} sessions in {@code state}. */
        List<Run> of(State state, int n, String runner) {
            return runs.stream().filter(r -> r.counted() && r.state() == state && r.sessions() == n && r.runner().equals(runner))
                    .toList();
        }

        /** Median aggregate MB/s, or NaN. */
        double mbPerSecond(State state, int n, String runner) {
            return HotCase.median(of(state, n, runner).stream().mapToDouble(Run::mbPerSecond).sorted().toArray());
        }

        /** Median slowest ÷ fastest session, or NaN. */
        double fairness(State state, int n, String runner) {
            return HotCase.median(of(state, n, runner).stream().mapToDouble(Run::fairness).filter(x -> !Double.isNaN(x)).sorted()
                    .toArray());
        }

        /** The faster fio job's median MB/s, or NaN. */
        double fio(State state, int n) {
            double b = mbPerSecond(state, n, FIO_BUFFERED);
            double d = mbPerSecond(state, n, FIO_DIRECT);
            return Double.isNaN(b) ? d : Double.isNaN(d) ? b : Math.max(b, d);
        }

        /** The methods of {@code state} (its runners that are not baselines). */
        List<String> methods(State state) {
            return runners.get(state).stream().filter(x -> !isBaseline(x)).toList();
        }
    }

    static boolean isBaseline(String runner) {
        return runner.equals(PLAIN_LOOP) || runner.equals(FILE_CHANNEL) || runner.equals(FIO_BUFFERED) || runner.equals(FIO_DIRECT);
    }

    /** Each method's rig with a pool of a given size, kept by the drill for all its runs. */
    interface Rigs {
        DrillPools.Rig rig(String name, IoMethod m, int sharedBuffers) throws IOException;
    }

    /** What one session (or baseline thread) does: opens what it needs on its thread, then scans from the start. */
    private interface SessionWork {
        /** On session {@code k}'s thread before the start; closed after its run. */
        AutoCloseable open(int k) throws IOException;

        /** On session {@code k}'s thread, from the start. */
        void run(int k) throws IOException;
    }

    /** How long one session's hot run lasts, about: several scheduler slices, so that N threads on few CPUs all get their turns. */
    static final long HOT_RUN_NANOS = 300_000_000L;
    /** The untimed warm-up, and then the timed scans, before {@link #HOT_RUN_NANOS} is turned into passes. */
    static final long HOT_CALIBRATION_NANOS = 100_000_000L;

    private final DrillOptions opts;
    private final DrillProgress progress;
    private final RunProbe probe;
    private final Fio fio;

    ConcurrentCase(DrillOptions opts, DrillProgress progress, RunProbe probe, Fio fio) {
        this.opts = opts;
        this.progress = progress;
        this.probe = probe;
        this.fio = fio;
    }

    /** What the runs share: the table, its files and slices, and the runs' fixed parts. */
    private record Setup(TableInfo table, List<Path> files, TableInfo warmTable, List<Path> warmFiles, int sharedBuffers,
            int readSize, long passes, PlainPages plain, ByteBuffer warmBuffer) {

        /** The table the runs in {@code state} scan: the big one OS-warm, the small one hot and cold. */
        TableInfo table(State state) {
            return state == State.WARM ? warmTable : table;
        }

        List<Path> files(State state) {
            return state == State.WARM ? warmFiles : files;
        }
    }

    /**
     * Runs the case over table {@code t} hot and cold and {@code warmT} OS-warm (their files found
     * through {@code smgr}) on each method's rig with a pool of {@code sharedBuffers} blocks from
     * {@code rigs}.
     */
    Result run(StorageManager smgr, TableInfo t, TableInfo warmT, Map<String, IoMethod> methods, Rigs rigs, int sharedBuffers,
            int readSize) throws IOException {
        List<Path> files = DrillTables.heapFiles(smgr, t);
        List<Path> warmFiles = DrillTables.heapFiles(smgr, warmT);
        String fioNote = fio == null ? "fio did not run (" + (opts.fio() ? "not installed" : "--no-fio") + ")"
                : files.size() != 1 ? "fio did not run: " + t.name() + " spans " + files.size() + " segment files, and fio's jobs each"
                        + " read a region of one file"
                : warmFiles.size() != 1 ? "fio did not run OS-warm: " + warmT.name() + " spans " + warmFiles.size() + " segment files,"
                        + " and fio's jobs each read a region of one file" : null;
        Map<State, List<String>> runners = new java.util.EnumMap<>(State.class);
        for (State s : State.values()) {
            List<String> r = new ArrayList<>(methods.keySet());
            if (s == State.WARM) {
                // a method that bypasses the page cache reads from the device whatever the cache holds:
                // its OS-warm run would be a cold one, which the cold state measures
                r.removeIf(m -> methods.get(m).bypassesPageCache());
            }
            if (s == State.HOT) {
                r.add(PLAIN_LOOP);
            } else {
                r.add(FILE_CHANNEL);
                if (fio != null && (s == State.WARM ? warmFiles : files).size() == 1) {
                    r.add(FIO_BUFFERED);
                    if (s == State.COLD) {
                        r.add(FIO_DIRECT);
                    }
                }
            }
            runners.put(s, r);
        }
        int maxN = opts.sessions().stream().mapToInt(Integer::intValue).max().orElse(1);
        List<Run> runs = new ArrayList<>();
        long passes;
        try (PlainPages plain = new PlainPages(files, opts.segmentBlocks(), t.blocks())) {
            String first = methods.keySet().iterator().next();
            passes = hotPasses(t, first, rigs.rig(first, methods.get(first), sharedBuffers));
            progress.line(String.format(Locale.ROOT, "drill: concurrent: %s (%,d blocks); a hot run scans each slice %d time(s)",
                    t.name(), t.blocks(), passes));
            Setup setup = new Setup(t, files, warmT, warmFiles, sharedBuffers, readSize, passes, plain,
                    ByteBuffer.allocateDirect(readSize));
            List<String> warmUp = new ArrayList<>(runners.get(State.WARM));
            warmUp.removeIf(r -> r.equals(FIO_BUFFERED));
            for (String r : warmUp) {
                progress.status(String.format(Locale.ROOT, "drill: concurrent warm-up (not recorded)  %-12s %d sessions …", r, maxN));
                Run w = runOne(setup, State.WARM, maxN, r, 0, methods, rigs);
                progress.line(String.format(Locale.ROOT, "drill: concurrent warm-up (not recorded)  OS-warm  %2d sessions  %-16s %8.1f ms",
                        maxN, r, w.wallNanos() / 1e6));
            }
            int rounds = Math.min(opts.rounds(), MAX_ROUNDS);
            int total = 0;
            for (State s : State.values()) {
                total += runners.get(s).size() * opts.sessions().size() * rounds;
            }
            int done = 0;
            for (int round = 1; round <= rounds; round++) {
                for (State s : State.values()) {
                    List<String> r = runners.get(s);
                    for (int n : opts.sessions()) {
                        for (int i = 0; i < r.size(); i++) {
                            String name = r.get((i + round - 1) % r.size());
                            progress.status(String.format(Locale.ROOT, "drill: concurrent round %d/%d  %-7s %2d sessions  %-16s running…"
                                    + "  (run %d of %d)", round, rounds, s.label, n, name, ++done, total));
                            Run x = runOne(setup, s, n, name, round, methods, rigs);
                            runs.add(x);
                            progress.line(String.format(Locale.ROOT, "drill: concurrent round %d/%d  %-7s %2d sessions  %-16s %8.1f ms"
                                    + " %7.0f MB/s%s%s", round, rounds, s.label, n, name, x.wallNanos() / 1e6, x.mbPerSecond(),
                                    Double.isNaN(x.fairness()) ? "" : String.format(Locale.ROOT, "  slowest/fastest %.2f", x.fairness()),
                                    x.counted() ? "" : "  NOT COUNTED: " + x.note()));
                        }
                    }
                }
            }
        }
        return new Result(t.name(), t.rows(), t.blocks(), passes, warmT.name(), warmT.blocks(), opts.sessions(), runners, fioNote,
                runs);
    }

    /**
     * How many scans of the table one session makes in {@link #HOT_RUN_NANOS}, on {@code rig} (at
     * least 1): timed after {@link #HOT_CALIBRATION_NANOS} of untimed scans, so that the JIT has
     * compiled the scan and the estimate is of the code the runs will run.
     */
    private long hotPasses(TableInfo t, String method, DrillPools.Rig rig) throws IOException {
        SmgrRelation heap = heap(rig, t);
        rig.empty(method);
        SliceScan.prewarm(rig.pool, heap, t.blocks());
        ReadStream.Options options = options();
        SliceScan scan = new SliceScan();
        try (BufferSession s = rig.pool.openSession("client")) {
            for (long t0 = System.nanoTime(); System.nanoTime() - t0 < HOT_CALIBRATION_NANOS; ) {
                scan.count(s, heap, 0, t.blocks(), options); // warm-up
            }
            long passes = 0;
            long t0 = System.nanoTime();
            long elapsed;
            do {
                scan.count(s, heap, 0, t.blocks(), options);
                passes++;
            } while ((elapsed = System.nanoTime() - t0) < HOT_CALIBRATION_NANOS);
            return Math.max(1, (long) Math.ceil((double) HOT_RUN_NANOS * passes / elapsed));
        }
    }

    private static ReadStream.Options options() {
        return new ReadStream.Options(DrillOptions.DEFAULT_EIC_VALUE, ReadStream.Options.INHERIT, null);
    }

    private static SmgrRelation heap(DrillPools.Rig rig, TableInfo t) {
        return rig.smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, t.relNumber()));
    }

    /** The rows of blocks {@code [s.first, s.first + s.count)} of a freshly loaded table of {@code t}'s shape: full pages in row order. */
    static long rowsOf(TableInfo t, Slice s) {
        int rpp = t.shape().rowsPerPage();
        long from = Math.min(t.rows(), s.first() * rpp);
        long to = Math.min(t.rows(), (s.first() + s.count()) * rpp);
        return to - from;
    }

    private Run runOne(Setup u, State state, int n, String runner, int round, Map<String, IoMethod> methods,
            Rigs rigs) throws IOException {
        if (runner.equals(FIO_BUFFERED) || runner.equals(FIO_DIRECT)) {
            return runFio(u, state, n, runner, round);
        }
        TableInfo t = u.table(state);
        List<Slice> slices = slices(t.blocks(), n);
        long passes = state == State.HOT ? u.passes() : 1;
        long[] counts = new long[n];
        String note;
        DrillPools.Rig rig = null;
        SessionWork work;
        if (runner.equals(PLAIN_LOOP)) {
            note = null;
            work = new SessionWork() {
                @Override
                public AutoCloseable open(int k) {
                    return () -> { };
                }

                @Override
                public void run(int k) {
                    for (long p = 0; p < passes; p++) {
                        counts[k] += u.plain().count(slices.get(k).first(), slices.get(k).count());
                    }
                }
            };
        } else if (runner.equals(FILE_CHANNEL)) {
            note = cache(u, state);
            work = fileChannel(u, u.files(state), slices, counts);
        } else {
            rig = rigs.rig(runner, methods.get(runner), u.sharedBuffers());
            SmgrRelation heap = heap(rig, t);
            if (state == State.HOT) {
                SliceScan.prewarm(rig.pool, heap, t.blocks());
                rig.stats.reset();
                note = null;
            } else {
                rig.empty(runner);
                note = cache(u, state);
            }
            work = sessions(rig, heap, slices, passes, counts);
        }
        RunProbe.Snapshot before = probe.now();
        long[] nanos = together(n, work);
        RunProbe.Snapshot after = probe.now();
        boolean rowsCounted = !runner.equals(FILE_CHANNEL);
        for (int k = 0; k < n; k++) {
            long want = rowsCounted ? rowsOf(t, slices.get(k)) * passes : slices.get(k).count() * StorageManager.BLCKSZ;
            if (counts[k] != want) {
                throw new IllegalStateException(String.format(Locale.ROOT, "concurrent case, %s, %s, %d sessions: session %d (blocks"
                        + " %d..%d) counted %d %s, expected %d", runner, state.label, n, k, slices.get(k).first(),
                        slices.get(k).first() + slices.get(k).count() - 1, counts[k], rowsCounted ? "rows" : "bytes", want));
            }
        }
        long reads = 0;
        long hits = 0;
        long ios = 0;
        long waits = 0;
        long fast = 0;
        if (rig != null) {
            for (StatIo.Row row : rig.stats.rows()) {
                reads += row.value(StatIo.Column.READS);
                hits += row.value(StatIo.Column.HITS);
            }
            for (SliceScan s : lastScans) {
                ios += s.ios;
                waits += s.waits;
                fast += s.fastPathReturns;
            }
            if (state == State.HOT && reads != 0) {
                note = String.format(Locale.ROOT, "not hot: %,d reads", reads);
            }
        } else if (runner.equals(FILE_CHANNEL)) {
            reads = Arrays.stream(lastFileReads).sum();
        }
        long wall = Arrays.stream(nanos).max().orElse(0);
        long cpu = before.cpuNanos() < 0 || after.cpuNanos() < 0 ? -1 : after.cpuNanos() - before.cpuNanos();
        long switches = before.contextSwitches() < 0 || after.contextSwitches() < 0 ? -1
                : after.contextSwitches() - before.contextSwitches();
        return new Run(state, n, runner, round, wall, nanos, passes * t.blocks() * StorageManager.BLCKSZ, cpu, reads, hits, ios, waits,
                fast, switches, note == null, note);
    }

    /** The sessions' scans of the last method run (read by the drill's thread after the join). */
    private SliceScan[] lastScans = new SliceScan[0];
    /** The FileChannel threads' reads in the last run, by thread (read by the drill's thread after the join). */
    private long[] lastFileReads = new long[0];

    private SessionWork sessions(DrillPools.Rig rig, SmgrRelation heap, List<Slice> slices, long passes, long[] counts) {
        int n = slices.size();
        BufferSession[] ss = new BufferSession[n];
        SliceScan[] scans = new SliceScan[n];
        for (int k = 0; k < n; k++) {
            scans[k] = new SliceScan();
        }
        lastScans = scans;
        ReadStream.Options options = options();
        return new SessionWork() {
            @Override
            public AutoCloseable open(int k) {
                ss[k] = rig.pool.openSession("client");
                return ss[k];
            }

            @Override
            public void run(int k) throws IOException {
                for (long p = 0; p < passes; p++) {
                    counts[k] += scans[k].count(ss[k], heap, slices.get(k).first(), slices.get(k).count(), options);
                }
            }
        };
    }

    /** Each thread reads its slice with one positional read of up to {@code readSize} bytes at a time, counting bytes into {@code counts}. */
    private SessionWork fileChannel(Setup u, List<Path> files, List<Slice> slices, long[] counts) {
        int n = slices.size();
        long seg = opts.segmentBlocks();
        ByteBuffer[] bufs = new ByteBuffer[n];
        FileChannel[][] chs = new FileChannel[n][];
        long[] reads = new long[n];
        lastFileReads = reads;
        return new SessionWork() {
            @Override
            public AutoCloseable open(int k) throws IOException {
                bufs[k] = ByteBuffer.allocateDirect(u.readSize());
                Slice s = slices.get(k);
                chs[k] = new FileChannel[files.size()];
                for (long b = s.first(); b < s.first() + s.count(); b = (b / seg + 1) * seg) {
                    int f = (int) (b / seg);
                    chs[k][f] = FileChannel.open(files.get(f), StandardOpenOption.READ);
                }
                return () -> {
                    for (FileChannel c : chs[k]) {
                        if (c != null) {
                            c.close();
                        }
                    }
                };
            }

            @Override
            public void run(int k) throws IOException {
                Slice s = slices.get(k);
                ByteBuffer buf = bufs[k];
                long b = s.first();
                long end = s.first() + s.count();
                while (b < end) {
                    long segEnd = Math.min(end, (b / seg + 1) * seg);
                    int len = (int) Math.min(buf.capacity(), (segEnd - b) * StorageManager.BLCKSZ);
                    buf.clear().limit(len);
                    FileChannel ch = chs[k][(int) (b / seg)];
                    long pos = (b % seg) * StorageManager.BLCKSZ;
                    while (buf.hasRemaining()) {
                        if (ch.read(buf, pos + buf.position()) < 0) {
                            throw new IOException(files.get((int) (b / seg)) + " ends at " + (pos + buf.position()));
                        }
                    }
                    reads[k]++;
                    counts[k] += len;
                    b += len / StorageManager.BLCKSZ;
                }
            }
        };
    }

    /** Empties nothing; evicts (cold) or warms the files; null when the run may count, else why not. */
    private static String cache(Setup u, State state) throws IOException {
        CacheState c = CaseCache.prepare(state == State.COLD, u.files(state), u.warmBuffer());
        return CaseCache.verdict(state == State.COLD, c);
    }

    /** fio's read size with {@code n} jobs over {@code blocks}: {@value #FIO_KIB} KiB, or a job's whole slice when smaller. */
    static int fioReadSize(long blocks, int n) {
        return (int) Math.min(FIO_KIB * 1024L, blocks / n * StorageManager.BLCKSZ);
    }

    /**
     * Each fio job's region with {@code n} jobs over {@code blocks}: a session's slice (the smaller,
     * floor(blocks ÷ n) blocks) in whole reads of {@link #fioReadSize}, as fio reads only whole ones.
     */
    static long fioRegion(long blocks, int n) {
        long bs = fioReadSize(blocks, n);
        return blocks / n * StorageManager.BLCKSZ / bs * bs;
    }

    private Run runFio(Setup u, State state, int n, String runner, int round) throws IOException {
        String note = cache(u, state);
        long blocks = u.table(state).blocks();
        long region = fioRegion(blocks, n);
        FioJob job = FioJob.sequentialRead(u.files(state), fioReadSize(blocks, n), DrillOptions.DEFAULT_EIC_VALUE,
                runner.equals(FIO_DIRECT)).withSize(region).withJobs(n).withName(FioSeries.JOB_NAME);
        try {
            FioResult r = fio.run(job);
            return new Run(state, n, runner, round, r.runtimeNanos(), new long[0], r.ioBytes(), r.cpuNanos(), r.ios(), 0, 0, 0, 0,
                    -1, note == null, note);
        } catch (InterruptedIOException e) {
            throw e;
        } catch (IOException e) {
            return new Run(state, n, runner, round, 0, new long[0], 0, -1, 0, 0, 0, 0, 0, -1, false, runner + ": " + e.getMessage());
        }
    }

    /**
     * Runs {@code work} on {@code n} threads started together: each opens what it needs, then all
     * wait until every one has; the clock starts as the drill's thread lets them go. Returns each
     * one's time from the start to its end.
     *
     * @throws IOException or the unchecked exception the first failed thread threw
     */
    private static long[] together(int n, SessionWork work) throws IOException {
        CountDownLatch ready = new CountDownLatch(n);
        CountDownLatch go = new CountDownLatch(1);
        long[] end = new long[n];
        Throwable[] failed = new Throwable[n];
        Thread[] threads = new Thread[n];
        for (int k = 0; k < n; k++) {
            int id = k;
            threads[k] = Thread.ofPlatform().name("pageio-drill-session-" + k).start(() -> {
                AutoCloseable opened = null;
                try {
                    try {
                        opened = work.open(id);
                    } finally {
                        ready.countDown();
                    }
                    go.await();
                    work.run(id);
                    end[id] = System.nanoTime();
                } catch (Throwable e) {
                    failed[id] = e;
                } finally {
                    if (opened != null) {
                        try {
                            opened.close();
                        } catch (Exception e) {
                            if (failed[id] == null) {
                                failed[id] = e;
                            }
                        }
                    }
                }
            });
        }
        long t0;
        try {
            ready.await();
            t0 = System.nanoTime();
            go.countDown();
            for (Thread t : threads) {
                t.join();
            }
        } catch (InterruptedException e) {
            go.countDown();
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("drill interrupted");
        }
        long[] nanos = new long[n];
        for (int k = 0; k < n; k++) {
            Throwable f = failed[k];
            if (f instanceof IOException io) {
                throw io;
            } else if (f instanceof RuntimeException re) {
                throw re;
            } else if (f instanceof Error er) {
                throw er;
            } else if (f != null) {
                throw new IOException("session " + k + " failed: " + f, f);
            }
            nanos[k] = end[k] - t0;
        }
        return nanos;
    }

    private static String cell(double v, String fmt) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, fmt, v);
    }

    private static double medianOf(List<Run> runs, java.util.function.ToDoubleFunction<Run> f) {
        return HotCase.median(runs.stream().mapToDouble(f).sorted().toArray());
    }

    /** The case's tables (Markdown rows) and notes: the lines both the text and the Markdown show. */
    static List<String> table(Result r) {
        List<String> out = new ArrayList<>();
        int rounds = r.runs().stream().mapToInt(Run::round).max().orElse(0);
        int n1 = r.sessions().get(0);
        out.add(String.format(Locale.ROOT, "Sessions scanning at once: %s (%,d rows, %,d blocks, %s) cut into N equal, disjoint slices;"
                + " N sessions, each on its own thread and BufferSession, count(*) one slice each (the sequential scan's read stream,"
                + " effective_io_concurrency=%d), started together. Aggregate MB/s = the bytes ÷ the time to the last session's end;"
                + " a hot run scans each slice %d time(s). OS-warm runs scan %s (%,d blocks, %s) instead, so that one lasts long"
                + " enough to measure (a second pass would find its slices in the sessions' rings). Medians of %d round(s).",
                r.table(), r.rows(), r.blocks(), Drill.mb(r.bytes()), DrillOptions.DEFAULT_EIC_VALUE, r.hotPasses(), r.warmTable(),
                r.warmBlocks(), Drill.mb(r.warmBlocks() * StorageManager.BLCKSZ), rounds));
        out.add("");
        StringBuilder h = new StringBuilder("| cache | runner |");
        StringBuilder d = new StringBuilder("|---|---|");
        for (int n : r.sessions()) {
            h.append(' ').append(n).append(n == 1 ? " session" : " sessions").append(" |");
            d.append("---|");
        }
        out.add(h.toString());
        out.add(d.toString());
        for (State s : State.values()) {
            for (String runner : r.runners().get(s)) {
                StringBuilder row = new StringBuilder("| " + s.label + " | " + runner + " |");
                double base = r.mbPerSecond(s, n1, runner);
                for (int n : r.sessions()) {
                    double mbs = r.mbPerSecond(s, n, runner);
                    double fair = r.fairness(s, n, runner);
                    row.append(' ').append(Double.isNaN(mbs) ? "–" : String.format(Locale.ROOT, "%.0f%s%s", mbs,
                            n == n1 || Double.isNaN(base) ? "" : String.format(Locale.ROOT, " ×%.2f", mbs / base),
                            Double.isNaN(fair) ? "" : String.format(Locale.ROOT, " (%.2f)", fair))).append(" |");
                }
                out.add(row.toString());
            }
        }
        out.add("");
        out.add("Cells: aggregate MB/s, ×: against the same runner with " + n1 + (n1 == 1 ? " session" : " sessions")
                + ", (…): the slowest session's time ÷ the fastest's. Hot: the table in shared buffers (read in without a ring"
                + " first; a run counts only with no block read), on each method's rig (hits never reach the method); plain loop ="
                + " the same per-page count over a copy of the pages in one off-heap segment on N threads. OS-warm: shared buffers"
                + " empty, the files in the page cache. Cold: shared buffers empty, the files evicted and proven 0% resident."
                + " FileChannel = N threads, each its slice in " + FIO_KIB + " kB positional reads, one at a time; fio = numjobs=N,"
                + " each job sequential " + FIO_KIB + " KiB reads at iodepth=" + DrillOptions.DEFAULT_EIC_VALUE + " over its own"
                + " region of the heap file (the sessions' total depth; a session's slice in whole reads, its MB/s over its own bytes),"
                + " io_uring engine, buffered"
                + " and (cold) O_DIRECT" + (r.fioNote() == null ? "" : "; " + r.fioNote()) + ". Each method has its own pool of"
                + " at least 4× the table. The worker pool's hand-off counters are compiled out (PoolCounters.COUNT_HANDOFFS), so"
                + " the counters below are stat_io's and the streams'.");
        out.add("");
        out.add("| cache | sessions | runner | median ms | MB/s | × " + n1 + " | vs sync | vs fio | slowest ÷ fastest | CPU ms |"
                + " ctx sw per MB | stat_io reads | shared hit | stream reads | stream waits | fast-path returns | runs counted |");
        out.add("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        for (State s : State.values()) {
            for (int n : r.sessions()) {
                double sync = r.mbPerSecond(s, n, "sync");
                double fio = r.fio(s, n);
                for (String runner : r.runners().get(s)) {
                    List<Run> ok = r.of(s, n, runner);
                    long all = r.runs().stream().filter(x -> x.state() == s && x.sessions() == n && x.runner().equals(runner)).count();
                    if (ok.isEmpty()) {
                        out.add("| " + s.label + " | " + n + " | " + runner + " | – | – | – | – | – | – | – | – | – | – | – | – | – | 0/" + all
                                + " |");
                        continue;
                    }
                    double mbs = r.mbPerSecond(s, n, runner);
                    boolean fioRow = runner.equals(FIO_BUFFERED) || runner.equals(FIO_DIRECT);
                    boolean method = !isBaseline(runner);
                    double cpu = ok.stream().allMatch(x -> x.cpuNanos() >= 0) ? medianOf(ok, x -> x.cpuNanos() / 1e6) : Double.NaN;
                    double csw = ok.stream().allMatch(x -> x.contextSwitches() >= 0 && x.bytes() > 0)
                            ? medianOf(ok, x -> x.contextSwitches() / (x.bytes() / 1e6)) : Double.NaN;
                    out.add(String.format(Locale.ROOT, "| %s | %d | %s | %.1f | %.0f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d/%d |",
                            s.label, n, runner, medianOf(ok, x -> x.wallNanos() / 1e6), mbs,
                            cell(mbs / r.mbPerSecond(s, n1, runner), "%.2f×"),
                            runner.equals("sync") ? "–" : cell(mbs / sync, "%.2f×"), fioRow ? "–" : cell(mbs / fio, "%.2f×"),
                            cell(r.fairness(s, n, runner), "%.2f"), cell(cpu, "%.1f"), cell(csw, "%.1f"),
                            runner.equals(PLAIN_LOOP) ? "–" : cell(medianOf(ok, x -> x.reads()), "%.0f"),
                            method ? cell(medianOf(ok, x -> x.hits()), "%.0f") : "–",
                            method ? cell(medianOf(ok, x -> x.streamIos()), "%.0f") : "–",
                            method ? cell(medianOf(ok, x -> x.streamWaits()), "%.0f") : "–",
                            method ? cell(medianOf(ok, x -> x.fastPathReturns()), "%.0f") : "–", ok.size(), all));
                }
            }
        }
        out.add("");
        out.add("stat_io reads for FileChannel and fio: their system calls or I/Os. vs sync and vs fio: aggregate MB/s against sync's"
                + " and against the faster fio job's at the same N and cache state. CPU ms: the whole process's (fio's own for fio)."
                + " ctx sw per MB: the process's context switches (getrusage: threads blocking or preempted) per MB the run read or"
                + " counted; not counted for fio.");
        return out;
    }

    /** What the case says, in plain language, against its targets. */
    static List<String> reading(Result r) {
        List<String> out = new ArrayList<>();
        int n1 = r.sessions().get(0);
        int maxN = r.sessions().stream().mapToInt(Integer::intValue).max().orElse(n1);
        StringBuilder hot = new StringBuilder();
        for (String m : r.runners().get(State.HOT)) {
            double base = r.mbPerSecond(State.HOT, n1, m);
            StringBuilder b = new StringBuilder();
            for (int n : r.sessions()) {
                if (n != n1) {
                    b.append(b.isEmpty() ? "" : ", ").append(n).append(": ").append(cell(r.mbPerSecond(State.HOT, n, m) / base, "%.2f×"));
                }
            }
            if (!b.isEmpty()) {
                hot.append(hot.isEmpty() ? "" : "; ").append(m).append(' ').append(b);
            }
        }
        if (!hot.isEmpty()) {
            out.add("Concurrent sessions, hot, aggregate against " + n1 + (n1 == 1 ? " session" : " sessions") + " (sessions: ×): " + hot
                    + ".");
        }
        double sync = r.mbPerSecond(State.WARM, maxN, "sync");
        if (!Double.isNaN(sync)) {
            StringBuilder b = new StringBuilder();
            for (String m : r.methods(State.WARM)) {
                if (!m.equals("sync")) {
                    b.append(b.isEmpty() ? "" : ", ").append(m).append(' ').append(cell(r.mbPerSecond(State.WARM, maxN, m) / sync, "%.2f×"));
                }
            }
            out.add(String.format(Locale.ROOT, "Concurrent sessions, OS-warm, %d sessions: sync %.0f MB/s%s.", maxN, sync,
                    b.isEmpty() ? "" : "; against it " + b));
        }
        StringBuilder cold = new StringBuilder();
        for (int n : r.sessions()) {
            String best = null;
            double bestMbs = Double.NaN;
            for (String m : r.methods(State.COLD)) {
                double v = r.mbPerSecond(State.COLD, n, m);
                if (!Double.isNaN(v) && (best == null || v > bestMbs)) {
                    best = m;
                    bestMbs = v;
                }
            }
            double fio = r.fio(State.COLD, n);
            if (best != null) {
                cold.append(cold.isEmpty() ? "" : "; ").append(String.format(Locale.ROOT, "%d: %s %.0f MB/s%s", n, best, bestMbs,
                        Double.isNaN(fio) ? "" : String.format(Locale.ROOT, ", %.2f× fio's %.0f", bestMbs / fio, fio)));
            }
        }
        if (!cold.isEmpty()) {
            out.add("Concurrent sessions, cold, the fastest method per number of sessions against fio at the same total depth: " + cold
                    + ".");
        }
        return out;
    }
}
