/** Transaction ids, the commit log and snapshots: PostgreSQL's varsup.c, clog.c and heapam_visibility.c reduced to pageio's needs. */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package org.pageio.heap.xact;
