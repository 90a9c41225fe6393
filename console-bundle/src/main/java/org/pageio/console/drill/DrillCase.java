package org.pageio.console.drill;

/**
 * One case of the drill. Immutable.
 *
 * @param id    stable key in the JSON file, e.g. {@code seq-cold-eic16}
 * @param title what a person reads
 * @param cold  evict the table's files from the page cache (and prove it) before each run
 * @param eic   {@code effective_io_concurrency} of the scan
 */
public record DrillCase(String id, String title, boolean cold, int eic) {

    /** A short label for progress lines. */
    public String shortName() {
        return (cold ? "cold" : "OS-warm") + " eic=" + eic;
    }
}
