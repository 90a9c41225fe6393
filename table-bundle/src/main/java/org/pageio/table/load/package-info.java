/** The bulk loader: pages built off-heap from a generator, written in large combined writes. Private. */
package org.pageio.table.load;
