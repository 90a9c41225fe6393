package org.pageio.table;

import org.pageio.heap.HeapPage;

/**
 * A column of a table shape: its name, type and byte offset inside the tuple (from the tuple's
 * start, so the first column is at {@link HeapPage#TUPLE_HEADER_SIZE}). For text, the offset is
 * that of its varlena header. Immutable.
 */
public record Column(String name, ColumnType type, int offset) {
}
