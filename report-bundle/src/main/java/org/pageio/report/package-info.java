/**
 * The tables pageio shows ({@link org.pageio.report.TextTable}), written as aligned text or as JSON\n * ({@link org.pageio.report.Json}), and the views of the buffer manager's counters\n * ({@link org.pageio.report.StatViews}: {@code pg_stat_io}, {@code pg_aios}).
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.1.0")
package org.pageio.report;
