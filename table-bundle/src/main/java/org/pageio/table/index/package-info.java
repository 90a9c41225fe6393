/** The ordered index: page format, bottom-up build from sorted entries, and a cursor through the buffer manager. Private. */
package org.pageio.table.index;
