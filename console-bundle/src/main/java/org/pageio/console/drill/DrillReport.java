package org.pageio.console.drill;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.pageio.console.TextTable;
import org.pageio.console.drill.DrillResult.CaseResult;
import org.pageio.console.drill.DrillResult.Series;
import org.pageio.console.drill.DrillResult.Stats;

/** The drill's result as the first article's table (text, Markdown), JSON, and a plain-language reading. */
public final class DrillReport {

    static final String[] HEADER = {"method", "execution ms", "I/O wait ms", "min–max ms", "MB/s", "bytes/read", "time vs sync",
            "time vs baseline", "runs counted"};

    private final DrillResult r;

    public DrillReport(DrillResult result) {
        this.r = result;
    }

    private static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.1f", nanos / 1e6);
    }

    private static String ratio(Stats s, Stats ref) {
        if (s == null || ref == null || ref.medianNanos() == 0) {
            return "–";
        }
        return String.format(Locale.ROOT, "%.2f×", (double) s.medianNanos() / ref.medianNanos());
    }

    /** The rows of one case, as cells. */
    private List<Object[]> rows(CaseResult c) {
        Series sync = c.series("sync");
        Stats syncStats = sync == null ? null : sync.stats();
        Series base = c.fastestBaseline();
        Stats baseStats = base == null ? null : base.stats();
        List<Object[]> out = new ArrayList<>();
        for (Series s : c.series()) {
            Stats st = s.stats();
            String name = s.baseline() ? s.name() + " (baseline)" : s.name();
            if (st == null) {
                out.add(new Object[] {name, "–", "–", "–", "–", "–", "–", "–", "0/" + s.samples().size()});
                continue;
            }
            out.add(new Object[] {name, ms(st.medianNanos()), st.medianWaitNanos() < 0 ? "–" : ms(st.medianWaitNanos()),
                    ms(st.minNanos()) + "–" + ms(st.maxNanos()), String.format(Locale.ROOT, "%.0f", st.mbPerSecond(r.tableBytes())),
                    String.format(Locale.ROOT, "%.0f", st.bytesPerRead()), s.baseline() ? "–" : ratio(st, syncStats),
                    base == null || s == base ? "–" : ratio(st, baseStats), st.counted() + "/" + st.runs()});
        }
        return out;
    }

    private String heading() {
        return String.format(Locale.ROOT, "pageio drill, %s: table t, %,d rows, %,d blocks (%s); shared_buffers=%dMB;"
                        + " io_combine_limit=%dkB; %d round(s), interleaved; medians over the runs that counted",
                DateTimeFormatter.ISO_INSTANT.format(r.started().truncatedTo(java.time.temporal.ChronoUnit.SECONDS)), r.rows(),
                r.blocks(), Drill.mb(r.tableBytes()), r.sharedBuffers() / 128, r.readSize() / 1024, r.options().rounds());
    }

    /** The aligned text for the terminal. */
    public String text() {
        StringBuilder b = new StringBuilder(heading()).append("\n");
        for (CaseResult c : r.cases()) {
            b.append('\n').append(c.drillCase().title()).append('\n');
            TextTable t = new TextTable(HEADER).alignRight(1, 2, 3, 4, 5, 6, 7, 8);
            for (Object[] row : rows(c)) {
                t.row(row);
            }
            b.append(t.toString().stripTrailing()).append('\n');
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
        b.append("Cold: before each cold run the table's files were fdatasync'ed and evicted with posix_fadvise(DONTNEED);"
                + " a run counts only if mincore found 0% of them resident. OS-warm: the files stay in the page cache;"
                + " every run of a method starts with a fresh, empty buffer pool.\n");
        b.append("I/O wait = time the scan waited for reads (EXPLAIN's I/O Timings). bytes/read = stat_io read_bytes / reads."
                + " time vs X = median ÷ X's median (below 1 = faster).\n");
        b.append("Baselines: FileChannel = the same files read with one ").append(r.readSize() / 1024)
                .append(" kB positional read at a time; AsynchronousFileChannel = the same reads with")
                .append(" effective_io_concurrency of them in flight. ").append(r.fio()).append('.');
        for (Map.Entry<String, String> e : r.unavailable().entrySet()) {
            b.append("\nio_method=").append(e.getKey()).append(" is not available here: ").append(e.getValue());
        }
        return b.toString();
    }

    /** A short plain-language reading of the result. */
    public List<String> reading() {
        List<String> out = new ArrayList<>();
        CaseResult main = null;
        CaseResult warm = null;
        List<CaseResult> cold = new ArrayList<>();
        for (CaseResult c : r.cases()) {
            if (c.drillCase().cold()) {
                cold.add(c);
                if (main == null || c.drillCase().eic() == DrillOptions.DEFAULT_EIC_VALUE) {
                    main = c;
                }
            } else {
                warm = c;
            }
        }
        int refused = 0;
        for (CaseResult c : cold) {
            for (Series s : c.series()) {
                refused += (int) s.samples().stream().filter(x -> !x.counted()).count();
            }
        }
        if (refused > 0) {
            out.add(refused + " cold run(s) were not counted: pages of the table stayed in the page cache after eviction"
                    + " (something has the files mapped or is reading them). See the NOT COUNTED lines.");
        }
        if (main != null) {
            out.add("Cold, effective_io_concurrency=" + main.drillCase().eic() + ": " + compare(main) + ".");
            Series best = fastestMethod(main);
            if (best != null && best.stats().mbPerSecond(r.tableBytes()) > 1000) {
                out.add(String.format(Locale.ROOT, "Cold reads ran at %.0f MB/s: faster than most real disks, so a cache below this"
                        + " machine (a virtual disk's host) probably served them. Cloud block storage will look different.",
                        best.stats().mbPerSecond(r.tableBytes())));
            }
            Series base = main.fastestBaseline();
            if (best != null && base != null && base.stats() != null) {
                double ratio = (double) best.stats().medianNanos() / base.stats().medianNanos();
                out.add(String.format(Locale.ROOT, "The fastest method, %s, took %.2f× the time of plain %s reads of the same files"
                        + " (which do no page checks and no buffer management).", best.name(), ratio, base.name()));
            }
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
        if (cold.size() > 1) {
            for (String m : r.methods()) {
                StringBuilder b = new StringBuilder();
                for (CaseResult c : cold) {
                    Series s = c.series(m);
                    b.append(b.isEmpty() ? "" : ", ").append("eic ").append(c.drillCase().eic()).append(": ")
                            .append(s == null || s.stats() == null ? "–" : ms(s.stats().medianNanos()) + " ms");
                }
                out.add("effective_io_concurrency, cold, " + m + ": " + b + ".");
            }
        }
        if (main != null) {
            Series any = main.series(r.methods().get(0));
            if (any != null && any.stats() != null) {
                double kb = any.stats().bytesPerRead() / 1024;
                out.add(String.format(Locale.ROOT, "Reads averaged %.0f kB (io_combine_limit is %d kB): %s", kb, r.readSize() / 1024,
                        kb >= 0.9 * r.readSize() / 1024 ? "adjacent blocks were combined into full-size reads."
                                : "fewer blocks were combined than the limit allows."));
            }
        }
        if (r.options().rounds() < 3) {
            out.add("Only " + r.options().rounds() + " round(s): treat every difference as noise; the article used five.");
        }
        return out;
    }

    private static Series fastestMethod(CaseResult c) {
        Series best = null;
        for (Series s : c.series()) {
            if (!s.baseline() && s.stats() != null && (best == null || s.stats().medianNanos() < best.stats().medianNanos())) {
                best = s;
            }
        }
        return best;
    }

    /** "worker 5% faster than sync (ranges overlap: within the noise), io_uring 15% faster". */
    private static String compare(CaseResult c) {
        Series sync = c.series("sync");
        if (sync == null || sync.stats() == null) {
            Series best = fastestMethod(c);
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
            double d = 1 - (double) st.medianNanos() / ref.medianNanos();
            String rel = Math.abs(d) < 0.02 ? "about the same as sync"
                    : String.format(Locale.ROOT, "%.0f%% %s than sync", Math.abs(d) * 100, d > 0 ? "faster" : "slower");
            boolean overlap = st.minNanos() <= ref.maxNanos() && ref.minNanos() <= st.maxNanos();
            parts.add(s.name() + " " + rel + (overlap && Math.abs(d) >= 0.02 && st.counted() > 1 ? " (min–max ranges overlap: within the noise)" : ""));
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
        b.append("\n## Notes\n\n").append(notes().replace("\n", "\n\n")).append("\n\n## What it says\n\n");
        for (String s : reading()) {
            b.append("- ").append(s).append('\n');
        }
        b.append("\n## Every run\n\n| case | method | round | execution ms | I/O wait ms | reads | read bytes | residency before | counted |\n"
                + "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
        for (CaseResult c : r.cases()) {
            for (Series s : c.series()) {
                for (Sample x : s.samples()) {
                    b.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %s | %d | %d | %s | %s |%n", c.drillCase().id(), s.name(),
                            x.round(), ms(x.executionNanos()), x.ioWaitNanos() < 0 ? "–" : ms(x.ioWaitNanos()), x.reads(), x.readBytes(),
                            Drill.percent(x.residency()), x.counted() ? "yes" : "no: " + x.note()));
                }
            }
        }
        return b.toString();
    }

    /** The JSON file: options, environment, every sample and the derived figures. */
    public String json() {
        StringBuilder b = new StringBuilder("{\n");
        DrillOptions o = r.options();
        b.append("  \"started\": ").append(q(r.started().toString())).append(",\n");
        b.append("  \"elapsed_ms\": ").append(num(r.elapsedNanos() / 1e6)).append(",\n");
        b.append("  \"options\": {\"rows\": ").append(o.rows()).append(", \"rounds\": ").append(o.rounds())
                .append(", \"methods\": ").append(strings(r.methods())).append(", \"eic\": ").append(o.eic())
                .append(", \"shared_buffers_blocks\": ").append(r.sharedBuffers()).append(", \"io_combine_limit_bytes\": ")
                .append(r.readSize()).append(", \"segment_blocks\": ").append(o.segmentBlocks()).append(", \"seed\": ")
                .append(o.seed()).append(", \"data\": ").append(q(o.dataDir().toString())).append("},\n");
        b.append("  \"table\": {\"name\": \"t\", \"rows\": ").append(r.rows()).append(", \"blocks\": ").append(r.blocks())
                .append(", \"bytes\": ").append(r.tableBytes()).append(", \"reused\": ").append(r.reused())
                .append(", \"load_ms\": ").append(num(r.loadNanos() / 1e6)).append("},\n");
        b.append("  \"environment\": {\"java\": ").append(q(System.getProperty("java.version"))).append(", \"os\": ")
                .append(q(System.getProperty("os.name") + " " + System.getProperty("os.version"))).append(", \"cpus\": ")
                .append(Runtime.getRuntime().availableProcessors()).append("},\n");
        b.append("  \"unavailable\": {");
        String sep = "";
        for (Map.Entry<String, String> e : r.unavailable().entrySet()) {
            b.append(sep).append(q(e.getKey())).append(": ").append(q(e.getValue()));
            sep = ", ";
        }
        b.append("},\n  \"fio\": ").append(q(r.fio())).append(",\n  \"cases\": [\n");
        for (int ci = 0; ci < r.cases().size(); ci++) {
            CaseResult c = r.cases().get(ci);
            b.append("    {\"id\": ").append(q(c.drillCase().id())).append(", \"title\": ").append(q(c.drillCase().title()))
                    .append(", \"cold\": ").append(c.drillCase().cold()).append(", \"effective_io_concurrency\": ")
                    .append(c.drillCase().eic()).append(", \"series\": [\n");
            for (int si = 0; si < c.series().size(); si++) {
                Series s = c.series().get(si);
                Stats st = s.stats();
                b.append("      {\"name\": ").append(q(s.name())).append(", \"baseline\": ").append(s.baseline());
                if (s.description() != null) {
                    b.append(", \"description\": ").append(q(s.description()));
                }
                if (st != null) {
                    b.append(", \"median_ms\": ").append(num(st.medianNanos() / 1e6)).append(", \"io_wait_median_ms\": ")
                            .append(st.medianWaitNanos() < 0 ? "null" : num(st.medianWaitNanos() / 1e6)).append(", \"min_ms\": ")
                            .append(num(st.minNanos() / 1e6)).append(", \"max_ms\": ").append(num(st.maxNanos() / 1e6))
                            .append(", \"mb_per_s\": ").append(num(st.mbPerSecond(r.tableBytes()))).append(", \"bytes_per_read\": ")
                            .append(num(st.bytesPerRead()));
                }
                b.append(", \"runs\": [");
                for (int i = 0; i < s.samples().size(); i++) {
                    Sample x = s.samples().get(i);
                    b.append(i == 0 ? "\n" : ",\n").append("        {\"round\": ").append(x.round()).append(", \"execution_ms\": ")
                            .append(num(x.executionNanos() / 1e6)).append(", \"io_wait_ms\": ")
                            .append(x.ioWaitNanos() < 0 ? "null" : num(x.ioWaitNanos() / 1e6)).append(", \"reads\": ").append(x.reads())
                            .append(", \"read_bytes\": ").append(x.readBytes()).append(", \"resident_pages\": ").append(x.residentPages())
                            .append(", \"total_pages\": ").append(x.totalPages()).append(", \"counted\": ").append(x.counted())
                            .append(", \"note\": ").append(x.note() == null ? "null" : q(x.note())).append('}');
                }
                b.append("]}").append(si + 1 < c.series().size() ? ",\n" : "\n");
            }
            b.append("    ]}").append(ci + 1 < r.cases().size() ? ",\n" : "\n");
        }
        b.append("  ],\n  \"reading\": ").append(strings(reading())).append("\n}\n");
        return b.toString();
    }

    /**
     * Writes {@code <timestamp>.json} and {@code <timestamp>.md} into {@code dir} (created if
     * needed), each through a temporary file and a rename; returns the JSON file.
     */
    public Path write(Path dir) throws IOException {
        Files.createDirectories(dir);
        String stamp = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC).format(r.started());
        Path json = dir.resolve(stamp + ".json");
        Path md = dir.resolve(stamp + ".md");
        writeAtomically(json, json());
        writeAtomically(md, markdown());
        return json;
    }

    private static void writeAtomically(Path target, String text) throws IOException {
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static String num(double v) {
        return String.format(Locale.ROOT, "%.3f", v);
    }

    private static String strings(List<String> list) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < list.size(); i++) {
            b.append(i == 0 ? "" : ", ").append(q(list.get(i)));
        }
        return b.append(']').toString();
    }

    static String q(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (ch < 0x20) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) ch));
                    } else {
                        b.append(ch);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
