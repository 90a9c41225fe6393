/**
 * {@code stat_io}: I/O counters by session kind, object, context and I/O method.
 *
 * <p>2.0.0: rows are keyed by the I/O method too ({@link org.pageio.bufmgr.stats.StatIo#method},
 * {@link org.pageio.bufmgr.stats.StatIo.Row#ioMethod}): {@link org.pageio.bufmgr.stats.StatIo#base}
 * takes the method slot first. Each row carries its {@code stats_reset}
 * ({@link org.pageio.bufmgr.stats.StatIo.Row#statsReset}, printed by
 * {@link org.pageio.bufmgr.stats.StatIo#timestamptz}); {@link org.pageio.bufmgr.stats.StatIo#reset()}
 * returns its time and {@code reset(object, context)} resets
 * one object or context. {@code resetAtMillis()} gave way to
 * {@link org.pageio.bufmgr.stats.StatIo#lastReset}.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("2.0.0")
package org.pageio.bufmgr.stats;
