package org.pageio.table;

/** Column types, with PostgreSQL's names, widths and alignments. */
public enum ColumnType {
    /** {@code int}: 4 bytes, aligned to 4. */
    INT4("int", 4, 4),
    /** {@code bigint}: 8 bytes, aligned to 8. */
    INT8("bigint", 8, 8),
    /** {@code text}: a 4-byte varlena header ({@code total_len << 2}) then the bytes; aligned to 4. */
    TEXT("text", -1, 4);

    private final String sqlName;
    private final int width;
    private final int align;

    ColumnType(String sqlName, int width, int align) {
        this.sqlName = sqlName;
        this.width = width;
        this.align = align;
    }

    public String sqlName() {
        return sqlName;
    }

    /** Bytes of a value, -1 for text (variable). */
    public int width() {
        return width;
    }

    public int align() {
        return align;
    }

    public boolean isInteger() {
        return this != TEXT;
    }
}
