package org.pageio.table;

import java.util.List;
import java.util.Locale;

/**
 * What one {@code VACUUM} of a table did, with the figures PostgreSQL's {@code VACUUM VERBOSE}
 * prints ({@code vacuumlazy.c}'s {@code heap_vacuum_rel} report). Immutable.
 *
 * @param table              the table
 * @param relation           its heap relation ({@code spc/db/rel})
 * @param freeze             whether it ran as {@code VACUUM FREEZE} (aggressive)
 * @param relPages           heap pages when it started ({@code rel_pages})
 * @param scannedPages       pages read and processed ({@code scanned_pages})
 * @param skippedAllVisible  pages skipped because the map marks them all-visible (all-frozen when aggressive)
 * @param notPrunedPinned    scanned pages left unpruned because another session pinned them
 *                           (PostgreSQL's {@code lazy_scan_noprune} pages)
 * @param tuplesRemoved      tuples removed by pruning ({@code tuples_deleted})
 * @param liveTuples         live tuples left ({@code live_tuples})
 * @param recentlyDead       dead tuples a running snapshot may still see ({@code recently_dead_tuples})
 * @param removableCutoff    the oldest xmin of any running snapshot when it started ({@code OldestXmin})
 * @param frozenPages        pages on which tuples were frozen
 * @param tuplesFrozen       tuples frozen
 * @param vmAllVisible       pages newly set all-visible in the visibility map
 * @param vmAllFrozen        pages newly set all-frozen
 * @param lpdeadItemPages    pages that had dead line pointers ({@code lpdead_item_pages})
 * @param lpdeadItems        dead line pointers removed from the heap ({@code lpdead_items})
 * @param indexScans         index vacuum passes (0 or 1)
 * @param indexes            each index's pass
 * @param hits               buffers found in shared buffers ({@code buffer usage: N hits})
 * @param reads              buffers read
 * @param dirtied            heap and visibility map buffers dirtied (index pages are not counted)
 * @param written            buffers written (by its ring and by the checkpoints that order its writes)
 * @param readNanos          time waiting for reads ({@code I/O timings: read})
 * @param writeNanos         time writing ({@code I/O timings: write})
 * @param elapsedNanos       wall time
 * @param cpuUserNanos       CPU time of the vacuuming thread in user mode
 * @param cpuSystemNanos     and in the kernel
 * @param trackIoTiming      whether the I/O timings line is shown
 * @param stream             the heap scan's read-stream figures (its first pass)
 * @param phases             where the time went (pageio's addition to the report)
 * @since 2.1.0
 */
public record VacuumReport(String table, String relation, boolean freeze, long relPages, long scannedPages,
        long skippedAllVisible, long notPrunedPinned, long tuplesRemoved, long liveTuples, long recentlyDead,
        long removableCutoff, long frozenPages, long tuplesFrozen, long vmAllVisible, long vmAllFrozen,
        long lpdeadItemPages, long lpdeadItems, int indexScans, List<IndexVacuum> indexes, long hits, long reads,
        long dirtied, long written, long readNanos, long writeNanos, long elapsedNanos, long cpuUserNanos,
        long cpuSystemNanos, boolean trackIoTiming, StreamFigures stream, Phases phases) {

    /**
     * The wall time of each phase.
     *
     * @param scanHeap     the first heap pass, reads and pruning included
     * @param prune        of which pruning the pages ({@code heap_page_prune_and_freeze})
     * @param indexes      the index bulk deletes
     * @param vacuumHeap   the second heap pass
     * @param checkpoints  the checkpoints that order the writes
     * @param map          setting the visibility map's bits
     */
    public record Phases(long scanHeap, long prune, long indexes, long vacuumHeap, long checkpoints, long map) {
    }

    /**
     * One index's bulk delete ({@code btbulkdelete}): entries removed and left, pages.
     *
     * @param name            the index
     * @param pages           its pages (metapage included)
     * @param entriesRemoved  entries that pointed at dead heap tuples
     * @param entriesLeft     entries left
     */
    public record IndexVacuum(String name, long pages, long entriesRemoved, long entriesLeft) {
    }

    public VacuumReport {
        indexes = List.copyOf(indexes);
    }

    /** Megabytes per second of {@code blocks} 8 KiB blocks over the run, PostgreSQL's {@code avg read rate}. */
    private double rate(long blocks) {
        return elapsedNanos <= 0 ? 0 : blocks * 8192.0 / (1024 * 1024) / (elapsedNanos / 1e9);
    }

    /** The read rate, MB/s ({@code avg read rate}). */
    public double readRate() {
        return rate(reads);
    }

    /** The write rate, MB/s ({@code avg write rate}). */
    public double writeRate() {
        return rate(written);
    }

    private static double pct(long part, long whole) {
        return whole == 0 ? 100.0 : 100.0 * part / whole;
    }

    /** The first line of {@code VACUUM VERBOSE}'s finishing message, without it: what {@code VACUUM} itself prints. */
    public String summary() {
        return String.format(Locale.ROOT, "VACUUM %s: %,d of %,d pages scanned, %,d tuples removed, %,d pages set all-visible"
                + " in %.3f ms", table, scannedPages, relPages, tuplesRemoved, vmAllVisible, elapsedNanos / 1e6);
    }

    /** The report in {@code VACUUM VERBOSE}'s layout. */
    public String text() {
        StringBuilder b = new StringBuilder();
        b.append("INFO:  vacuuming \"").append(table).append("\"\n");
        b.append("INFO:  finished vacuuming \"").append(table).append("\": index scans: ").append(indexScans).append('\n');
        b.append(String.format(Locale.ROOT, "pages: 0 removed, %d remain, %d scanned (%.2f%% of total), %d skipped all-visible%s%n",
                relPages, scannedPages, pct(scannedPages, relPages), skippedAllVisible,
                notPrunedPinned > 0 ? ", " + notPrunedPinned + " not pruned (pinned by another session)" : ""));
        b.append(String.format(Locale.ROOT, "tuples: %d removed, %d remain, %d are dead but not yet removable%n", tuplesRemoved,
                liveTuples + recentlyDead, recentlyDead));
        b.append(String.format(Locale.ROOT, "removable cutoff: %s%n", Long.toUnsignedString(removableCutoff)));
        b.append(String.format(Locale.ROOT, "frozen: %d pages from table (%.2f%% of total) had %d tuples frozen%n", frozenPages,
                pct(frozenPages, relPages), tuplesFrozen));
        b.append(String.format(Locale.ROOT, "visibility map: %d pages set all-visible, %d pages set all-frozen%n", vmAllVisible,
                vmAllFrozen));
        if (indexScans == 0) {
            b.append(String.format(Locale.ROOT, "index scan not needed: %d pages from table (%.2f%% of total) had %d dead item"
                    + " identifiers removed%n", lpdeadItemPages, pct(lpdeadItemPages, relPages), lpdeadItems));
        } else {
            b.append(String.format(Locale.ROOT, "index scan needed: %d pages from table (%.2f%% of total) had %d dead item"
                    + " identifiers removed%n", lpdeadItemPages, pct(lpdeadItemPages, relPages), lpdeadItems));
        }
        for (IndexVacuum i : indexes) {
            b.append(String.format(Locale.ROOT, "index \"%s\": pages: %d in total, %d entries removed, %d remain%n", i.name(),
                    i.pages(), i.entriesRemoved(), i.entriesLeft()));
        }
        if (trackIoTiming) {
            b.append(String.format(Locale.ROOT, "I/O timings: read: %.3f ms, write: %.3f ms%n", readNanos / 1e6, writeNanos / 1e6));
        }
        b.append(String.format(Locale.ROOT, "avg read rate: %.3f MB/s, avg write rate: %.3f MB/s%n", readRate(), writeRate()));
        b.append(String.format(Locale.ROOT, "buffer usage: %d hits, %d reads, %d dirtied%n", hits, reads, dirtied));
        b.append(String.format(Locale.ROOT, "read stream: %s; %s%n", stream.prefetchLine(), stream.ioLine()));
        b.append(String.format(Locale.ROOT, "phases: heap scan %.3f ms (pruning %.3f ms), index vacuum %.3f ms, heap vacuum %.3f ms,"
                + " checkpoints %.3f ms, visibility map %.3f ms%n", phases.scanHeap() / 1e6, phases.prune() / 1e6,
                phases.indexes() / 1e6, phases.vacuumHeap() / 1e6, phases.checkpoints() / 1e6, phases.map() / 1e6));
        b.append(String.format(Locale.ROOT, "system usage: CPU: user: %.2f s, system: %.2f s, elapsed: %.2f s", cpuUserNanos / 1e9,
                cpuSystemNanos / 1e9, elapsedNanos / 1e9));
        return b.toString();
    }
}
