/**
 * PostgreSQL's heap, as far as pageio's tables need it (its access/heap and access/transam): the
 * heap page and tuple layout ({@link org.pageio.heap.HeapPage}), single page reads through the
 * buffer manager ({@link org.pageio.heap.PageReads}), the visibility map ({@code vm}) and
 * transaction status ({@code xact}). The table bundle builds tables, indexes and scans on it.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.1.0")
package org.pageio.heap;
