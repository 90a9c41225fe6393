package org.pageio.table;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Locale;
import org.pageio.heap.HeapPage;

/**
 * The generator specs the loader knows: the cold-scan drill's table {@code t} and PostgreSQL 19's read-stream test table {@code prefetch_test}. Every value is a pure function
 * of (seed, row number, column), so a test can compute any query's answer independently of the
 * pages, and a row's place is known: row {@code g} (1-based) lives in block
 * {@code (g - 1) / rowsPerPage()} at line {@code (g - 1) % rowsPerPage() + 1}.
 *
 * <ul>
 *   <li>{@link #T}: {@code t (id bigint, pad text)}, {@code id = g}, {@code pad = repeat('x', 200)};
 *       tuple 24 + 8 + 4 + 200 = 236 bytes (240 aligned), 33 rows per page: 8,000,000 rows =
 *       242,425 blocks, 1.9 GB.</li>
 *   <li>{@link #PREFETCH_TEST}: {@code prefetch_test (id int, cat int, val int, payload text)},
 *       {@code id = g}, {@code cat} uniform in 0..100, {@code val} uniform in 0..50000,
 *       {@code payload} = 128 lowercase hex characters (a 32-character hash of g repeated four
 *       times, like {@code repeat(md5(g::text), 4)}); tuple 168 bytes, 47 rows per page.</li>
 * </ul>
 * Immutable; any thread.
 */
public enum TableShape {
    T("t", 8_000_000L, List.of(
            new Column("id", ColumnType.INT8, 24),
            new Column("pad", ColumnType.TEXT, 32)), 200),
    PREFETCH_TEST("prefetch_test", 2_000_000L, List.of(
            new Column("id", ColumnType.INT4, 24),
            new Column("cat", ColumnType.INT4, 28),
            new Column("val", ColumnType.INT4, 32),
            new Column("payload", ColumnType.TEXT, 36)), 128);

    private static final byte[] HEX = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private final String shapeName;
    private final long defaultRows;
    private final List<Column> columns;
    private final int textLength;
    private final int tupleLength;
    private final int rowsPerPage;

    TableShape(String shapeName, long defaultRows, List<Column> columns, int textLength) {
        this.shapeName = shapeName;
        this.defaultRows = defaultRows;
        this.columns = columns;
        this.textLength = textLength;
        Column last = columns.get(columns.size() - 1);
        this.tupleLength = last.offset() + 4 + textLength;
        int perTuple = org.pageio.bufmgr.page.Page.maxAlign(tupleLength) + HeapPage.LINE_POINTER_SIZE;
        this.rowsPerPage = (org.pageio.bufmgr.page.Page.SIZE - org.pageio.bufmgr.page.Page.HEADER_SIZE) / perTuple;
    }

    /** The shape called {@code name} ({@code t} or {@code prefetch_test}); fails naming both. */
    public static TableShape byName(String name) {
        for (TableShape s : values()) {
            if (s.shapeName.equals(name.toLowerCase(Locale.ROOT))) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown table shape \"" + name + "\": use t or prefetch_test");
    }

    public String shapeName() {
        return shapeName;
    }

    public long defaultRows() {
        return defaultRows;
    }

    public List<Column> columns() {
        return columns;
    }

    /** The column called {@code name}; fails naming the shape's columns. */
    public Column column(String name) {
        for (Column c : columns) {
            if (c.name().equals(name)) {
                return c;
            }
        }
        throw new IllegalArgumentException("table shape " + shapeName + " has no column \"" + name + "\"; columns: "
                + columns.stream().map(Column::name).toList());
    }

    public int columnIndex(Column c) {
        return columns.indexOf(c);
    }

    /** The text column (always the last). */
    public Column textColumn() {
        return columns.get(columns.size() - 1);
    }

    public int textLength() {
        return textLength;
    }

    /** Bytes of one tuple, header included, before MAXALIGN. */
    public int tupleLength() {
        return tupleLength;
    }

    public int rowsPerPage() {
        return rowsPerPage;
    }

    /** Heap blocks for {@code rows} rows. */
    public long blocksFor(long rows) {
        return (rows + rowsPerPage - 1) / rowsPerPage;
    }

    /** The SQL of the table, for messages and the catalog. */
    public String ddl(String table) {
        StringBuilder b = new StringBuilder(table).append(" (");
        for (int i = 0; i < columns.size(); i++) {
            b.append(i == 0 ? "" : ", ").append(columns.get(i).name()).append(' ').append(columns.get(i).type().sqlName());
        }
        return b.append(')').toString();
    }

    /** The value of integer column {@code column} (index in {@link #columns()}) of row {@code g}. */
    public long value(int column, long g, long seed) {
        if (column == 0) {
            return g;
        }
        return switch (this) {
            case T -> throw new IllegalArgumentException("column " + column + " of t is not an integer");
            case PREFETCH_TEST -> switch (column) {
                case 1 -> Long.remainderUnsigned(mix(seed, g, 1), 101);
                case 2 -> Long.remainderUnsigned(mix(seed, g, 2), 50_001);
                default -> throw new IllegalArgumentException("column " + column + " of prefetch_test is not an integer");
            };
        };
    }

    /** Whether every row has the same text ({@code t.pad}), so a page template can carry it. */
    public boolean constantText() {
        return this == T;
    }

    /** Byte {@code i} of row {@code g}'s text. */
    public byte textByte(long g, long seed, int i) {
        if (this == T) {
            return 'x';
        }
        int k = i & 31; // the 32-character hash, repeated
        long h = mix(seed, g, k < 16 ? 3 : 4);
        return HEX[(int) (h >>> ((k & 15) * 4)) & 0xF];
    }

    /** Writes row {@code g}'s text bytes at {@code at}. */
    public void writeText(MemorySegment page, long at, long g, long seed, MemorySegment xs) {
        if (this == T) {
            MemorySegment.copy(xs, 0, page, at, textLength);
            return;
        }
        long h1 = mix(seed, g, 3);
        long h2 = mix(seed, g, 4);
        // the 32 hex characters as four little-endian words, written once per repetition
        long w0 = hexWord(h1);
        long w1 = hexWord(h1 >>> 32);
        long w2 = hexWord(h2);
        long w3 = hexWord(h2 >>> 32);
        for (int rep = 0; rep < textLength; rep += 32) {
            page.set(LE_LONG, at + rep, w0);
            page.set(LE_LONG, at + rep + 8, w1);
            page.set(LE_LONG, at + rep + 16, w2);
            page.set(LE_LONG, at + rep + 24, w3);
        }
    }

    private static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

    /** The hex characters of the low 8 nibbles of {@code h} (nibble k → byte k), packed little-endian. */
    private static long hexWord(long h) {
        long w = 0;
        for (int k = 0; k < 8; k++) {
            w |= (long) (HEX[(int) (h >>> (k * 4)) & 0xF] & 0xFF) << (k * 8);
        }
        return w;
    }

    /** Whether row {@code g}'s text contains {@code pattern} (the independent LIKE computation). */
    public boolean textContains(long g, long seed, byte[] pattern) {
        outer:
        for (int i = 0; i + pattern.length <= textLength; i++) {
            for (int j = 0; j < pattern.length; j++) {
                if (textByte(g, seed, i + j) != pattern[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return pattern.length == 0;
    }

    /** SplitMix64 of (seed, row, column). */
    static long mix(long seed, long g, int column) {
        long z = seed * 0x9E3779B97F4A7C15L + g * 0xBF58476D1CE4E5B9L + column * 0x94D049BB133111EBL;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
