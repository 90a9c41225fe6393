/** The soak: reads and writes checked against a model while the I/O method is hot-swapped under faults. */
package org.pageio.soak;
