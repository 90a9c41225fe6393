package org.pageio.posix;

/**
 * How much of a file range is in the page cache, as {@link Posix#residency} measured it.
 * Immutable and thread-safe.
 *
 * @param residentPages pages of the range found in memory
 * @param totalPages    pages the range touches
 */
public record Residency(long residentPages, long totalPages) {

    /** {@code residentPages / totalPages}, or 0 for an empty range. */
    public double fraction() {
        return totalPages == 0 ? 0.0 : (double) residentPages / totalPages;
    }
}
