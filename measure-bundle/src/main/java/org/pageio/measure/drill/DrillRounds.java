package org.pageio.measure.drill;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.posix.Fadvise;
import org.pageio.posix.Posix;
import org.pageio.posix.Residency;
import org.pageio.measure.cache.CacheState;
import org.pageio.measure.fio.Fio;
import org.pageio.measure.fio.FioJob;
import org.pageio.measure.fio.FioResult;
import org.pageio.pgdata.PgHeapScan;
import org.pageio.table.ScanReport;
import org.pageio.table.ScanRequest;
import org.pageio.table.ScanSettings;
import org.pageio.table.StreamFigures;
import org.pageio.table.TableShape;
import org.pageio.measure.drill.DrillCase.Scan;
import org.pageio.measure.drill.DrillCases.Target;

/**
 * Runs the cases: an unrecorded warm-up of every method and Java baseline, then for each round,
 * each case, each runner (method, method with a lever, baseline) in an order rotated by round,
 * one run with the files cold or warm as the case wants. Keeps one rig per runner for the whole
 * drill; {@link #close} closes them. Runs in the drill's thread; one use.
 */
final class DrillRounds implements AutoCloseable {

    private final DrillOptions opts;
    private final Map<String, IoMethod> methods;
    private final DrillPools pools;
    private final Fio fio;
    private final DrillProgress progress;
    private final RunProbe probe;
    private final JavaBaselines java;
    private String fioFailure;
    /** Per runner, for the whole run; closed at its end. */
    private final Map<String, DrillPools.Rig> rigs = new LinkedHashMap<>();
    /** Per runner over a PostgreSQL cluster ({@code --pgdata}), for the whole run; closed at its end. */
    private final Map<String, DrillPools.PgRig> pgRigs = new LinkedHashMap<>();
    /** fio's iolog of each random scan's reads, written at its first replay; deleted at the end. */
    private final Map<Target, Path> iologs = new LinkedHashMap<>();

    /**
     * @param methods  the methods to run, in report order
     * @param fio      fio, or null to run no fio baseline
     * @param probe    CPU and device counters around each timed run
     */
    DrillRounds(DrillOptions opts, Map<String, IoMethod> methods, DrillPools pools, Fio fio, RunProbe probe,
            DrillProgress progress) {
        this.opts = opts;
        this.methods = methods;
        this.pools = pools;
        this.fio = fio;
        this.probe = probe;
        this.progress = progress;
        this.java = new JavaBaselines(opts.segmentBlocks(), probe);
    }

    /** Why fio failed, the first time it did; null when it never failed. */
    String fioFailure() {
        return fioFailure;
    }

    /** Runs every round of {@code plan}; returns each case's series in the plan's order. */
    List<DrillResult.CaseResult> run(DrillCases plan) throws IOException {
        List<DrillCase> cases = plan.cases();
        if (cases.isEmpty()) {
            return List.of();
        }
        Map<DrillCase, Target> targets = plan.targets();
        Map<DrillCase, List<String>> runners = new LinkedHashMap<>();
        Map<DrillCase, Map<String, List<Sample>>> samples = new LinkedHashMap<>();
        int total = 0;
        for (DrillCase c : cases) {
            List<String> r = new ArrayList<>(methods.keySet());
            if (opts.seqHint() && c.cold() && c.scan() == Scan.SEQ) {
                methods.forEach((n, m) -> {
                    if (!m.bypassesPageCache()) {
                        r.add(n + Drill.SEQ_HINT_SUFFIX);
                    }
                });
            }
            r.add(Drill.FILE_CHANNEL);
            r.add(Drill.ASYNC_FILE_CHANNEL);
            if (fio != null && c.cold()) {
                if (c.scan() == Scan.SEQ) { // at every eic, depth = eic
                    r.add(FioSeries.SEQ_BUFFERED.series);
                    r.add(FioSeries.SEQ_DIRECT.series);
                } else { // the scan's own reads at its depth, and the device's ceiling
                    r.add(FioSeries.SAME_READS.series);
                    r.add(FioSeries.RAND_CEILING.series);
                }
            }
            runners.put(c, r);
            Map<String, List<Sample>> m = new LinkedHashMap<>();
            r.forEach(x -> m.put(x, new ArrayList<>()));
            samples.put(c, m);
            total += r.size() * opts.rounds();
        }
        JavaBaselines.Buffers buffers = new JavaBaselines.Buffers(
                pools.settings().effectiveIoCombineLimit() * StorageManager.BLCKSZ,
                Math.max(DrillOptions.DEFAULT_EIC_VALUE, cases.stream().mapToInt(DrillCase::eic).max().orElse(1))); // the warm-up runs at the default eic
        // Warm-up, not recorded: the first scan in a JVM pays for JIT compilation and thread start-up.
        DrillCase first = cases.get(0);
        DrillCase warmUp = new DrillCase("warm-up", "warm-up", first.scan(), false, DrillOptions.DEFAULT_EIC_VALUE, first.bytes());
        for (String r : runners.get(first)) {
            if (FioSeries.bySeries(r) != null) {
                continue;
            }
            progress.status(String.format(Locale.ROOT, "drill: warm-up (not recorded)  %-12s …", r));
            Sample s = runOne(r, warmUp, 0, targets.get(first), buffers);
            progress.line(String.format(Locale.ROOT, "drill: warm-up (not recorded)  %-24s %9.1f ms", r, s.executionMs()));
        }
        int done = 0;
        long runsStarted = System.nanoTime();
        for (int round = 1; round <= opts.rounds(); round++) {
            for (DrillCase c : cases) {
                List<String> r = runners.get(c);
                int shift = (round - 1) % r.size();
                for (int i = 0; i < r.size(); i++) {
                    String name = r.get((i + shift) % r.size());
                    progress.status(String.format(Locale.ROOT, "drill: round %d/%d  %-22s %-24s running…  (run %d of %d%s)",
                            round, opts.rounds(), c.shortName(), name, done + 1, total, eta(runsStarted, done, total)));
                    Sample s = runOne(name, c, round, targets.get(c), buffers);
                    samples.get(c).get(name).add(s);
                    done++;
                    progress.line(String.format(Locale.ROOT, "drill: round %d/%d  %-22s %-24s %9.1f ms%s  residency %s%s",
                            round, opts.rounds(), c.shortName(), name, s.executionMs(),
                            s.ioWaitNanos() >= 0 ? String.format(Locale.ROOT, "  I/O wait %8.1f ms", s.ioWaitNanos() / 1e6)
                                    : "                      ",
                            Drill.percent(s.residency()), s.counted() ? "" : "  NOT COUNTED: " + s.note()));
                }
            }
        }
        List<DrillResult.CaseResult> results = new ArrayList<>();
        for (DrillCase c : cases) {
            List<DrillResult.Series> series = new ArrayList<>();
            samples.get(c).forEach((name, list) -> series.add(new DrillResult.Series(name, Drill.isBaseline(name),
                    description(name, c, buffers.big), list)));
            results.add(new DrillResult.CaseResult(c, series));
        }
        return results;
    }

    private static String eta(long since, int done, int total) {
        if (done == 0) {
            return "";
        }
        long left = (System.nanoTime() - since) / done * (total - done);
        return String.format(Locale.ROOT, ", about %d s left", left / 1_000_000_000L);
    }

    private static String description(String name, DrillCase c, ByteBuffer big) {
        String unit = c.scan() == Scan.SEQ ? big.capacity() / 1024 + " kB positional read" : "8 kB read per heap fetch";
        if (name.endsWith(Drill.SEQ_HINT_SUFFIX)) {
            return "posix_fadvise(POSIX_FADV_SEQUENTIAL) on each of t's segment descriptors before the scan (not PostgreSQL's)";
        }
        if (name.equals(Drill.FILE_CHANNEL)) {
            return "one " + unit + " at a time";
        }
        if (name.equals(Drill.ASYNC_FILE_CHANNEL)) {
            return c.eic() + " reads in flight (" + unit + ")";
        }
        FioSeries j = FioSeries.bySeries(name);
        return j == null ? null : j.description(c.eic());
    }

    private Sample runOne(String runner, DrillCase c, int round, Target t, JavaBaselines.Buffers b) throws IOException {
        FioSeries job = FioSeries.bySeries(runner);
        if (job != null) {
            return runFio(job, c, round, t, b.big);
        }
        return switch (runner) {
            case Drill.FILE_CHANNEL -> java.runFileChannel(c, round, t, b.big);
            case Drill.ASYNC_FILE_CHANNEL -> java.runAsyncFileChannel(c, round, t, b);
            default -> runner.endsWith(Drill.SEQ_HINT_SUFFIX)
                    ? runMethod(c, round, methods.get(runner.substring(0, runner.length() - Drill.SEQ_HINT_SUFFIX.length())), runner,
                            t, b.big)
                    : runMethod(c, round, methods.get(runner), runner, t, b.big);
        };
    }

    private static ScanRequest request(DrillCase c, Target t) {
        ScanRequest r = switch (c.scan()) {
            case SEQ -> ScanRequest.count(t.table());
            case BITMAP -> ScanRequest.bitmap(t.table(), Drill.KEY_COLUMN, Drill.KEY_LO, Drill.KEY_HI);
            case INDEX -> ScanRequest.index(t.table(), Drill.KEY_COLUMN, Drill.KEY_LO, Drill.KEY_HI);
        };
        return r.with(new ScanSettings(c.eic(), -1, null, Boolean.TRUE));
    }

    /** The rig of runner {@code name} (a method, or a method with a lever: its own descriptors). */
    DrillPools.Rig rig(String name, IoMethod m) throws IOException {
        return rig(name, m, opts.sharedBuffers());
    }

    /**
     * The rig of runner {@code name} with a pool of {@code sharedBuffers} blocks: the drill's own
     * rig of that runner when its pool is that size, else one of its own, kept as long.
     */
    DrillPools.Rig rig(String name, IoMethod m, int sharedBuffers) throws IOException {
        String key = sharedBuffers == opts.sharedBuffers() ? name : name + " shared_buffers=" + sharedBuffers;
        DrillPools.Rig r = rigs.get(key);
        if (r == null) {
            r = pools.rig(m, sharedBuffers);
            rigs.put(key, r);
        }
        return r;
    }

    /**
     * One run of one method on its rig, shared buffers emptied first. Runner {@code <method>
     * +FADV_SEQUENTIAL} advises POSIX_FADV_SEQUENTIAL on each heap segment's descriptor of its own
     * storage manager first (Linux doubles that file's read-ahead window; the advice stays with the
     * descriptor, so it is given again each run, which costs nothing).
     */
    private Sample runMethod(DrillCase c, int round, IoMethod m, String runner, Target t, ByteBuffer warmBuffer) throws IOException {
        if (t.pgRelation() != null) {
            return runPg(c, round, m, runner, t, warmBuffer);
        }
        DrillPools.Rig rig = rig(runner, m);
        rig.empty(runner);
        if (runner.endsWith(Drill.SEQ_HINT_SUFFIX)) {
            SmgrRelation rel = rig.smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, t.relNumber()));
            for (int seg = 0; seg < t.heapFiles().size(); seg++) {
                long block = seg * opts.segmentBlocks();
                Posix.fadvise(rel.fd(block), 0, 0, Fadvise.POSIX_FADV_SEQUENTIAL, t.heapFiles().get(seg));
            }
        }
        StatIo stats = rig.stats;
        CacheState cache = CaseCache.prepare(c, t.coldFiles(), warmBuffer);
        Residency res = cache.total();
        String note = CaseCache.verdict(c, cache);
        RunProbe.Snapshot before = probe.now();
        ScanReport r = rig.tables.scan(request(c, t));
        RunProbe.Snapshot after = probe.now();
        if (r.count() != t.expected()) {
            throw new IllegalStateException("io_method=" + m.name() + ": " + c.scan().label() + " of " + t.table() + " returned "
                    + r.count() + " rows, expected " + t.expected());
        }
        if (c.scan() == Scan.INDEX && r.sumLength() != r.count() * TableShape.PREFETCH_TEST.textLength()) {
            throw new IllegalStateException("io_method=" + m.name() + ": sum(length(payload)) of " + t.table() + " returned "
                    + r.sumLength() + ", expected " + r.count() * TableShape.PREFETCH_TEST.textLength());
        }
        long reads = 0;
        long bytes = 0;
        for (StatIo.Row row : stats.rows()) {
            reads += row.value(StatIo.Column.READS);
            bytes += row.value(StatIo.Column.READ_BYTES);
        }
        StreamFigures stream = r.stream();
        return new Sample(round, r.executionNanos(), r.plan().ioReadNanos(), reads, bytes, r.sharedHit(), res.residentPages(),
                res.totalPages(), note == null, note).probed(before, after)
                .withStreamInProgress(stream.ioCount() == 0 ? -1 : stream.avgInProgress());
    }

    /**
     * One count(*) of a PostgreSQL heap ({@code --pgdata}) by method {@code m} on its rig over the
     * cluster, shared buffers emptied first: pgdata-bundle's {@link PgHeapScan} (PostgreSQL's tuple
     * visibility) through a read stream at the case's {@code effective_io_concurrency}; the count must
     * be the first one's. The time is the scan's wall time; no I/O wait is kept.
     */
    private Sample runPg(DrillCase c, int round, IoMethod m, String runner, Target t, ByteBuffer warmBuffer) throws IOException {
        DrillPools.PgRig rig = pgRigs.get(runner);
        if (rig == null) {
            rig = pools.pgRig(m, opts.pg().pgdata());
            pgRigs.put(runner, rig);
        }
        rig.empty(runner);
        CacheState cache = CaseCache.prepare(c, t.coldFiles(), warmBuffer);
        Residency res = cache.total();
        String note = CaseCache.verdict(c, cache);
        RunProbe.Snapshot before = probe.now();
        long start = System.nanoTime();
        PgHeapScan.Count n = PgHeapScan.count(rig.cluster, rig.bufmgr.pool(), t.pgRelation(),
                new ReadStream.Options(c.eic(), ReadStream.Options.INHERIT, null));
        long elapsed = System.nanoTime() - start;
        RunProbe.Snapshot after = probe.now();
        if (n.visible() != t.expected()) {
            throw new IllegalStateException("io_method=" + m.name() + ": count(*) of " + t.table() + " returned " + n.visible()
                    + " rows, expected " + t.expected() + " (the first count)");
        }
        long reads = 0;
        long bytes = 0;
        for (StatIo.Row row : rig.bufmgr.stats().rows()) {
            reads += row.value(StatIo.Column.READS);
            bytes += row.value(StatIo.Column.READ_BYTES);
        }
        return new Sample(round, elapsed, -1, reads, bytes, 0, res.residentPages(), res.totalPages(), note == null, note)
                .probed(before, after);
    }

    private Sample runFio(FioSeries job, DrillCase c, int round, Target t, ByteBuffer warmBuffer) throws IOException {
        CacheState cache = CaseCache.prepare(c, t.coldFiles(), warmBuffer);
        Residency res = cache.total();
        String note = CaseCache.verdict(c, cache);
        try {
            FioJob fioJob = job.job(c.eic(), t.heapFiles(), c.bytes(), job == FioSeries.SAME_READS ? iolog(t) : null);
            RunProbe.Snapshot before = probe.now();
            FioResult r = fio.run(fioJob);
            RunProbe.Snapshot after = probe.now();
            return new Sample(round, r.runtimeNanos(), -1, r.ios(), r.ioBytes(), 0, res.residentPages(), res.totalPages(), note == null,
                    note).probed(before, after, r.cpuNanos());
        } catch (InterruptedIOException e) {
            throw e;
        } catch (IOException e) {
            String why = job.series + ": " + e.getMessage();
            if (fioFailure == null) {
                fioFailure = why;
            }
            return new Sample(round, 0, -1, 0, 0, 0, res.residentPages(), res.totalPages(), false, why);
        }
    }

    /**
     * The iolog of {@code t}'s reads: its blocks where each first appears (a repeat is a shared hit),
     * in the scan's order, written to a temporary file at the first call.
     */
    private Path iolog(Target t) throws IOException {
        Path log = iologs.get(t);
        if (log == null) {
            log = Files.createTempFile("pageio-drill-", ".iolog");
            iologs.put(t, log);
            FioJob.writeIolog(log, t.heapFiles(), opts.segmentBlocks(), FioSeries.SAME_READS.kib * 1024,
                    DrillTables.firstOccurrences(t.blocks()));
        }
        return log;
    }

    @Override
    public void close() {
        for (DrillPools.Rig r : rigs.values()) {
            r.close();
        }
        rigs.clear();
        for (DrillPools.PgRig r : pgRigs.values()) {
            r.close();
        }
        pgRigs.clear();
        for (Path log : iologs.values()) {
            try {
                Files.deleteIfExists(log);
            } catch (IOException e) {
                // a temporary file left behind
            }
        }
        iologs.clear();
    }
}
