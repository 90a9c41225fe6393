/**
 * Tables on the buffer manager: the heap page and tuple layout ({@link org.pageio.table.HeapPage}),
 * table shapes and their generators ({@link org.pageio.table.TableShape}), the
 * {@link org.pageio.table.TableService} (load, index, scan, verify) and the EXPLAIN-style
 * {@link org.pageio.table.ScanReport}. See the bundle's README.md for the byte diagrams.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.4.0")
package org.pageio.table;
