package org.pageio.table;

/** Called by the loader about ten times a second, in the loading thread. */
@FunctionalInterface
public interface LoadProgress {

    LoadProgress NONE = (rows, total, bytes, nanos) -> { };

    void progress(long rowsDone, long rowsTotal, long bytesWritten, long elapsedNanos);
}
