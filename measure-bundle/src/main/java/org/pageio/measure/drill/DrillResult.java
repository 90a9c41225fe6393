package org.pageio.measure.drill;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Everything one drill measured, with the figures its tables show. Immutable.
 *
 * @param options       what ran
 * @param started       when
 * @param elapsedNanos  the whole drill, load included
 * @param tables        the tables the cases read ({@code t}, {@code prefetch_test}, {@code t_small})
 * @param methods       the methods compared
 * @param unavailable   registered methods that cannot run here, with the cause
 * @param fio           what became of the fio baseline
 * @param cases         per case, per method or baseline, the samples
 * @param readSize      {@code io_combine_limit} in bytes
 * @param sharedBuffers {@code shared_buffers} in blocks
 * @param visibility    the visibility case's runs, or null when it did not run
 * @param hot           the hot case's runs, or null when it did not run
 * @param concurrent    the concurrent case's runs, or null when it did not run
 */
public record DrillResult(DrillOptions options, Instant started, long elapsedNanos, List<TableFigures> tables,
        List<String> methods, Map<String, String> unavailable, String fio, List<CaseResult> cases, int readSize,
        int sharedBuffers, VisibilityCase.Result visibility, HotCase.Result hot, ConcurrentCase.Result concurrent) {

    /** A result without the hot and concurrent cases. */
    public DrillResult(DrillOptions options, Instant started, long elapsedNanos, List<TableFigures> tables, List<String> methods,
            Map<String, String> unavailable, String fio, List<CaseResult> cases, int readSize, int sharedBuffers,
            VisibilityCase.Result visibility) {
        this(options, started, elapsedNanos, tables, methods, unavailable, fio, cases, readSize, sharedBuffers, visibility, null, null);
    }

    /** A result without the visibility case. */
    public DrillResult(DrillOptions options, Instant started, long elapsedNanos, List<TableFigures> tables, List<String> methods,
            Map<String, String> unavailable, String fio, List<CaseResult> cases, int readSize, int sharedBuffers) {
        this(options, started, elapsedNanos, tables, methods, unavailable, fio, cases, readSize, sharedBuffers, null, null, null);
    }

    /**
     * A table of the drill.
     *
     * @param name        {@code t} or {@code prefetch_test}
     * @param rows        rows
     * @param blocks      heap blocks
     * @param bytes       heap bytes
     * @param indexBlocks blocks of its index on {@code val}, 0 when it has none
     * @param reused      whether it was already loaded (and indexed) with this spec
     * @param loadNanos   load and index build time (0 when reused)
     */
    public record TableFigures(String name, long rows, long blocks, long bytes, long indexBlocks, boolean reused, long loadNanos) {
    }

    public DrillResult {
        tables = List.copyOf(tables);
    }

    /** The table called {@code name}, or null. */
    public TableFigures table(String name) {
        return tables.stream().filter(t -> t.name().equals(name)).findFirst().orElse(null);
    }

    /** Whether every table was reused. */
    public boolean reused() {
        return tables.stream().allMatch(TableFigures::reused);
    }

    /** One case's series. */
    public record CaseResult(DrillCase drillCase, List<Series> series) {

        public Series series(String name) {
            return series.stream().filter(s -> s.name().equals(name)).findFirst().orElse(null);
        }

        /** The Java baseline ({@code FileChannel}, {@code AsynchronousFileChannel}) with the lowest median, or null. */
        public Series fastestBaseline() {
            Series best = null;
            for (Series s : series) {
                if (s.baseline() && !s.fio() && s.stats() != null
                        && (best == null || s.stats().medianNanos() < best.stats().medianNanos())) {
                    best = s;
                }
            }
            return best;
        }

        /** The fio baseline with the lowest median, or null. */
        public Series fastestFio() {
            Series best = null;
            for (Series s : series) {
                if (s.fio() && s.stats() != null && (best == null || s.stats().medianNanos() < best.stats().medianNanos())) {
                    best = s;
                }
            }
            return best;
        }

        /**
         * The fio run a method is held against: for a bitmap or index scan, fio replaying the same
         * reads at the same depth; for a sequential scan, the faster of fio's sequential jobs at the
         * same depth. Null when fio did not run (or no run of it counted).
         */
        public Series fioYardstick() {
            if (drillCase.scan() != DrillCase.Scan.SEQ) {
                Series same = series(FioSeries.SAME_READS.series);
                return same == null || same.stats() == null ? null : same;
            }
            return fastestFio();
        }

        /** fio's random reads at depth 64 of as many bytes (a bitmap or index scan's case only), or null. */
        public Series fioCeiling() {
            Series c = series(FioSeries.RAND_CEILING.series);
            return c == null || c.stats() == null ? null : c;
        }

        /** The method (not a baseline) with the lowest median, or null. */
        public Series fastestMethod() {
            Series best = null;
            for (Series s : series) {
                if (!s.baseline() && !s.variant() && s.stats() != null
                        && (best == null || s.stats().medianNanos() < best.stats().medianNanos())) {
                    best = s;
                }
            }
            return best;
        }
    }

    /** A method's (or baseline's) runs in one case. */
    public record Series(String name, boolean baseline, String description, List<Sample> samples) {

        public Series {
            samples = List.copyOf(samples);
        }

        /** Whether this is a method run with a lever PostgreSQL does not pull ({@code --seq-hint}): shown, never "the fastest method". */
        public boolean variant() {
            return name.endsWith(Drill.SEQ_HINT_SUFFIX);
        }

        /** Whether this is a fio baseline. */
        public boolean fio() {
            return name.startsWith("fio ");
        }

        /** Medians over the counted runs, or null when none counted. */
        public Stats stats() {
            List<Sample> ok = samples.stream().filter(Sample::counted).toList();
            if (ok.isEmpty()) {
                return null;
            }
            long[] exec = ok.stream().mapToLong(Sample::executionNanos).sorted().toArray();
            long[] wait = ok.stream().mapToLong(Sample::ioWaitNanos).sorted().toArray();
            long reads = ok.stream().mapToLong(Sample::reads).sum();
            long bytes = ok.stream().mapToLong(Sample::readBytes).sum();
            long[] hits = ok.stream().mapToLong(Sample::hits).sorted().toArray();
            long[] cpu = ok.stream().mapToLong(Sample::cpuNanos).sorted().toArray();
            boolean dev = ok.stream().allMatch(x -> x.devReads() >= 0);
            long devReads = ok.stream().mapToLong(Sample::devReads).sum();
            long devBytes = ok.stream().mapToLong(Sample::devBytes).sum();
            long devMs = ok.stream().mapToLong(Sample::devReadMs).sum();
            long execSum = ok.stream().mapToLong(Sample::executionNanos).sum();
            double[] inProgress = ok.stream().mapToDouble(Sample::streamInProgress).sorted().toArray();
            long[] switches = ok.stream().mapToLong(Sample::contextSwitches).sorted().toArray();
            return new Stats(ok.size(), samples.size(), median(exec), wait[0] < 0 ? -1 : median(wait), exec[0], exec[exec.length - 1],
                    reads == 0 ? 0 : (double) bytes / reads, ok.get(0).readBytes(), median(hits), cpu[0] < 0 ? -1 : median(cpu),
                    !dev || devReads == 0 ? -1 : (double) devBytes / devReads, !dev || execSum == 0 ? -1 : devMs * 1e6 / execSum,
                    !dev || devReads == 0 ? -1 : devMs * 1e3 / devReads, inProgress[0] < 0 ? -1 : median(inProgress),
                    switches[0] < 0 ? -1 : median(switches));
        }

        static long median(long[] sorted) {
            int n = sorted.length;
            return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        }

        static double median(double[] sorted) {
            int n = sorted.length;
            return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        }
    }

    /**
     * @param counted        runs that counted
     * @param runs           runs made
     * @param medianNanos    median execution time
     * @param medianWaitNanos median I/O wait, -1 when not measured (baselines)
     * @param minNanos       fastest counted run
     * @param maxNanos       slowest counted run
     * @param bytesPerRead   read_bytes / reads over the counted runs
     * @param bytesPerRun    bytes read by one run
     * @param medianHits     median of shared buffer hits (0 for baselines)
     * @param medianCpuNanos median CPU time of the process during a run (fio's own for fio), -1 if unknown
     * @param devBytesPerRead bytes per read the block device completed during the runs (read-ahead grows them), -1 if unknown
     * @param devDepth       the device's average reads in flight during the runs (read ms / wall ms), -1 if unknown
     * @param devMicrosPerRead the device's time per read it completed (read ms / reads: its latency), -1 if unknown
     * @param medianInProgress median of the runs' {@link Sample#streamInProgress}: the reads the scan kept started, as
     *                       PostgreSQL counts them; -1 for baselines. Against {@code devDepth}: reads the device had already
     *                       completed and the scan had not reached yet (Little's law: depth = reads per second × latency)
     * @param medianContextSwitches median of the runs' context switches (the process's, every thread), -1 if unknown
     */
    public record Stats(int counted, int runs, long medianNanos, long medianWaitNanos, long minNanos, long maxNanos,
            double bytesPerRead, long bytesPerRun, long medianHits, long medianCpuNanos, double devBytesPerRead, double devDepth,
            double devMicrosPerRead, double medianInProgress, long medianContextSwitches) {

        /** MB/s of the table at the median time. */
        public double mbPerSecond(long tableBytes) {
            return medianNanos == 0 ? 0 : tableBytes / 1e6 / (medianNanos / 1e9);
        }
    }

    /** Every sample of one series in the case {@code caseId} (for tests). */
    public List<Sample> samples(String caseId, String series) {
        List<Sample> out = new ArrayList<>();
        for (CaseResult c : cases) {
            if (c.drillCase().id().equals(caseId) && c.series(series) != null) {
                out.addAll(c.series(series).samples());
            }
        }
        return out;
    }
}
