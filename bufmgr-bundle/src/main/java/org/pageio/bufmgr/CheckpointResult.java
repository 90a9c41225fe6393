package org.pageio.bufmgr;

import java.util.Locale;

/**
 * What a checkpoint did, with PostgreSQL's log line as {@link #toString()}.
 *
 * @param buffersWritten buffers written (a block written twice counts twice)
 * @param writes         write I/Os issued (combined writes count once)
 * @param filesSynced    segment files fsynced
 * @param nbuffers       size of the pool, for the percentage
 * @param writeNanos     time writing (issue to last completion)
 * @param syncNanos      time fsyncing
 * @param totalNanos     the whole checkpoint
 */
public record CheckpointResult(long buffersWritten, long writes, int filesSynced, int nbuffers, long writeNanos,
        long syncNanos, long totalNanos) {

    @Override
    public String toString() {
        return String.format(Locale.ROOT,
                "checkpoint complete: wrote %d buffers (%.1f%%) in %d writes; %d files synced; write=%.3f s, sync=%.3f s, total=%.3f s",
                buffersWritten, 100.0 * buffersWritten / Math.max(1, nbuffers), writes, filesSynced, writeNanos / 1e9,
                syncNanos / 1e9, totalNanos / 1e9);
    }
}
