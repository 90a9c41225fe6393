/**
 * Transaction ids, the commit log, snapshots and the horizon: PostgreSQL's varsup.c, clog.c,
 * heapam_visibility.c ({@code HeapTupleSatisfiesMVCC}, {@code HeapTupleSatisfiesVacuum}) and the
 * oldest xmin of procarray.c reduced to pageio's needs.
 *
 * <p>1.1.0: snapshots are registered until closed ({@link org.pageio.heap.xact.Snapshot#close},
 * {@link org.pageio.heap.xact.Snapshot#xmin}), {@link org.pageio.heap.xact.Transactions#oldestXmin}
 * and {@link org.pageio.heap.xact.VacuumCutoffs}.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.1.0")
package org.pageio.heap.xact;
