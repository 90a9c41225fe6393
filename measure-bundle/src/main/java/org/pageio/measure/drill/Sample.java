package org.pageio.measure.drill;

/**
 * One timed run of one method (or baseline) in one case and round. Immutable.
 *
 * @param round          1-based round
 * @param executionNanos wall time of the scan (EXPLAIN's Execution Time); fio's own runtime for fio
 * @param ioWaitNanos    time the scan waited for reads (EXPLAIN's I/O Timings: shared read); -1 for baselines
 * @param reads          reads ({@code stat_io} reads; system calls or fio I/Os for a baseline)
 * @param readBytes      bytes read ({@code stat_io} read_bytes)
 * @param hits           buffers found in shared buffers (EXPLAIN's shared hit); 0 for baselines
 * @param residentPages  OS pages of the case's files in the page cache just before the run
 * @param totalPages     OS pages of the case's files
 * @param counted        whether the run counts for its case: a cold run counts only at 0% residency
 * @param note           why it does not count, or null
 * @param cpuNanos       CPU time of the process during the run (every thread, user + system; fio's own for fio), -1 if unknown
 * @param devReads       reads the data directory's block device completed during the run, -1 if unknown
 * @param devBytes       bytes it read
 * @param devReadMs      milliseconds its reads spent in flight, summed (÷ wall time = average reads in flight)
 * @param streamInProgress the scan's reads started and not yet consumed, averaged over the moments it started one
 *                       (PostgreSQL's EXPLAIN {@code in-progress}, that read included); -1 for baselines and scans without reads
 * @param contextSwitches the process's context switches during the run (voluntary and involuntary, every
 *                       thread); -1 if unknown and for fio (another process)
 */
public record Sample(int round, long executionNanos, long ioWaitNanos, long reads, long readBytes, long hits, long residentPages,
        long totalPages, boolean counted, String note, long cpuNanos, long devReads, long devBytes, long devReadMs,
        double streamInProgress, long contextSwitches) {

    /** A sample without CPU and device figures. */
    public Sample(int round, long executionNanos, long ioWaitNanos, long reads, long readBytes, long hits, long residentPages,
            long totalPages, boolean counted, String note) {
        this(round, executionNanos, ioWaitNanos, reads, readBytes, hits, residentPages, totalPages, counted, note, -1, -1, -1, -1, -1, -1);
    }

    /** This sample with this process's CPU time and the device figures between two probe readings. */
    Sample probed(RunProbe.Snapshot before, RunProbe.Snapshot after) {
        return probed(before, after, before.cpuNanos() < 0 || after.cpuNanos() < 0 ? -1 : after.cpuNanos() - before.cpuNanos(),
                before.contextSwitches() < 0 || after.contextSwitches() < 0 ? -1 : after.contextSwitches() - before.contextSwitches());
    }

    /**
     * This sample with CPU time {@code cpu} of another process (fio's; -1 unknown), no context
     * switches of its own, and the device figures between two readings.
     */
    Sample probed(RunProbe.Snapshot before, RunProbe.Snapshot after, long cpu) {
        return probed(before, after, cpu, -1);
    }

    private Sample probed(RunProbe.Snapshot before, RunProbe.Snapshot after, long cpu, long switches) {
        boolean dev = before.devReads() >= 0 && after.devReads() >= 0;
        return new Sample(round, executionNanos, ioWaitNanos, reads, readBytes, hits, residentPages, totalPages, counted, note, cpu,
                dev ? after.devReads() - before.devReads() : -1, dev ? after.devBytes() - before.devBytes() : -1,
                dev ? after.devReadMs() - before.devReadMs() : -1, streamInProgress, switches);
    }

    /** This sample with the scan's read-stream depth ({@link #streamInProgress}). */
    Sample withStreamInProgress(double inProgress) {
        return new Sample(round, executionNanos, ioWaitNanos, reads, readBytes, hits, residentPages, totalPages, counted, note, cpuNanos,
                devReads, devBytes, devReadMs, inProgress, contextSwitches);
    }

    public double executionMs() {
        return executionNanos / 1e6;
    }

    public double residency() {
        return totalPages == 0 ? 0 : (double) residentPages / totalPages;
    }
}
