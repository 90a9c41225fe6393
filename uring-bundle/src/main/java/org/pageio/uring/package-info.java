/**
 * io_uring through raw system calls and {@code java.lang.foreign}: no liburing, no JNI.
 *
 * <ul>
 *   <li>{@link org.pageio.uring.IoUring}: one ring (setup, mapped SQ/CQ rings and SQE array,
 *       submission of {@link org.pageio.api.IoHandle}s by the owner thread, reaping by any thread
 *       under the ring's completion lock, close) and the availability probe.</li>
 *   <li>{@link org.pageio.uring.IoUringProbe}: what the probe found, as data.</li>
 *   <li>{@link org.pageio.uring.IoUringCounters}: what a ring counted (submissions, waits, polls,
 *       the depth kept at submission), one ring's or several added up; 1.4.0.</li>
 *   <li>{@link org.pageio.uring.IoUringException}: a ring could not be set up or torn down,
 *       with the errno by name and the fix.</li>
 * </ul>
 *
 * Exported so that other I/O methods (direct I/O) reuse the same ring; the {@code io_uring}
 * method itself lives in a private package of this bundle. See the bundle's README.md for the
 * invariants and the memory ordering of every ring index.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.4.0")
package org.pageio.uring;
