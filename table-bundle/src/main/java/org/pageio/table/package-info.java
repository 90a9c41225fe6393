/**
 * Tables on the buffer manager (heap pages, the visibility map and transaction status are the heap
 * bundle's, {@code org.pageio.heap}): table shapes and their generators ({@link org.pageio.table.TableShape}), the
 * {@link org.pageio.table.TableService} (load, index, scan, verify) and the EXPLAIN-style
 * {@link org.pageio.table.ScanReport}. See the bundle's README.md for the byte diagrams.
 *
 * <p>1.5.0: {@link org.pageio.table.TableService#visibilityMapSummary} and
 * {@link org.pageio.table.VisibilityMapSummary} ({@code pg_visibility_map_summary}).
 *
 * <p>1.6.0: indexes on two integer columns ({@link org.pageio.table.IndexInfo#columns},
 * {@link org.pageio.table.TableInfo#index(java.util.List)}) and the index-only scan
 * ({@link org.pageio.table.ScanKind#IOS}, {@link org.pageio.table.ScanRequest#indexOnly},
 * {@link org.pageio.table.ScanReport#heapFetches}), the commands that change rows
 * ({@link org.pageio.table.TableService#delete}, {@link org.pageio.table.TableService#update},
 * {@link org.pageio.table.RowFilter}, {@link org.pageio.table.SetClause}) and their row counts
 * ({@link org.pageio.table.TableService#tupleStats}, {@link org.pageio.table.TupleStats}).
 *
 * <p>2.0.0: {@code HeapPage} moved to the heap bundle ({@code org.pageio.heap.HeapPage}).
 *
 * <p>2.1.0: {@code scan_sets_visibility_map} ({@link org.pageio.table.ScanSettings#scanSetsVisibilityMap}) and
 * what on-access pruning did ({@link org.pageio.table.ScanReport#pagesPruned},
 * {@link org.pageio.table.ScanReport#pagesSetAllVisible}).
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("2.1.0")
package org.pageio.table;

import org.pageio.heap.HeapPage;
