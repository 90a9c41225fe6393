package org.pageio.report;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A small table for Gogo command output: a header, rows of values, per-column alignment, rendered
 * as aligned text ({@link #toString()}) or as JSON ({@link #toJson()}).
 *
 * <p>Cells keep their values: text renders {@code null} as empty, {@link Boolean} as
 * {@code yes}/{@code no} and everything else with {@link String#valueOf}; JSON keeps numbers and
 * booleans unquoted, {@code null} as {@code null}, and quotes the rest. JSON keys are the header
 * names, lower-cased, with runs of other characters than letters and digits replaced by {@code _}.
 *
 * <pre>{@code
 * TextTable t = new TextTable("method", "available", "cause");
 * t.align(2, TextTable.Align.LEFT).row("sync", true, null);
 * return json ? t.toJson() : t.toString();
 * }</pre>
 *
 * Not thread-safe: build it, render it, drop it.
 */
public final class TextTable {

    /** Column alignment in the text rendering. */
    public enum Align { LEFT, RIGHT }

    private static final String SEPARATOR = " | ";

    private final List<String> header;
    private final Align[] align;
    private final List<Object[]> rows = new ArrayList<>();

    /** A table with these column names; every column is left-aligned until {@link #align} says otherwise. */
    public TextTable(String... header) {
        if (header.length == 0) {
            throw new IllegalArgumentException("a table needs at least one column");
        }
        this.header = List.of(header);
        this.align = new Align[header.length];
        Arrays.fill(this.align, Align.LEFT);
    }

    /** Sets the alignment of column {@code column} (0-based). */
    public TextTable align(int column, Align alignment) {
        align[column] = alignment;
        return this;
    }

    /** Right-aligns the given columns (numbers). */
    public TextTable alignRight(int... columns) {
        for (int c : columns) {
            align[c] = Align.RIGHT;
        }
        return this;
    }

    /** Adds a row; it must have exactly one value per column. */
    public TextTable row(Object... values) {
        if (values.length != header.size()) {
            throw new IllegalArgumentException("row has " + values.length + " values, table has "
                    + header.size() + " columns");
        }
        rows.add(values.clone());
        return this;
    }

    public List<String> header() {
        return header;
    }

    /** The rows as added (the Web Console plugin renders them as HTML). */
    public List<Object[]> rows() {
        return java.util.Collections.unmodifiableList(rows);
    }

    public int rowCount() {
        return rows.size();
    }

    /** The cell as the text rendering shows it. */
    public static String text(Object value) {
        if (value == null) {
            return "";
        }
        if (value instanceof Boolean b) {
            return b ? "yes" : "no";
        }
        return String.valueOf(value);
    }

    /** Aligned text: header, a rule, one line per row, columns separated by {@code " | "}; no trailing blanks. */
    @Override
    public String toString() {
        int n = header.size();
        int[] width = new int[n];
        for (int c = 0; c < n; c++) {
            width[c] = header.get(c).length();
        }
        List<String[]> cells = new ArrayList<>(rows.size());
        for (Object[] row : rows) {
            String[] line = new String[n];
            for (int c = 0; c < n; c++) {
                line[c] = oneLine(text(row[c]));
                width[c] = Math.max(width[c], line[c].length());
            }
            cells.add(line);
        }
        StringBuilder sb = new StringBuilder();
        appendLine(sb, header.toArray(String[]::new), width);
        for (int c = 0; c < n; c++) {
            if (c > 0) {
                sb.append("-+-");
            }
            sb.append("-".repeat(width[c]));
        }
        sb.append('\n');
        for (String[] line : cells) {
            appendLine(sb, line, width);
        }
        return sb.toString();
    }

    /**
     * Aligned text as {@link #toString()} gives it, with the cells of {@code column} longer than
     * {@code width} characters shortened to fit, ending in a note mark ({@code seccomp blocks… (1)}),
     * and their whole text as numbered notes under the table ({@code (1) seccomp blocks …}), so that one
     * long cell does not widen every row. Equal texts share a note. JSON ({@link #toJson()}) keeps
     * every cell whole.
     */
    public String toString(int column, int width) {
        if (column < 0 || column >= header.size()) {
            throw new IndexOutOfBoundsException("column " + column + " of a table of " + header.size());
        }
        java.util.Map<String, Integer> notes = new java.util.LinkedHashMap<>();
        TextTable shown = new TextTable(header.toArray(String[]::new));
        System.arraycopy(align, 0, shown.align, 0, align.length);
        for (Object[] row : rows) {
            Object[] copy = row.clone();
            String cell = oneLine(text(row[column]));
            if (cell.length() > width) {
                int n = notes.computeIfAbsent(cell, k -> notes.size() + 1);
                String mark = "… (" + n + ")";
                int cut = Math.max(0, width - mark.length());
                int blank = cell.lastIndexOf(' ', cut);
                if (blank > cut / 2) {
                    cut = blank; // at a word's end when that keeps most of the room
                }
                copy[column] = cell.substring(0, cut).stripTrailing() + mark;
            }
            shown.rows.add(copy);
        }
        StringBuilder sb = new StringBuilder(shown.toString());
        notes.forEach((text, n) -> sb.append('(').append(n).append(") ").append(text).append('\n'));
        return sb.toString();
    }

    private void appendLine(StringBuilder sb, String[] line, int[] width) {
        int start = sb.length();
        for (int c = 0; c < line.length; c++) {
            if (c > 0) {
                sb.append(SEPARATOR);
            }
            String s = line[c];
            int pad = width[c] - s.length();
            if (align[c] == Align.RIGHT) {
                sb.append(" ".repeat(pad)).append(s);
            } else {
                sb.append(s).append(" ".repeat(pad));
            }
        }
        int end = sb.length();
        while (end > start && sb.charAt(end - 1) == ' ') {
            end--;
        }
        sb.setLength(end);
        sb.append('\n');
    }

    private static String oneLine(String s) {
        return s.indexOf('\n') < 0 && s.indexOf('\r') < 0 ? s : s.replace("\r\n", " ").replace('\n', ' ').replace('\r', ' ');
    }

    /** A JSON array with one object per row, keyed by {@link #jsonKey(String) header name}, followed by a newline. */
    public String toJson() {
        return Json.inline(this::writeJson);
    }

    /** Writes the table as {@link #toJson()} does, as the next value of {@code g} (a field's value, say). */
    public void writeJson(JsonGenerator g) throws IOException {
        String[] keys = header.stream().map(TextTable::jsonKey).toArray(String[]::new);
        g.writeStartArray();
        for (Object[] row : rows) {
            g.writeStartObject();
            for (int c = 0; c < keys.length; c++) {
                g.writeFieldName(keys[c]);
                jsonValue(g, row[c]);
            }
            g.writeEndObject();
        }
        g.writeEndArray();
    }

    /** {@code "Read bytes"} → {@code read_bytes}. */
    public static String jsonKey(String name) {
        String key = name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "_");
        key = key.replaceAll("^_+|_+$", "");
        return key.isEmpty() ? "_" : key;
    }

    private static void jsonValue(JsonGenerator g, Object v) throws IOException {
        if (v == null) {
            g.writeNull();
        } else if (v instanceof Boolean b) {
            g.writeBoolean(b);
        } else if (v instanceof Number num && isFinite(num)) {
            g.writeNumber(num.toString()); // as Java prints it: 8192, 1.5
        } else {
            g.writeString(String.valueOf(v));
        }
    }

    private static boolean isFinite(Number n) {
        if (n instanceof Double d) {
            return Double.isFinite(d);
        }
        if (n instanceof Float f) {
            return Float.isFinite(f);
        }
        return true;
    }
}
