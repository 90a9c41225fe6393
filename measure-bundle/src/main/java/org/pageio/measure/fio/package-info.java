/**
 * The one fio runner of the drill and the benchmarks: {@link org.pageio.measure.fio.FioJob} builds a
 * job (sequential or random reads, buffered or O_DIRECT, at a depth, through io_uring, libaio or
 * psync; an iolog replay of given blocks in order; a sequential write), {@link org.pageio.measure.fio.Fio}
 * runs it with {@code --output-format=json} and {@link org.pageio.measure.fio.FioResult} reads fio's
 * own figures from that output. A missing or failing fio is one {@link org.pageio.measure.fio.FioException}
 * line: what failed, the command, the tail of fio's stderr.
 *
 * <p>Exported so that the benchmarks ({@code bench/}, plain class path) and any bundle that
 * measures use the same runner.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.1.0")
package org.pageio.measure.fio;
