/** {@code stat_io}: I/O counters by session kind, object and context. */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.1.0")
package org.pageio.bufmgr.stats;
