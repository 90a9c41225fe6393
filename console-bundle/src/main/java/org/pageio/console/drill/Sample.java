package org.pageio.console.drill;

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
 */
public record Sample(int round, long executionNanos, long ioWaitNanos, long reads, long readBytes, long hits, long residentPages,
        long totalPages, boolean counted, String note) {

    public double executionMs() {
        return executionNanos / 1e6;
    }

    public double residency() {
        return totalPages == 0 ? 0 : (double) residentPages / totalPages;
    }
}
