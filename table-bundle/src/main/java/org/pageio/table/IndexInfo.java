package org.pageio.table;

import java.util.List;

/**
 * An ordered index on one integer column, or on two compared lexicographically. Immutable.
 *
 * @param name      {@code <table>_<column>_idx}, {@code <table>_<column1>_<column2>_idx} for two
 * @param column    the indexed column (the first one of two)
 * @param relNumber the index relation's number
 * @param entries   index entries (= rows of the table when built)
 * @param blocks    index blocks (metapage included)
 * @param height    levels below the root, 0 when the root is a leaf
 * @param columns   the key columns in key order, one or two (since 1.6.0)
 */
public record IndexInfo(String name, String column, long relNumber, long entries, long blocks, int height,
        List<String> columns) {

    public IndexInfo {
        columns = columns == null || columns.isEmpty() ? List.of(column) : List.copyOf(columns);
        if (!columns.get(0).equals(column)) {
            throw new IllegalArgumentException("index " + name + ": column " + column + " is not its first key column "
                    + columns);
        }
    }

    /** A one-column index. */
    public IndexInfo(String name, String column, long relNumber, long entries, long blocks, int height) {
        this(name, column, relNumber, entries, blocks, height, List.of(column));
    }

    /** The key columns as PostgreSQL's {@code \d} shows them: {@code (cat, val)}. */
    public String columnList() {
        return "(" + String.join(", ", columns) + ")";
    }
}
