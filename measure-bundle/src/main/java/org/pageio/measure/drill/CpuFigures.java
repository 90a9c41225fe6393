package org.pageio.measure.drill;

import java.util.Locale;
import org.pageio.measure.drill.DrillResult.Series;

/**
 * When a CPU figure is a measurement rather than the granularity of the clock that took it, and
 * how the report says so. A figure is shown only when it is at least {@link #MIN_RESOLUTIONS}
 * times its clock's resolution (then the granularity is at most a tenth of it): the JVM's CPU
 * time from {@link RunProbe} (1 ns with {@code clock_gettime}, 10 ms with {@code /proc/self/stat}),
 * fio's from its own report ({@link #FIO_RESOLUTION_NANOS}). The share of wall time is the
 * process's CPU (every thread) over the run's wall time: above 100% it says only that other
 * threads ran too (I/O workers, the JIT compiler, GC), never a percentage. Stateless.
 */
final class CpuFigures {

    /** A CPU figure is shown when it is at least this many times its clock's resolution. */
    static final int MIN_RESOLUTIONS = 10;

    /** fio reports CPU as percentages of a job runtime counted in milliseconds. */
    static final long FIO_RESOLUTION_NANOS = 1_000_000L;

    private CpuFigures() {
    }

    /** The resolution of {@code s}'s CPU figures. */
    static long resolutionNanos(Series s) {
        return s.fio() ? Math.max(FIO_RESOLUTION_NANOS, RunProbe.cpuResolutionNanos()) : RunProbe.cpuResolutionNanos();
    }

    /** Whether {@code cpuNanos} (-1 unknown) measured something at {@code resolutionNanos}. */
    static boolean measurable(long cpuNanos, long resolutionNanos) {
        return cpuNanos >= 0 && cpuNanos >= MIN_RESOLUTIONS * Math.max(1, resolutionNanos);
    }

    /** {@code s}'s median CPU time when measurable, else -1. */
    static long median(Series s) {
        if (s == null || s.stats() == null) {
            return -1;
        }
        long cpu = s.stats().medianCpuNanos();
        return measurable(cpu, resolutionNanos(s)) ? cpu : -1;
    }

    /** One run's CPU time of {@code s} when measurable, else -1. */
    static long of(Series s, Sample x) {
        return measurable(x.cpuNanos(), resolutionNanos(s)) ? x.cpuNanos() : -1;
    }

    /**
     * "N% of its wall time" for CPU {@code cpuNanos} over wall time {@code wallNanos} when the
     * share is at most 100%; "more CPU than wall time: …" above; null when the CPU was not measurable.
     */
    static String share(long cpuNanos, long wallNanos, long resolutionNanos) {
        if (!measurable(cpuNanos, resolutionNanos) || wallNanos <= 0) {
            return null;
        }
        double p = 100.0 * cpuNanos / wallNanos;
        return p <= 100 ? String.format(Locale.ROOT, "%.0f%% of its wall time", p)
                : "more CPU than wall time: other threads of the process ran meanwhile";
    }

    /** What the report says of figures it left out, for a clock of {@code resolutionNanos}. */
    static String belowResolution(long resolutionNanos) {
        return "CPU: below " + MIN_RESOLUTIONS + "× the timer's " + duration(resolutionNanos) + " resolution, not shown (–)";
    }

    static String duration(long nanos) {
        return nanos >= 1_000_000 ? nanos / 1_000_000 + " ms" : nanos >= 1_000 ? nanos / 1_000 + " µs" : nanos + " ns";
    }
}
