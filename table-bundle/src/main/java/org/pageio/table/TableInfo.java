package org.pageio.table;

import java.util.List;

/**
 * A table in the catalog. Immutable.
 *
 * @param name      {@code [a-z_][a-z0-9_]*}, at most 63 characters; never a path
 * @param relNumber the heap relation's number (its file name under {@code <data>/base})
 * @param shape     the generator spec it was loaded from
 * @param rows      rows loaded
 * @param seed      the generator's seed
 * @param blocks    heap blocks
 * @param indexes   its indexes
 */
public record TableInfo(String name, long relNumber, TableShape shape, long rows, long seed, long blocks,
        List<IndexInfo> indexes) {

    public TableInfo {
        indexes = List.copyOf(indexes);
    }

    /** The one-column index on {@code column}, or null (an index on two columns is not one on its first). */
    public IndexInfo index(String column) {
        return index(List.of(column));
    }

    /** The index whose key columns are exactly {@code columns}, in that order, or null. */
    public IndexInfo index(List<String> columns) {
        for (IndexInfo i : indexes) {
            if (i.columns().equals(columns)) {
                return i;
            }
        }
        return null;
    }
}
