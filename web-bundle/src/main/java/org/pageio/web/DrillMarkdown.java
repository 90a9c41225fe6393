package org.pageio.web;

import java.util.ArrayList;
import java.util.List;

/**
 * A drill result's Markdown ({@code drill-results/<timestamp>.md}, measure-bundle's {@code DrillReport})
 * as HTML for the page: pipe tables become tables styled like the page's others (right-aligned
 * columns, {@code ---:}, get the numeric class {@code n}), {@code #} headings headings, {@code - }
 * lines lists, other lines paragraphs; {@code `code`} spans become {@code <code>}. Everything else is
 * text, escaped: the file is read as data, never trusted as HTML.
 *
 * <p>Only what the drill writes is understood, not Markdown at large: a table is a run of lines that
 * start with {@code |}, its first row the header, the delimiter row after it optional. Each table is
 * wrapped in a {@code div.pageio-wide} so that, should its cells not wrap enough, it scrolls itself
 * instead of widening the page.
 */
final class DrillMarkdown {

    private DrillMarkdown() {
    }

    /** The HTML of {@code markdown}. */
    static String toHtml(String markdown) {
        StringBuilder out = new StringBuilder(markdown.length() * 2);
        List<String> lines = markdown.lines().toList();
        List<String> paragraph = new ArrayList<>();
        int i = 0;
        while (i < lines.size()) {
            String line = lines.get(i).strip();
            if (line.startsWith("|")) {
                flush(out, paragraph);
                int end = i;
                while (end < lines.size() && lines.get(end).strip().startsWith("|")) {
                    end++;
                }
                table(out, lines.subList(i, end));
                i = end;
                continue;
            }
            if (line.startsWith("- ") || line.startsWith("* ")) {
                flush(out, paragraph);
                out.append("<ul>");
                while (i < lines.size() && (lines.get(i).strip().startsWith("- ") || lines.get(i).strip().startsWith("* "))) {
                    out.append("<li>").append(inline(lines.get(i).strip().substring(2).strip())).append("</li>");
                    i++;
                }
                out.append("</ul>\n");
                continue;
            }
            int level = 0;
            while (level < line.length() && line.charAt(level) == '#') {
                level++;
            }
            if (level > 0 && level <= 4 && line.length() > level && line.charAt(level) == ' ') {
                flush(out, paragraph);
                int h = Math.min(level + 2, 6); // under the page's h2 "Last drill"
                out.append("<h").append(h).append('>').append(inline(line.substring(level + 1).strip())).append("</h")
                        .append(h).append(">\n");
            } else if (line.isEmpty()) {
                flush(out, paragraph);
            } else {
                paragraph.add(line);
            }
            i++;
        }
        flush(out, paragraph);
        return out.toString();
    }

    private static void flush(StringBuilder out, List<String> paragraph) {
        if (!paragraph.isEmpty()) {
            out.append("<p>").append(inline(String.join(" ", paragraph))).append("</p>\n");
            paragraph.clear();
        }
    }

    /** A pipe table: header row, optional delimiter row (its colons give the alignment), body rows. */
    private static void table(StringBuilder out, List<String> rows) {
        List<String> header = cells(rows.get(0));
        int body = 1;
        boolean[] right = new boolean[header.size()];
        if (rows.size() > 1 && isDelimiter(cells(rows.get(1)))) {
            List<String> d = cells(rows.get(1));
            for (int c = 0; c < right.length && c < d.size(); c++) {
                right[c] = d.get(c).endsWith(":") && !d.get(c).startsWith(":");
            }
            body = 2;
        }
        out.append("<div class='pageio-wide'><table class='nicetable'><thead><tr>");
        for (int c = 0; c < header.size(); c++) {
            out.append(right[c] ? "<th class='n'>" : "<th>").append(inline(header.get(c))).append("</th>");
        }
        out.append("</tr></thead><tbody>\n");
        for (String row : rows.subList(body, rows.size())) {
            out.append("<tr>");
            List<String> cells = cells(row);
            for (int c = 0; c < cells.size(); c++) {
                out.append(c < right.length && right[c] ? "<td class='n'>" : "<td>").append(inline(cells.get(c)))
                        .append("</td>");
            }
            out.append("</tr>\n");
        }
        out.append("</tbody></table></div>\n");
    }

    private static boolean isDelimiter(List<String> cells) {
        return !cells.isEmpty() && cells.stream().allMatch(c -> c.matches(":?-{3,}:?"));
    }

    /** The cells of {@code | a | b |}, stripped; {@code \|} is a pipe inside a cell. */
    static List<String> cells(String row) {
        String r = row.strip();
        if (r.startsWith("|")) {
            r = r.substring(1);
        }
        if (r.endsWith("|") && !r.endsWith("\\|")) {
            r = r.substring(0, r.length() - 1);
        }
        List<String> cells = new ArrayList<>();
        StringBuilder cell = new StringBuilder();
        for (int i = 0; i < r.length(); i++) {
            char c = r.charAt(i);
            if (c == '\\' && i + 1 < r.length() && r.charAt(i + 1) == '|') {
                cell.append('|');
                i++;
            } else if (c == '|') {
                cells.add(cell.toString().strip());
                cell.setLength(0);
            } else {
                cell.append(c);
            }
        }
        cells.add(cell.toString().strip());
        return cells;
    }

    /** Escaped text with {@code `code`} spans as {@code <code>}. */
    private static String inline(String text) {
        StringBuilder out = new StringBuilder(text.length() + 16);
        int i = 0;
        while (i < text.length()) {
            int open = text.indexOf('`', i);
            int close = open < 0 ? -1 : text.indexOf('`', open + 1);
            if (close < 0) {
                out.append(PageioPlugin.esc(text.substring(i)));
                break;
            }
            out.append(PageioPlugin.esc(text.substring(i, open))).append("<code>")
                    .append(PageioPlugin.esc(text.substring(open + 1, close))).append("</code>");
            i = close + 1;
        }
        return out.toString();
    }
}
