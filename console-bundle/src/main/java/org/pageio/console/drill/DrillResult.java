package org.pageio.console.drill;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Everything one drill measured, with the figures of the first article's table. Immutable.
 *
 * @param options       what ran
 * @param started       when
 * @param elapsedNanos  the whole drill, load included
 * @param rows          rows of {@code t}
 * @param blocks        heap blocks of {@code t}
 * @param tableBytes    bytes of {@code t}'s files
 * @param reused        whether {@code t} was already loaded with this spec
 * @param loadNanos     the load's time (0 when reused)
 * @param methods       the methods compared
 * @param unavailable   registered methods that cannot run here, with the cause
 * @param fio           what became of the fio baseline
 * @param cases         per case, per method or baseline, the samples
 * @param readSize      {@code io_combine_limit} in bytes
 * @param sharedBuffers {@code shared_buffers} in blocks
 */
public record DrillResult(DrillOptions options, Instant started, long elapsedNanos, long rows, long blocks, long tableBytes,
        boolean reused, long loadNanos, List<String> methods, Map<String, String> unavailable, String fio,
        List<CaseResult> cases, int readSize, int sharedBuffers) {

    /** One case's series. */
    public record CaseResult(DrillCase drillCase, List<Series> series) {

        public Series series(String name) {
            return series.stream().filter(s -> s.name().equals(name)).findFirst().orElse(null);
        }

        /** The baseline with the lowest median, or null. */
        public Series fastestBaseline() {
            Series best = null;
            for (Series s : series) {
                if (s.baseline() && s.stats() != null && (best == null || s.stats().medianNanos() < best.stats().medianNanos())) {
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
            return new Stats(ok.size(), samples.size(), median(exec), wait[0] < 0 ? -1 : median(wait), exec[0], exec[exec.length - 1],
                    reads == 0 ? 0 : (double) bytes / reads, ok.get(0).readBytes());
        }

        static long median(long[] sorted) {
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
     */
    public record Stats(int counted, int runs, long medianNanos, long medianWaitNanos, long minNanos, long maxNanos,
            double bytesPerRead, long bytesPerRun) {

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
