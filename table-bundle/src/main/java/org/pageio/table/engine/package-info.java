/** The table service's implementation over a buffer pool and storage manager (usable without OSGi, e.g. in tests and benchmarks). Private. */
package org.pageio.table.engine;
