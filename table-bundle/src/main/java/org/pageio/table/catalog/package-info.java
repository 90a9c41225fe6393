/** The catalog file: table and index names to relation numbers, written atomically. Private. */
package org.pageio.table.catalog;
