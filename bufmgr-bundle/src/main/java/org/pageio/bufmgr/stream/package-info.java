/**
 * Read streams: look-ahead and I/O combining over the buffer manager's two-phase reads.
 *
 * <p>3.2.0: {@link org.pageio.bufmgr.stream.ReadStream.Options#fastPath()}, the all-cached fast path
 * switched off for one stream;
 * {@link org.pageio.bufmgr.stream.ReadStream#STRICT}, a stream that reads pages as they
 * are stored whatever {@code zero_damaged_pages} and {@code ignore_checksum_failure} say.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("3.2.0")
package org.pageio.bufmgr.stream;
