/** VACUUM of a table: PostgreSQL's lazy vacuum ({@code vacuumlazy.c}) over pruning, the index bulk delete and the visibility map. Private. */
package org.pageio.table.vacuum;
