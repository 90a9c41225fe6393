package org.pageio.table;

import java.util.List;
import java.util.Locale;

/**
 * The result of a scan and its EXPLAIN (ANALYZE, BUFFERS, IO)-style plan. Immutable.
 *
 * @param request        what ran
 * @param rows           rows the query returned (count(*) for aggregates is in {@link #count})
 * @param count          the aggregate's count (rows matching; blocks checked for CHECKSUMS)
 * @param sumLength      {@code sum(length(text))} of the matching rows (INDEX), 0 otherwise
 * @param executionNanos wall time of the whole scan
 * @param trackIoTiming  whether {@code I/O Timings} are shown
 * @param plan           the plan tree, with the actual figures
 * @param badBlocks      blocks the checksum scan rejected (empty otherwise)
 */
public record ScanReport(ScanRequest request, long rows, long count, long sumLength, long executionNanos, boolean trackIoTiming,
        PlanNode plan, List<BadBlock> badBlocks) {

    /** The scan node's property: heap pages the scan pruned ({@code scan_sets_visibility_map}). @since 2.1.0 */
    public static final String PAGES_PRUNED = "Pages Pruned";
    /** The scan node's property: heap pages the scan marked all-visible in the visibility map. @since 2.1.0 */
    public static final String PAGES_SET_ALL_VISIBLE = "Pages Set All-Visible";

    public ScanReport {
        badBlocks = List.copyOf(badBlocks);
    }

    /** The first property {@code name} along the plan's first-child path, as a number; 0 without it. */
    private long property(String name) {
        for (PlanNode n = plan; n != null; n = n.children().isEmpty() ? null : n.children().get(0)) {
            for (String[] p : n.properties()) {
                if (p[0].equals(name)) {
                    return Long.parseLong(p[1]);
                }
            }
        }
        return 0;
    }

    /**
     * Heap pages the sequential or bitmap heap scan pruned on access ({@code scan_sets_visibility_map
     * = on}); 0 for other scans, with the setting off, and for a plan that did not run.
     * @since 2.1.0
     */
    public long pagesPruned() {
        return property(PAGES_PRUNED);
    }

    /**
     * Heap pages the scan marked all-visible ({@code PD_ALL_VISIBLE} and the visibility map's bits)
     * after pruning them; 0 as for {@link #pagesPruned}.
     * @since 2.1.0
     */
    public long pagesSetAllVisible() {
        return property(PAGES_SET_ALL_VISIBLE);
    }

    /** Buffers found in shared buffers over the whole scan. */
    public long sharedHit() {
        return plan.sharedHit();
    }

    /** Buffers read over the whole scan. */
    public long sharedRead() {
        return plan.sharedRead();
    }

    /**
     * The index-only scan's heap fetches ({@code Heap Fetches}: entries whose heap block the
     * visibility map did not mark all-visible); 0 for other scans and for a plan that did not run.
     * @since 1.6.0
     */
    public long heapFetches() {
        return property("Heap Fetches");
    }

    /** The read-stream figures of the scan node (the first node that has them). */
    public StreamFigures stream() {
        PlanNode n = plan;
        while (n != null) {
            if (n.stream() != null) {
                return n.stream();
            }
            n = n.children().isEmpty() ? null : n.children().get(0);
        }
        return StreamFigures.NONE;
    }

    /**
     * The plan in PostgreSQL's layout ({@code format = "text"}) or as JSON ({@code "json"}).
     * Without {@code analyze} only the plan's shape is shown, as EXPLAIN without ANALYZE does.
     */
    public String explain(boolean analyze, boolean buffers, boolean io, String format) {
        StringBuilder b = new StringBuilder();
        switch (format.toLowerCase(Locale.ROOT)) {
            case "text" -> {
                plan.text(b, 0, analyze, buffers, trackIoTiming, io);
                if (analyze) {
                    b.append(String.format(Locale.ROOT, "Execution Time: %.3f ms", executionNanos / 1e6)).append('\n');
                }
            }
            case "json" -> {
                b.append("[\n  {\n    \"Plan\": ");
                plan.json(b, "    ", analyze, buffers, trackIoTiming, io);
                if (analyze) {
                    b.append(String.format(Locale.ROOT, ",\n    \"Execution Time\": %.3f", executionNanos / 1e6));
                }
                b.append("\n  }\n]\n");
            }
            default -> throw new IllegalArgumentException("unknown format '" + format + "': use text or json");
        }
        return b.toString().stripTrailing();
    }

    /** One line: what ran, the answer, the time. */
    public String summary() {
        String what = switch (request.kind()) {
            case CHECKSUMS -> String.format(Locale.ROOT, "%,d blocks checked, %d bad", count, badBlocks.size());
            case INDEX -> String.format(Locale.ROOT, "count=%d sum(length)=%d", count, sumLength);
            case LIMIT -> String.format(Locale.ROOT, "%d rows", rows);
            case IOS -> String.format(Locale.ROOT, "count=%d heap_fetches=%d", count, heapFetches());
            default -> String.format(Locale.ROOT, "count=%d", count);
        };
        return String.format(Locale.ROOT, "%s %s: %s in %.3f ms (shared hit=%d read=%d)", request.kind().word(), request.table(),
                what, executionNanos / 1e6, sharedHit(), sharedRead());
    }
}
