package org.pageio.measure.drill;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.report.Json;
import org.pageio.report.TextTable;
import org.pageio.settings.DataDirectory;
import org.pageio.measure.drill.DrillCase.Scan;
import org.pageio.measure.drill.DrillResult.CaseResult;
import org.pageio.measure.drill.DrillResult.Series;
import org.pageio.measure.drill.DrillResult.Stats;
import org.pageio.measure.drill.DrillResult.TableFigures;

/**
 * The drill's result as tables (text, Markdown), JSON, an SVG bar chart, and
 * a plain-language reading. Ratios are speed ratios: the reference's median time divided by the
 * series' median time, so above 1 means faster than the reference.
 */
public final class DrillReport {

    static final String[] HEADER = {"method", "execution ms", "I/O wait ms", "min–max ms", "MB/s", "bytes/read", "shared hit",
            "speed vs sync", "vs best Java", "vs fio", "CPU ms", "CPU µs/block", "ctx sw/block", "dev kB/read", "dev depth",
            "runs counted"};


    private final DrillResult r;

    public DrillReport(DrillResult result) {
        this.r = result;
    }

    private static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.1f", nanos / 1e6);
    }

    /** How many times faster {@code s} is than {@code ref}, or NaN. */
    static double speed(Series s, Series ref) {
        if (s == null || ref == null || s.stats() == null || ref.stats() == null || s.stats().medianNanos() == 0) {
            return Double.NaN;
        }
        return (double) ref.stats().medianNanos() / s.stats().medianNanos();
    }

    private static String x(double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%.2f×", v);
    }

    /** The rows of one case, as cells. */
    private List<Object[]> rows(CaseResult c) {
        Series sync = c.series("sync");
        Series java = c.fastestBaseline();
        Series fio = c.fioYardstick();
        long bytes = c.drillCase().bytes();
        long blocks = Math.max(1, bytes / StorageManager.BLCKSZ);
        List<Object[]> out = new ArrayList<>();
        for (Series s : c.series()) {
            Stats st = s.stats();
            String name = s.baseline() ? s.name() + " (baseline)" : s.name();
            if (st == null) {
                out.add(new Object[] {name, "–", "–", "–", "–", "–", "–", "–", "–", "–", "–", "–", "–", "–", "–", "0/" + s.samples().size()});
                continue;
            }
            long cpu = CpuFigures.median(s); // -1 below the clock's resolution
            out.add(new Object[] {name, ms(st.medianNanos()), st.medianWaitNanos() < 0 ? "–" : ms(st.medianWaitNanos()),
                    ms(st.minNanos()) + "–" + ms(st.maxNanos()), String.format(Locale.ROOT, "%.0f", st.mbPerSecond(bytes)),
                    String.format(Locale.ROOT, "%.0f", st.bytesPerRead()), s.baseline() ? "–" : String.valueOf(st.medianHits()),
                    s.baseline() ? "–" : x(speed(s, sync)), s == java || java == null ? "–" : x(speed(s, java)),
                    s == fio || fio == null ? "–" : x(speed(s, fio)), cpu < 0 ? "–" : ms(cpu),
                    cpu < 0 ? "–" : String.format(Locale.ROOT, "%.1f", cpu / 1e3 / blocks),
                    st.medianContextSwitches() < 0 ? "–" : String.format(Locale.ROOT, "%.2f", (double) st.medianContextSwitches() / blocks),
                    st.devBytesPerRead() < 0 ? "–" : String.format(Locale.ROOT, "%.0f", st.devBytesPerRead() / 1024),
                    st.devDepth() < 0 ? "–" : String.format(Locale.ROOT, "%.1f", st.devDepth()), st.counted() + "/" + st.runs()});
        }
        return out;
    }

    private String heading() {
        StringBuilder t = new StringBuilder();
        for (TableFigures f : r.tables()) {
            t.append(t.isEmpty() ? "" : ", ").append(String.format(Locale.ROOT, "%s %,d rows (%,d blocks, %s%s)", f.name(), f.rows(),
                    f.blocks(), Drill.mb(f.bytes()), f.indexBlocks() > 0 ? String.format(Locale.ROOT, "; index on val %,d blocks",
                            f.indexBlocks()) : ""));
        }
        return String.format(Locale.ROOT, "pageio drill, %s: %s; shared_buffers=%dMB; io_combine_limit=%dkB; %d round(s),"
                        + " interleaved; medians over the runs that counted",
                DateTimeFormatter.ISO_INSTANT.format(r.started().truncatedTo(java.time.temporal.ChronoUnit.SECONDS)), t,
                r.sharedBuffers() / 128, r.readSize() / 1024, r.options().rounds());
    }

    /** The aligned text for the terminal. */
    /** A case with a table of its own (not one of the per-case tables): its Markdown title and its lines. */
    private record Section(String title, List<String> lines) {
    }

    /** The visibility, hot and concurrent cases' sections, those that ran, in the order the text and Markdown show them. */
    private List<Section> sections() {
        List<Section> out = new ArrayList<>();
        if (r.visibility() != null) {
            out.add(new Section("Visibility map, VACUUM and index-only scans", VisibilityCase.table(r.visibility(), r.methods())));
        }
        if (r.hot() != null) {
            out.add(new Section("A table in shared buffers against a plain loop", HotCase.table(r.hot())));
        }
        if (r.concurrent() != null) {
            out.add(new Section("Sessions scanning at once", ConcurrentCase.table(r.concurrent())));
        }
        return out;
    }

    public String text() {
        StringBuilder b = new StringBuilder(heading()).append("\n");
        for (CaseResult c : r.cases()) {
            b.append('\n').append(c.drillCase().title()).append('\n');
            TextTable t = new TextTable(HEADER).alignRight(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
            for (Object[] row : rows(c)) {
                t.row(row);
            }
            b.append(t.toString().stripTrailing()).append('\n');
        }
        for (Section section : sections()) {
            b.append('\n');
            for (String line : section.lines()) {
                b.append(line).append('\n');
            }
        }
        b.append('\n').append(notes()).append('\n');
        b.append('\n').append("What it says:\n");
        for (String s : reading()) {
            b.append("  • ").append(s).append('\n');
        }
        return b.toString().stripTrailing();
    }

    private String notes() {
        StringBuilder b = new StringBuilder();
        b.append("Cold: before each cold run the case's files (heap, and index for the index-driven scans) were fdatasync'ed and"
                + " evicted with posix_fadvise(DONTNEED); a run counts only if mincore found 0% of them resident. OS-warm: the files"
                + " stay in the page cache. Every run of a method starts with empty shared buffers (one pool per method, emptied"
                + " between runs like pg_buffercache_evict_all).\n");
        b.append("I/O wait = time the scan waited for reads (EXPLAIN's I/O Timings). bytes/read = stat_io read_bytes / reads."
                + " shared hit = buffers found in shared buffers (an index scan's repeated blocks). MB/s = bytes the case needs"
                + " (whole heap, or its distinct heap blocks) / median time. speed vs X = X's median / this median (above 1 ="
                + " faster than X); best Java = the faster of FileChannel and AsynchronousFileChannel. CPU ms = CPU time of the"
                + " process during the run, every thread, user + system (the JVM's for methods and Java baselines: issuer, I/O"
                + " workers, io-wq workers, JIT compiler, GC, kernel copies; fio's own for fio), from a clock of "
                + CpuFigures.duration(RunProbe.cpuResolutionNanos()) + " resolution"
                + (RunProbe.cpuResolutionNanos() > 1 ? " (/proc/self/stat)" : " (clock_gettime)") + "; shown only when at least "
                + CpuFigures.MIN_RESOLUTIONS + "× its clock's resolution. dev kB/read and dev depth = what the data directory's"
                + " block device did meanwhile (/sys/dev/block/…/stat): the size of the reads it completed (kernel read-ahead"
                + " grows them) and how many were in flight on average; other processes' reads of that device are included.\n");
        b.append("Baselines on the same files and blocks: FileChannel = one positional read at a time (").append(r.readSize() / 1024)
                .append(" kB for a sequential scan, 8 kB per heap fetch otherwise, in the scan's order); AsynchronousFileChannel ="
                        + " the same reads with effective_io_concurrency of them in flight; fio = sequential 128 KiB at depth ="
                        + " effective_io_concurrency (buffered and O_DIRECT) over the scanned table's segment files, in every cold count(*) case; for the bitmap and"
                        + " index scans, fio same reads = the scan's 8 KiB reads replayed from an iolog (each distinct block once, in the"
                        + " scan's order) at depth = effective_io_concurrency, O_DIRECT, and fio rand depth 64 = random 8 KiB reads of as"
                        + " many bytes at depth 64, O_DIRECT (the device's ceiling). vs fio = against fio same reads for a random scan,"
                        + " against the faster sequential fio job for count(*). CPU µs/block = CPU ms per 8 kB block the case reads."
                        + " ctx sw/block = the process's context switches per block (getrusage: its threads blocking or"
                        + " preempted; a hand-off to another thread costs two); fio's are not counted. ")
                .append(r.fio()).append('.');
        String hidden = hiddenCpu();
        if (hidden != null) {
            b.append('\n').append(hidden);
        }
        for (Map.Entry<String, String> e : r.unavailable().entrySet()) {
            b.append("\nio_method=").append(e.getKey()).append(" is not available here: ").append(e.getValue());
        }
        return b.toString();
    }

    /** "CPU: below the timer's … resolution, not shown (–)" naming the series it hides, or null when every figure shows. */
    private String hiddenCpu() {
        Map<Long, List<String>> byResolution = new LinkedHashMap<>();
        for (CaseResult c : r.cases()) {
            for (Series s : c.series()) {
                if (s.stats() != null && s.stats().medianCpuNanos() >= 0 && CpuFigures.median(s) < 0) {
                    List<String> names = byResolution.computeIfAbsent(CpuFigures.resolutionNanos(s), k -> new ArrayList<>());
                    if (!names.contains(s.name())) {
                        names.add(s.name());
                    }
                }
            }
        }
        StringBuilder b = new StringBuilder();
        byResolution.forEach((res, names) -> b.append(b.isEmpty() ? "" : "\n").append(CpuFigures.belowResolution(res))
                .append(": ").append(String.join(", ", names)).append('.'));
        return b.isEmpty() ? null : b.toString();
    }

    /**
     * The fastest method against the best Java baseline and fio in one cold count(*) case: CPU per
     * 128 kB of table, and the device's request size and depth; null without the figures.
     */
    private String whereTheTimeGoes(CaseResult c) {
        Series m = c.fastestMethod();
        if (m == null || CpuFigures.median(m) < 0) {
            return null;
        }
        long chunks = Math.max(1, c.drillCase().bytes() / r.readSize());
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "Where the time goes, cold count(*) at effective_io_concurrency=%d"
                + " (per %d kB of table: CPU µs; the device's reads):", c.drillCase().eic(), r.readSize() / 1024));
        String sep = " ";
        for (Series s : new Series[] {m, c.series(Drill.ASYNC_FILE_CHANNEL), c.series(Drill.FILE_CHANNEL), c.series("fio seq buffered")}) {
            long cpu = CpuFigures.median(s);
            if (cpu < 0) {
                continue;
            }
            Stats st = s.stats();
            b.append(sep).append(String.format(Locale.ROOT, "%s %.0f µs CPU (%s)", s.name(), cpu / 1e3 / chunks,
                    CpuFigures.share(cpu, st.medianNanos(), CpuFigures.resolutionNanos(s))));
            if (st.devBytesPerRead() >= 0) {
                b.append(String.format(Locale.ROOT, ", device reads of %.0f kB at depth %.1f", st.devBytesPerRead() / 1024, st.devDepth()));
            }
            sep = "; ";
        }
        return b.append('.').toString();
    }

    /** What posix_fadvise(SEQUENTIAL) did for each buffered method ({@code --seq-hint}), per cold count(*) case; null when not run. */
    private static String seqHintEffect(List<CaseResult> seq) {
        StringBuilder b = new StringBuilder();
        for (CaseResult c : seq) {
            for (Series v : c.series()) {
                if (!v.variant()) {
                    continue;
                }
                Series m = c.series(v.name().substring(0, v.name().length() - Drill.SEQ_HINT_SUFFIX.length()));
                double sp = speed(v, m);
                if (Double.isNaN(sp)) {
                    continue;
                }
                b.append(b.isEmpty() ? "" : "; ").append(String.format(Locale.ROOT, "eic=%d %s %.2f×", c.drillCase().eic(), m.name(), sp));
                if (v.stats().devBytesPerRead() >= 0 && m.stats().devBytesPerRead() >= 0) {
                    b.append(String.format(Locale.ROOT, " (device reads %.0f kB at depth %.1f, without %.0f kB at depth %.1f)",
                            v.stats().devBytesPerRead() / 1024, v.stats().devDepth(), m.stats().devBytesPerRead() / 1024,
                            m.stats().devDepth()));
                }
            }
        }
        return b.isEmpty() ? null : "posix_fadvise(SEQUENTIAL) on t's segments (a pageio lever, not PostgreSQL's), speed against the"
                + " same method without it: " + b + ".";
    }

    private List<CaseResult> cases(Scan scan, boolean cold) {
        return r.cases().stream().filter(c -> c.drillCase().scan() == scan && c.drillCase().cold() == cold).toList();
    }

    /** A short plain-language reading of the result. */
    public List<String> reading() {
        List<String> out = new ArrayList<>();
        List<CaseResult> seq = cases(Scan.SEQ, true);
        CaseResult main = null;
        for (CaseResult c : seq) {
            if (main == null || c.drillCase().eic() == DrillOptions.DEFAULT_EIC_VALUE) {
                main = c;
            }
        }
        List<CaseResult> warmCases = cases(Scan.SEQ, false);
        CaseResult warm = warmCases.isEmpty() ? null : warmCases.get(0);
        int refused = 0;
        for (CaseResult c : r.cases()) {
            if (c.drillCase().cold()) {
                for (Series s : c.series()) {
                    refused += (int) s.samples().stream().filter(x -> !x.counted() && x.note() != null && x.note().startsWith("not cold"))
                            .count();
                }
            }
        }
        if (refused > 0) {
            out.add(refused + " cold run(s) were not counted: pages of the files stayed in the page cache after eviction"
                    + " (something has the files mapped or is reading them). See the NOT COUNTED lines.");
        }
        if (main != null) {
            out.add("Cold count(*), effective_io_concurrency=" + main.drillCase().eic() + ": " + compare(main) + ".");
            // the best method over every cold sequential case, against fio's best sequential job
            Series best = null;
            CaseResult bestCase = null;
            for (CaseResult c : seq) {
                Series m = c.fastestMethod();
                if (m != null && (best == null || m.stats().medianNanos() < best.stats().medianNanos())) {
                    best = m;
                    bestCase = c;
                }
            }
            if (best != null) {
                long bytes = bestCase.drillCase().bytes();
                double mbs = best.stats().mbPerSecond(bytes);
                StringBuilder s = new StringBuilder(String.format(Locale.ROOT, "Fastest cold sequential scan: %s at"
                        + " effective_io_concurrency=%d, %.0f MB/s", best.name(), bestCase.drillCase().eic(), mbs));
                // fio's best sequential run over every eic (depth = eic); every cold count(*) reads the same bytes
                Series fio = null;
                CaseResult fioCase = null;
                StringBuilder perEic = new StringBuilder();
                for (CaseResult c : seq) {
                    Series f = c.fastestFio();
                    if (f == null) {
                        continue;
                    }
                    if (fio == null || f.stats().medianNanos() < fio.stats().medianNanos()) {
                        fio = f;
                        fioCase = c;
                    }
                    Series m = c.fastestMethod();
                    if (m != null) {
                        perEic.append(perEic.isEmpty() ? "" : "; ").append(String.format(Locale.ROOT, "eic=%d: %s %.0f%% of %s",
                                c.drillCase().eic(), m.name(), 100 * speed(m, f), f.name()));
                    }
                }
                if (fio != null) {
                    double f = fio.stats().mbPerSecond(bytes);
                    s.append(String.format(Locale.ROOT, "; fio's best sequential (%s at depth %d) %.0f MB/s, so %s reaches %.0f%% of fio's"
                            + " best sequential read on this disk", fio.name(), fioCase.drillCase().eic() < 1 ? 1 : fioCase.drillCase().eic(),
                            f, best.name(), 100 * mbs / f));
                } else {
                    s.append("; no fio figure in this run");
                }
                out.add(s.append('.').toString());
                String hint = seqHintEffect(seq);
                if (hint != null) {
                    out.add(hint);
                }
                String where = whereTheTimeGoes(main);
                if (where != null) {
                    out.add(where);
                }
                if (seq.size() > 1 && !perEic.isEmpty()) {
                    out.add("Against fio at the same depth (iodepth = effective_io_concurrency), the fastest method per case: " + perEic
                            + ".");
                }
                if (mbs > 1000) {
                    out.add(String.format(Locale.ROOT, "Cold reads ran at %.0f MB/s: faster than most real disks, so a cache below this"
                            + " machine (a virtual disk's host) probably served them. Cloud block storage will look different.", mbs));
                }
            }
        }
        for (CaseResult c : r.cases()) {
            if (c.drillCase().scan() == Scan.SEQ) {
                continue;
            }
            Series best = c.fastestMethod();
            Series sync = c.series("sync");
            String what = (c.drillCase().scan() == Scan.BITMAP ? "Bitmap heap scan" : "Index scan") + ", cold, effective_io_concurrency="
                    + c.drillCase().eic();
            if (best == null) {
                out.add(what + ": no run counted.");
                continue;
            }
            StringBuilder s = new StringBuilder(what + ": " + compare(c));
            if (sync != null && best != sync && sync.stats() != null) {
                double v = speed(best, sync);
                s.append(String.format(Locale.ROOT, "; the fastest, %s, is %.2f× as fast as sync", best.name(), v));
            }
            String yard = againstFio(c, best);
            if (yard != null) {
                s.append("; ").append(yard);
            }
            if (c.drillCase().scan() == Scan.INDEX && best.stats().medianHits() > 0) {
                s.append(String.format(Locale.ROOT, "; of its %,d heap fetches, %,d found their block in shared buffers (shared hit)"
                        + " instead of reading it again", fetchesOf(c), best.stats().medianHits()));
            }
            out.add(s.append('.').toString());
        }
        // does the best method beat both Java baselines on every cold case?
        List<String> lost = new ArrayList<>();
        int coldCases = 0;
        for (CaseResult c : r.cases()) {
            if (!c.drillCase().cold()) {
                continue;
            }
            coldCases++;
            Series best = c.fastestMethod();
            Series java = c.fastestBaseline();
            if (best != null && java != null && best.stats().medianNanos() >= java.stats().medianNanos()) {
                lost.add(String.format(Locale.ROOT, "%s (%s %s ms, %s %s ms)", c.drillCase().id(), best.name(),
                        ms(best.stats().medianNanos()), java.name(), ms(java.stats().medianNanos())));
            }
        }
        if (coldCases > 0) {
            out.add(lost.isEmpty() ? "On every cold case the fastest method beat both FileChannel and AsynchronousFileChannel."
                    : "The fastest method did not beat the best Java baseline on: " + String.join("; ", lost)
                            + ". The Java baselines do no page checks and no buffer management, so this is what the buffer manager costs"
                            + " there.");
        }
        if (warm != null) {
            String w = "OS page cache warm (shared buffers empty): " + compare(warm);
            Series sync = warm.series("sync");
            if (sync != null && sync.stats() != null && sync.stats().medianWaitNanos() > 0) {
                StringBuilder waits = new StringBuilder();
                for (Series s : warm.series()) {
                    if (!s.baseline() && s.stats() != null) {
                        waits.append(waits.isEmpty() ? "" : ", ").append(s.name()).append(' ').append(ms(s.stats().medianWaitNanos()))
                                .append(" ms");
                    }
                }
                w += "; I/O wait: " + waits;
            }
            out.add(w + ".");
        }
        if (seq.size() > 1) {
            for (String m : r.methods()) {
                StringBuilder b = new StringBuilder();
                for (CaseResult c : seq) {
                    Series s = c.series(m);
                    b.append(b.isEmpty() ? "" : ", ").append("eic ").append(c.drillCase().eic()).append(": ")
                            .append(s == null || s.stats() == null ? "–" : ms(s.stats().medianNanos()) + " ms");
                }
                out.add("effective_io_concurrency, cold count(*), " + m + ": " + b + ".");
            }
        }
        if (main != null) {
            Series any = main.series(r.methods().get(0));
            if (any != null && any.stats() != null) {
                double kb = any.stats().bytesPerRead() / 1024;
                out.add(String.format(Locale.ROOT, "count(*) reads averaged %.0f kB (io_combine_limit is %d kB): %s", kb,
                        r.readSize() / 1024, kb >= 0.9 * r.readSize() / 1024 ? "adjacent blocks were combined into full-size reads."
                                : "fewer blocks were combined than the limit allows."));
            }
        }
        if (r.hot() != null) {
            out.addAll(HotCase.reading(r.hot()));
        }
        if (r.concurrent() != null) {
            out.addAll(ConcurrentCase.reading(r.concurrent()));
        }
        String choice = choice();
        if (choice != null) {
            out.add(choice);
        }
        if (r.options().rounds() < 3) {
            out.add("Only " + r.options().rounds() + " round(s): treat every difference as noise; the default is " + DrillOptions.DEFAULT_ROUNDS + ".");
        }
        return out;
    }

    /**
     * What a user should choose for this storage: the method that was fastest on the most cold cases
     * (ties to the lower total of medians), the cases it won, and how far behind the runner-up was.
     * Null when no cold case has a counted method run.
     */
    String choice() {
        Map<String, Integer> wins = new LinkedHashMap<>();
        Map<String, Long> total = new LinkedHashMap<>();
        List<String> won = new ArrayList<>();
        for (CaseResult c : r.cases()) {
            if (!c.drillCase().cold()) {
                continue;
            }
            Series best = c.fastestMethod();
            if (best == null) {
                continue;
            }
            wins.merge(best.name(), 1, Integer::sum);
            for (Series s : c.series()) {
                if (!s.baseline() && s.stats() != null) {
                    total.merge(s.name(), s.stats().medianNanos(), Long::sum);
                }
            }
            won.add(c.drillCase().id());
        }
        if (wins.isEmpty()) {
            return null;
        }
        String pick = null;
        for (String m : wins.keySet()) {
            if (pick == null || wins.get(m) > wins.get(pick) || (wins.get(m).equals(wins.get(pick))
                    && total.getOrDefault(m, Long.MAX_VALUE) < total.getOrDefault(pick, Long.MAX_VALUE))) {
                pick = m;
            }
        }
        int cold = won.size();
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "For this storage, choose io_method=%s: it was the fastest"
                + " method on %d of the %d cold cases", pick, wins.get(pick), cold));
        if (wins.size() > 1) {
            List<String> others = new ArrayList<>();
            for (Map.Entry<String, Integer> e : wins.entrySet()) {
                if (!e.getKey().equals(pick)) {
                    others.add(e.getKey() + " on " + e.getValue());
                }
            }
            b.append(" (").append(String.join(", ", others)).append(")");
        }
        if (pick.equals("sync")) {
            b.append("; asynchronous I/O did not pay off here, which happens when the device answers faster than a hand-off costs");
        } else if (pick.equals("worker")) {
            b.append("; it needs no io_uring and no aligned buffers, and its workers overlap the reads");
        } else if (pick.equals("io_uring") || pick.equals("direct")) {
            b.append("; it keeps many reads in flight with few system calls");
            if (pick.equals("direct")) {
                b.append(" and skips the page cache's copy, so data the OS would have cached must come from shared buffers");
            }
        }
        return b.append('.').toString();
    }

    /**
     * A random scan's fastest method against fio replaying the same reads at the same depth and
     * against the depth-64 ceiling: speed, device depth and CPU per block; null without fio.
     */
    private static String againstFio(CaseResult c, Series best) {
        Series same = c.fioYardstick();
        Series ceiling = c.fioCeiling();
        if (same == null && ceiling == null) {
            return null;
        }
        long blocks = Math.max(1, c.drillCase().bytes() / StorageManager.BLCKSZ);
        StringBuilder b = new StringBuilder();
        if (same != null) {
            b.append(String.format(Locale.ROOT, "fio replaying the same reads at depth %d took %s ms, so %s reaches %.2f× fio",
                    Math.max(1, c.drillCase().eic()), ms(same.stats().medianNanos()), best.name(), speed(best, same)));
            Stats m = best.stats();
            Stats f = same.stats();
            if (m.devDepth() >= 0 && f.devDepth() >= 0) {
                b.append(String.format(Locale.ROOT, " (device depth %.1f against fio's %.1f", m.devDepth(), f.devDepth()));
                if (m.medianInProgress() >= 0 && m.devMicrosPerRead() >= 0 && f.devMicrosPerRead() >= 0) {
                    // Little's law: a read the device finished before the scan reached it leaves the device's queue
                    int maxIos = Math.max(1, c.drillCase().eic());
                    b.append(String.format(Locale.ROOT, ", while %s kept %.1f of its %d read%s started and the device took %.0f µs"
                            + " per read, fio's %.0f µs", best.name(), m.medianInProgress(), maxIos, maxIos == 1 ? "" : "s",
                            m.devMicrosPerRead(), f.devMicrosPerRead()));
                }
                long mc = CpuFigures.median(best);
                long fc = CpuFigures.median(same);
                b.append(mc >= 0 && fc >= 0 ? String.format(Locale.ROOT,
                        "; CPU %.1f µs per block against fio's %.1f)", mc / 1e3 / blocks, fc / 1e3 / blocks)
                        : ")");
            }
        }
        if (ceiling != null) {
            b.append(b.isEmpty() ? "" : "; ").append(String.format(Locale.ROOT, "fio's random 8 KiB reads at depth 64 of as many bytes"
                    + " (the device's ceiling) took %s ms, %.2f× of it", ms(ceiling.stats().medianNanos()), speed(best, ceiling)));
        }
        return b.toString();
    }

    /** The index case's heap fetches: what the Java baselines read (one 8 kB read per fetch). */
    private static long fetchesOf(CaseResult c) {
        Series fc = c.series(Drill.FILE_CHANNEL);
        return fc == null || fc.samples().isEmpty() ? 0 : fc.samples().get(0).reads();
    }

    /** "worker 5% faster than sync (ranges overlap: within the noise), io_uring 15% faster". */
    private static String compare(CaseResult c) {
        Series sync = c.series("sync");
        if (sync == null || sync.stats() == null) {
            Series best = c.fastestMethod();
            return best == null ? "no run counted" : "fastest method " + best.name() + " at " + ms(best.stats().medianNanos()) + " ms";
        }
        Stats ref = sync.stats();
        List<String> parts = new ArrayList<>();
        parts.add("sync " + ms(ref.medianNanos()) + " ms");
        for (Series s : c.series()) {
            if (s.baseline() || s == sync) {
                continue;
            }
            Stats st = s.stats();
            if (st == null) {
                parts.add(s.name() + ": no run counted");
                continue;
            }
            double v = (double) ref.medianNanos() / st.medianNanos();
            String rel = Math.abs(v - 1) < 0.02 ? "about the same as sync"
                    : v >= 1.5 ? String.format(Locale.ROOT, "%.1f× as fast as sync", v)
                    : v <= 1 / 1.5 ? String.format(Locale.ROOT, "takes %.1f× as long as sync", 1 / v)
                    : String.format(Locale.ROOT, "%.0f%% %s than sync", Math.abs(1 - 1 / v) * 100, v > 1 ? "faster" : "slower");
            boolean overlap = st.minNanos() <= ref.maxNanos() && ref.minNanos() <= st.maxNanos();
            parts.add(s.name() + " " + rel + (overlap && Math.abs(v - 1) >= 0.02 && st.counted() > 1
                    ? " (min–max ranges overlap: within the noise)" : ""));
        }
        return String.join(", ", parts);
    }

    /** The Markdown file. */
    public String markdown() {
        StringBuilder b = new StringBuilder("# ").append(heading()).append("\n");
        for (CaseResult c : r.cases()) {
            b.append("\n## ").append(c.drillCase().title()).append("\n\n| ").append(String.join(" | ", HEADER)).append(" |\n|");
            for (int i = 0; i < HEADER.length; i++) {
                b.append(i == 0 ? " --- |" : " ---: |");
            }
            b.append('\n');
            for (Object[] row : rows(c)) {
                b.append('|');
                for (Object o : row) {
                    b.append(' ').append(o).append(" |");
                }
                b.append('\n');
            }
        }
        for (Section section : sections()) {
            b.append("\n## ").append(section.title()).append("\n\n");
            for (String line : section.lines()) {
                b.append(line).append('\n');
            }
        }
        b.append("\n## Notes\n\n").append(notes().replace("\n", "\n\n")).append("\n\n## What it says\n\n");
        for (String s : reading()) {
            b.append("- ").append(s).append('\n');
        }
        b.append("\n## Every run\n\n| case | method | round | execution ms | I/O wait ms | reads | read bytes | shared hit"
                + " | residency before | counted |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
        for (CaseResult c : r.cases()) {
            for (Series s : c.series()) {
                for (Sample x : s.samples()) {
                    b.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %s | %d | %d | %d | %s | %s |%n", c.drillCase().id(),
                            s.name(), x.round(), ms(x.executionNanos()), x.ioWaitNanos() < 0 ? "–" : ms(x.ioWaitNanos()), x.reads(),
                            x.readBytes(), x.hits(), Drill.percent(x.residency()), x.counted() ? "yes" : "no: " + x.note()));
                }
            }
        }
        return b.toString();
    }

    /** The JSON file: options, environment, every sample and the derived figures. */
    public String json() {
        return Json.lines(this::writeJson);
    }

    private void writeJson(JsonGenerator g) throws IOException {
        DrillOptions o = r.options();
        g.writeStartObject();
        g.writeStringField("started", r.started().toString());
        number(g, "elapsed_ms", r.elapsedNanos() / 1e6);
        g.writeObjectFieldStart("options");
        g.writeNumberField("rows", o.rows());
        g.writeNumberField("rounds", o.rounds());
        strings(g, "methods", r.methods());
        g.writeArrayFieldStart("eic");
        for (int e : o.eic()) {
            g.writeNumber(e);
        }
        g.writeEndArray();
        strings(g, "cases", o.cases());
        g.writeArrayFieldStart("sessions");
        for (int n : o.sessions()) {
            g.writeNumber(n);
        }
        g.writeEndArray();
        g.writeBooleanField("fio", o.fio());
        g.writeNumberField("shared_buffers_blocks", r.sharedBuffers());
        g.writeNumberField("io_combine_limit_bytes", r.readSize());
        g.writeNumberField("segment_blocks", o.segmentBlocks());
        g.writeNumberField("seed", o.seed());
        g.writeStringField("data", o.dataDir().toString());
        g.writeEndObject();
        g.writeArrayFieldStart("tables");
        for (TableFigures f : r.tables()) {
            g.writeStartObject();
            g.writeStringField("name", f.name());
            g.writeNumberField("rows", f.rows());
            g.writeNumberField("blocks", f.blocks());
            g.writeNumberField("bytes", f.bytes());
            g.writeNumberField("index_blocks", f.indexBlocks());
            g.writeBooleanField("reused", f.reused());
            number(g, "load_ms", f.loadNanos() / 1e6);
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeObjectFieldStart("environment");
        g.writeStringField("java", System.getProperty("java.version"));
        g.writeStringField("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        g.writeNumberField("cpus", Runtime.getRuntime().availableProcessors());
        g.writeNumberField("cpu_clock_resolution_ns", RunProbe.cpuResolutionNanos()); // CPU figures under 10× it are null
        g.writeEndObject();
        g.writeObjectFieldStart("unavailable");
        for (Map.Entry<String, String> e : r.unavailable().entrySet()) {
            g.writeStringField(e.getKey(), e.getValue());
        }
        g.writeEndObject();
        g.writeStringField("fio", r.fio());
        g.writeArrayFieldStart("cases");
        for (CaseResult c : r.cases()) {
            Series sync = c.series("sync");
            Series java = c.fastestBaseline();
            Series fio = c.fioYardstick();
            Series ceiling = c.fioCeiling();
            long blocks = Math.max(1, c.drillCase().bytes() / StorageManager.BLCKSZ);
            g.writeStartObject();
            g.writeStringField("id", c.drillCase().id());
            g.writeStringField("title", c.drillCase().title());
            g.writeStringField("scan", c.drillCase().scan().name().toLowerCase(Locale.ROOT));
            g.writeBooleanField("cold", c.drillCase().cold());
            g.writeNumberField("effective_io_concurrency", c.drillCase().eic());
            g.writeNumberField("bytes", c.drillCase().bytes());
            g.writeArrayFieldStart("series");
            for (Series s : c.series()) {
                Stats st = s.stats();
                g.writeStartObject();
                g.writeStringField("name", s.name());
                g.writeBooleanField("baseline", s.baseline());
                g.writeBooleanField("fio", s.fio());
                if (s.description() != null) {
                    g.writeStringField("description", s.description());
                }
                if (st != null) {
                    number(g, "median_ms", st.medianNanos() / 1e6);
                    numberOrNull(g, "io_wait_median_ms", st.medianWaitNanos() < 0 ? Double.NaN : st.medianWaitNanos() / 1e6);
                    number(g, "min_ms", st.minNanos() / 1e6);
                    number(g, "max_ms", st.maxNanos() / 1e6);
                    number(g, "mb_per_s", st.mbPerSecond(c.drillCase().bytes()));
                    number(g, "bytes_per_read", st.bytesPerRead());
                    g.writeNumberField("shared_hit_median", st.medianHits());
                    numberOrNull(g, "speed_vs_sync", s.baseline() ? Double.NaN : speed(s, sync));
                    numberOrNull(g, "speed_vs_best_java", speed(s, java));
                    numberOrNull(g, "speed_vs_fio", speed(s, fio));
                    if (ceiling != null) {
                        numberOrNull(g, "speed_vs_fio_ceiling", speed(s, ceiling));
                    }
                    long cpu = CpuFigures.median(s); // null below the clock's resolution
                    numberOrNull(g, "cpu_median_ms", cpu < 0 ? Double.NaN : cpu / 1e6);
                    numberOrNull(g, "cpu_us_per_block", cpu < 0 ? Double.NaN : cpu / 1e3 / blocks);
                    numberOrNull(g, "context_switches_per_block",
                            st.medianContextSwitches() < 0 ? Double.NaN : (double) st.medianContextSwitches() / blocks);
                    numberOrNull(g, "device_bytes_per_read", st.devBytesPerRead() < 0 ? Double.NaN : st.devBytesPerRead());
                    numberOrNull(g, "device_reads_in_flight", st.devDepth() < 0 ? Double.NaN : st.devDepth());
                    numberOrNull(g, "device_read_us", st.devMicrosPerRead() < 0 ? Double.NaN : st.devMicrosPerRead());
                    numberOrNull(g, "stream_reads_in_progress", st.medianInProgress() < 0 ? Double.NaN : st.medianInProgress());
                }
                g.writeArrayFieldStart("runs");
                for (Sample x : s.samples()) {
                    g.writeStartObject();
                    g.writeNumberField("round", x.round());
                    number(g, "execution_ms", x.executionNanos() / 1e6);
                    numberOrNull(g, "io_wait_ms", x.ioWaitNanos() < 0 ? Double.NaN : x.ioWaitNanos() / 1e6);
                    g.writeNumberField("reads", x.reads());
                    g.writeNumberField("read_bytes", x.readBytes());
                    g.writeNumberField("shared_hit", x.hits());
                    g.writeNumberField("resident_pages", x.residentPages());
                    g.writeNumberField("total_pages", x.totalPages());
                    numberOrNull(g, "cpu_ms", CpuFigures.of(s, x) < 0 ? Double.NaN : x.cpuNanos() / 1e6);
                    g.writeNumberField("device_reads", x.devReads());
                    g.writeNumberField("device_read_bytes", x.devBytes());
                    g.writeNumberField("device_read_ms", x.devReadMs());
                    if (x.contextSwitches() >= 0) {
                        g.writeNumberField("context_switches", x.contextSwitches());
                    }
                    numberOrNull(g, "stream_reads_in_progress", x.streamInProgress() < 0 ? Double.NaN : x.streamInProgress());
                    g.writeBooleanField("counted", x.counted());
                    g.writeStringField("note", x.note());
                    g.writeEndObject();
                }
                g.writeEndArray();
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        }
        g.writeEndArray();
        if (r.visibility() != null) {
            writeVisibility(g, r.visibility());
        }
        if (r.hot() != null) {
            writeHot(g, r.hot());
        }
        if (r.concurrent() != null) {
            writeConcurrent(g, r.concurrent());
        }
        strings(g, "reading", reading());
        g.writeEndObject();
    }

    private static void writeVisibility(JsonGenerator g, VisibilityCase.Result v) throws IOException {
        g.writeObjectFieldStart("visibility");
        g.writeStringField("table", VisibilityCase.TABLE);
        g.writeNumberField("rows", v.rows());
        g.writeNumberField("blocks", v.blocks());
        g.writeNumberField("updated", v.updated());
        g.writeNumberField("ios_rows", v.expectedIos());
        g.writeArrayFieldStart("runs");
        for (VisibilityCase.Run x : v.runs()) {
            g.writeStartObject();
            g.writeStringField("method", x.method());
            g.writeStringField("behaviour", x.behaviour().name().toLowerCase(Locale.ROOT));
            g.writeNumberField("round", x.round());
            number(g, "ios_ms", x.iosBeforeMs());
            g.writeNumberField("ios_heap_fetches", x.fetchesBefore());
            number(g, "seq_ms", x.seqMs());
            g.writeNumberField("all_visible_after_seq", x.seqSetPages());
            number(g, "ios_after_seq_ms", x.iosAfterSeqMs());
            g.writeNumberField("ios_after_seq_heap_fetches", x.fetchesAfterSeq());
            number(g, "vacuum_ms", x.vacuumMs());
            g.writeNumberField("vacuum_scanned_pages", x.vacuumScanned());
            number(g, "vacuum_read_mb_s", x.vacuumReadMBs());
            number(g, "vacuum_write_mb_s", x.vacuumWriteMBs());
            number(g, "seq_read_mb_s", x.seqReadMBs());
            number(g, "ios_after_vacuum_ms", x.iosAfterVacuumMs());
            g.writeNumberField("ios_after_vacuum_heap_fetches", x.fetchesAfterVacuum());
            g.writeBooleanField("counted", x.counted());
            g.writeStringField("note", x.note());
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    private static void writeHot(JsonGenerator g, HotCase.Result h) throws IOException {
        g.writeObjectFieldStart("hot");
        g.writeStringField("table", h.table());
        g.writeNumberField("rows", h.rows());
        g.writeNumberField("blocks", h.blocks());
        g.writeStringField("io_method", h.method());
        g.writeNumberField("shared_buffers_blocks", h.sharedBuffers());
        g.writeNumberField("min_run_ms", HotCase.MIN_RUN_NANOS / 1_000_000);
        numberOrNull(g, "fast_path_speedup", h.fastPathSpeedup());
        g.writeArrayFieldStart("series");
        for (String runner : HotCase.RUNNERS) {
            g.writeStartObject();
            g.writeStringField("name", runner);
            numberOrNull(g, "ns_per_block_median", h.nsPerBlock(runner));
            numberOrNull(g, "blocks_per_s_median", 1e9 / h.nsPerBlock(runner));
            numberOrNull(g, "vs_plain_loop", runner.equals(HotCase.PLAIN_LOOP) ? Double.NaN : h.againstPlainLoop(runner));
            g.writeArrayFieldStart("runs");
            for (HotCase.Run x : h.runs()) {
                if (!x.runner().equals(runner)) {
                    continue;
                }
                g.writeStartObject();
                g.writeNumberField("round", x.round());
                number(g, "execution_ms", x.nanos() / 1e6);
                g.writeNumberField("passes", x.passes());
                number(g, "ns_per_block", x.nsPerBlock(h.blocks()));
                g.writeNumberField("shared_hit", x.hits());
                g.writeNumberField("reads", x.reads());
                g.writeNumberField("fast_path_returns", x.fastPathReturns());
                numberOrNull(g, "cpu_ms", x.cpuNanos() < 0 ? Double.NaN : x.cpuNanos() / 1e6);
                g.writeBooleanField("counted", x.counted());
                g.writeStringField("note", x.note());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    private static void writeConcurrent(JsonGenerator g, ConcurrentCase.Result c) throws IOException {
        g.writeObjectFieldStart("concurrent");
        g.writeStringField("table", c.table());
        g.writeNumberField("rows", c.rows());
        g.writeNumberField("blocks", c.blocks());
        g.writeNumberField("bytes", c.bytes());
        g.writeNumberField("effective_io_concurrency", DrillOptions.DEFAULT_EIC_VALUE);
        g.writeNumberField("hot_passes", c.hotPasses());
        g.writeStringField("warm_table", c.warmTable());
        g.writeNumberField("warm_blocks", c.warmBlocks());
        g.writeArrayFieldStart("sessions");
        for (int n : c.sessions()) {
            g.writeNumber(n);
        }
        g.writeEndArray();
        g.writeStringField("fio_note", c.fioNote());
        g.writeArrayFieldStart("series");
        int n1 = c.sessions().get(0);
        for (ConcurrentCase.State s : ConcurrentCase.State.values()) {
            for (int n : c.sessions()) {
                for (String runner : c.runners().get(s)) {
                    g.writeStartObject();
                    g.writeStringField("cache", s.name().toLowerCase(Locale.ROOT));
                    g.writeNumberField("sessions", n);
                    g.writeStringField("name", runner);
                    g.writeBooleanField("baseline", ConcurrentCase.isBaseline(runner));
                    double mbs = c.mbPerSecond(s, n, runner);
                    numberOrNull(g, "mb_per_s_median", mbs);
                    numberOrNull(g, "vs_first_sessions", mbs / c.mbPerSecond(s, n1, runner));
                    numberOrNull(g, "vs_sync", runner.equals("sync") ? Double.NaN : mbs / c.mbPerSecond(s, n, "sync"));
                    numberOrNull(g, "vs_fio", runner.startsWith("fio ") ? Double.NaN : mbs / c.fio(s, n));
                    numberOrNull(g, "slowest_over_fastest_median", c.fairness(s, n, runner));
                    g.writeArrayFieldStart("runs");
                    for (ConcurrentCase.Run x : c.runs()) {
                        if (x.state() != s || x.sessions() != n || !x.runner().equals(runner)) {
                            continue;
                        }
                        g.writeStartObject();
                        g.writeNumberField("round", x.round());
                        number(g, "execution_ms", x.wallNanos() / 1e6);
                        g.writeNumberField("bytes", x.bytes());
                        numberOrNull(g, "mb_per_s", x.mbPerSecond());
                        g.writeArrayFieldStart("session_ms");
                        for (long ns : x.sessionNanos()) {
                            g.writeNumber(String.format(Locale.ROOT, "%.3f", ns / 1e6));
                        }
                        g.writeEndArray();
                        numberOrNull(g, "slowest_over_fastest", x.fairness());
                        numberOrNull(g, "cpu_ms", x.cpuNanos() < 0 ? Double.NaN : x.cpuNanos() / 1e6);
                        g.writeNumberField("reads", x.reads());
                        g.writeNumberField("shared_hit", x.hits());
                        g.writeNumberField("stream_reads", x.streamIos());
                        g.writeNumberField("stream_waits", x.streamWaits());
                        g.writeNumberField("fast_path_returns", x.fastPathReturns());
                        if (x.contextSwitches() >= 0) {
                            g.writeNumberField("context_switches", x.contextSwitches());
                        }
                        g.writeBooleanField("counted", x.counted());
                        g.writeStringField("note", x.note());
                        g.writeEndObject();
                    }
                    g.writeEndArray();
                    g.writeEndObject();
                }
            }
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    /** The SVG bar chart of the medians with min–max whiskers, one panel per case. */
    public String svg() {
        return DrillChart.svg(heading(), r);
    }

    /** The file name stem of this result: its start time, {@code yyyyMMdd'T'HHmmss'Z'}. */
    public String stamp() {
        return DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC).format(r.started());
    }

    /**
     * Writes {@code <timestamp>.json}, {@code .md} and {@code .svg} into {@code dir} (created if
     * needed), each through a temporary file and a rename, the JSON last (so a reader that finds
     * the newest JSON finds its Markdown and chart next to it); returns the JSON file.
     */
    public Path write(Path dir) throws IOException {
        DataDirectory.createPrivate(dir);
        String stamp = stamp();
        Path json = dir.resolve(stamp + DrillResults.JSON);
        writeAtomically(dir.resolve(stamp + DrillResults.MARKDOWN), markdown());
        writeAtomically(dir.resolve(stamp + DrillResults.SVG), svg());
        writeAtomically(json, json());
        return json;
    }

    private static void writeAtomically(Path target, String text) throws IOException {
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** A figure with three decimals, as the Markdown shows it. */
    private static void number(JsonGenerator g, String field, double v) throws IOException {
        g.writeFieldName(field);
        g.writeNumber(String.format(Locale.ROOT, "%.3f", v));
    }

    /** As {@link #number}, or null when {@code v} is not finite (no such figure). */
    private static void numberOrNull(JsonGenerator g, String field, double v) throws IOException {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            g.writeNullField(field);
        } else {
            number(g, field, v);
        }
    }

    private static void strings(JsonGenerator g, String field, List<String> list) throws IOException {
        g.writeArrayFieldStart(field);
        for (String x : list) {
            g.writeString(x);
        }
        g.writeEndArray();
    }
}
