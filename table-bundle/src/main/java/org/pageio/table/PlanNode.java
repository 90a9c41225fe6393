package org.pageio.table;

import java.util.List;
import java.util.Locale;

/**
 * One node of an EXPLAIN tree, rendered in PostgreSQL's text layout or as JSON. Immutable.
 *
 * @param nodeType     "Seq Scan", "Aggregate", …
 * @param on           " on t", " using t_val_idx on t" or ""
 * @param startupNanos time to the first row
 * @param totalNanos   time to the last row
 * @param rows         rows returned
 * @param properties   extra lines, name then value ("Filter", "(pad ~~ '%zzz%'::text)")
 * @param sharedHit    buffers found, this node and its children
 * @param sharedRead   buffers read, this node and its children
 * @param ioReadNanos  time waiting for reads, this node and its children
 * @param stream       the node's own read-stream figures, or null
 * @param children     child nodes
 */
public record PlanNode(String nodeType, String on, long startupNanos, long totalNanos, double rows,
        List<String[]> properties, long sharedHit, long sharedRead, long ioReadNanos, StreamFigures stream,
        List<PlanNode> children) {

    void text(StringBuilder b, int depth, boolean analyze, boolean buffers, boolean timing, boolean io) {
        String pad = depth == 0 ? "" : " ".repeat(6 * (depth - 1) + 2) + "->  ";
        String detail = depth == 0 ? "  " : " ".repeat(6 * depth + 2);
        b.append(pad).append(nodeType).append(on);
        if (analyze) {
            b.append(String.format(Locale.ROOT, " (actual time=%.3f..%.3f rows=%.2f loops=1)", startupNanos / 1e6,
                    totalNanos / 1e6, rows));
        }
        b.append('\n');
        for (String[] p : properties) {
            if (analyze || !p[0].startsWith("Rows Removed") && !p[0].startsWith("Heap Blocks") && !p[0].startsWith("Bad")
                    && !p[0].startsWith("Blocks Checked") && !p[0].startsWith("Heap Fetches")) {
                b.append(detail).append(p[0]).append(": ").append(p[1]).append('\n');
            }
        }
        if (analyze && buffers && (sharedHit > 0 || sharedRead > 0)) {
            b.append(detail).append("Buffers: shared");
            if (sharedHit > 0) {
                b.append(" hit=").append(sharedHit);
            }
            if (sharedRead > 0) {
                b.append(" read=").append(sharedRead);
            }
            b.append('\n');
        }
        if (analyze && buffers && timing && sharedRead > 0) {
            b.append(detail).append(String.format(Locale.ROOT, "I/O Timings: shared read=%.3f", ioReadNanos / 1e6)).append('\n');
        }
        if (analyze && io && stream != null) {
            b.append(detail).append(stream.prefetchLine()).append('\n');
            if (stream.ioCount() > 0) {
                b.append(detail).append(stream.ioLine()).append('\n');
            }
        }
        for (PlanNode c : children) {
            c.text(b, depth + 1, analyze, buffers, timing, io);
        }
    }

    void json(StringBuilder b, String indent, boolean analyze, boolean buffers, boolean timing, boolean io) {
        String in = indent + "  ";
        b.append("{\n");
        b.append(in).append("\"Node Type\": ").append(quote(nodeType));
        if (on.startsWith(" using ")) {
            String rest = on.substring(7);
            int sp = rest.indexOf(" on ");
            b.append(",\n").append(in).append("\"Index Name\": ").append(quote(rest.substring(0, sp)));
            b.append(",\n").append(in).append("\"Relation Name\": ").append(quote(rest.substring(sp + 4)));
        } else if (on.startsWith(" on ")) {
            b.append(",\n").append(in).append("\"Relation Name\": ").append(quote(on.substring(4)));
        }
        if (analyze) {
            b.append(String.format(Locale.ROOT, ",\n%s\"Actual Startup Time\": %.3f,\n%s\"Actual Total Time\": %.3f,\n"
                    + "%s\"Actual Rows\": %.2f,\n%s\"Actual Loops\": 1", in, startupNanos / 1e6, in, totalNanos / 1e6, in, rows, in));
        }
        for (String[] p : properties) {
            b.append(",\n").append(in).append(quote(p[0])).append(": ").append(jsonValue(p[1]));
        }
        if (analyze && buffers) {
            b.append(",\n").append(in).append("\"Shared Hit Blocks\": ").append(sharedHit);
            b.append(",\n").append(in).append("\"Shared Read Blocks\": ").append(sharedRead);
            if (timing) {
                b.append(String.format(Locale.ROOT, ",\n%s\"Shared I/O Read Time\": %.3f", in, ioReadNanos / 1e6));
            }
        }
        if (analyze && io && stream != null) {
            b.append(String.format(Locale.ROOT, ",\n%s\"Average Prefetch Distance\": %.2f,\n%s\"Max Prefetch Distance\": %d,\n"
                    + "%s\"Prefetch Capacity\": %d,\n%s\"I/O Count\": %d,\n%s\"I/O Waits\": %d,\n%s\"Average I/O Size\": %.2f,\n"
                    + "%s\"Average I/Os In Progress\": %.2f", in, stream.avgPrefetch(), in, stream.maxPrefetch(), in,
                    stream.capacity(), in, stream.ioCount(), in, stream.waits(), in, stream.avgIoSize(), in, stream.avgInProgress()));
        }
        if (!children.isEmpty()) {
            b.append(",\n").append(in).append("\"Plans\": [\n");
            for (int i = 0; i < children.size(); i++) {
                b.append(in).append("  ");
                children.get(i).json(b, in + "  ", analyze, buffers, timing, io);
                b.append(i + 1 < children.size() ? ",\n" : "\n");
            }
            b.append(in).append("]");
        }
        b.append('\n').append(indent).append('}');
    }

    private static String jsonValue(String v) {
        if (v.matches("-?[0-9]+")) {
            return v;
        }
        return quote(v);
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
