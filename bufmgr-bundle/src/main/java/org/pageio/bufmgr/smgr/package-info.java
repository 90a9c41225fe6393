/**
 * The storage manager: relation files in 8 KiB blocks and segments, tablespaces, starting reads,
 * and bulk writes of new relations around the buffer pool.
 *
 * <p>1.3.0: {@link org.pageio.bufmgr.smgr.SmgrRelation#bulkWriter} and
 * {@link org.pageio.bufmgr.smgr.SmgrBulkWriter}: synchronous writes of whole runs of pages at
 * block offsets across segment files, with {@code O_DIRECT}, preallocation ({@code fallocate}) and
 * early write-back ({@code sync_file_range}) as options, and a durable finish (an fsync of every
 * segment written). The table loader's direct and buffered sinks write through it.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.4.0")
package org.pageio.bufmgr.smgr;
