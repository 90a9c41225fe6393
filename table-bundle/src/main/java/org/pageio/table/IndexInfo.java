package org.pageio.table;

/**
 * An ordered index on one integer column. Immutable.
 *
 * @param name      {@code <table>_<column>_idx}
 * @param column    the indexed column
 * @param relNumber the index relation's number
 * @param entries   index entries (= rows of the table when built)
 * @param blocks    index blocks (metapage included)
 * @param height    levels below the root, 0 when the root is a leaf
 */
public record IndexInfo(String name, String column, long relNumber, long entries, long blocks, int height) {
}
