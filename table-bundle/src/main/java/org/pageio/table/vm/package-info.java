/** The visibility map: PostgreSQL's visibilitymap.c layout in a relation's vm fork, through the buffer manager. Private. */
package org.pageio.table.vm;
