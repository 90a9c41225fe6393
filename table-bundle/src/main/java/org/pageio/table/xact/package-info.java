/** Transaction ids, the commit log and snapshots: PostgreSQL's varsup.c, clog.c and heapam_visibility.c reduced to pageio's needs. Private. */
package org.pageio.table.xact;
