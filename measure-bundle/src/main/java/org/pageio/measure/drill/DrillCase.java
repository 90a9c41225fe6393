package org.pageio.measure.drill;

/**
 * One case of the drill. Immutable.
 *
 * @param id    stable key in the JSON file, e.g. {@code seq-cold-eic16}, {@code bitmap-cold}
 * @param title what a person reads
 * @param scan  which scan the methods run (and which blocks the baselines read)
 * @param cold  evict the case's files from the page cache (and prove it) before each run
 * @param eic   {@code effective_io_concurrency} of the scan (and reads in flight of the asynchronous baseline)
 * @param bytes bytes the scan needs from storage (the whole heap for a sequential scan, the
 *              distinct heap blocks for the bitmap and index scans); MB/s is this over the time
 */
public record DrillCase(String id, String title, Scan scan, boolean cold, int eic, long bytes) {

    /** The scans of the drill. */
    public enum Scan {
        /** {@code count(*)} of {@code t}: sequential scan. */
        SEQ("count(*)"),
        /** Bitmap heap scan of {@code prefetch_test} by {@code val}: distinct blocks in block order. */
        BITMAP("bitmap"),
        /** Index scan of {@code prefetch_test} by {@code val}: a heap block per entry, in index order. */
        INDEX("index");

        private final String label;

        Scan(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** A short label for progress lines. */
    public String shortName() {
        return scan.label() + " " + (cold ? "cold" : "OS-warm") + " eic=" + eic;
    }
}
