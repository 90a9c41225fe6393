/** The visibility map: PostgreSQL's visibilitymap.c layout in a relation's vm fork, through the buffer manager. */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package org.pageio.heap.vm;
