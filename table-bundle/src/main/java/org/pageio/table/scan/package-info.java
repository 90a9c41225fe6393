/** The scans: sequential, bitmap heap, index, LIMIT and the checksum scan, each reading through read streams. Private. */
package org.pageio.table.scan;
