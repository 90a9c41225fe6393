/**
 * The storage manager: relation files in 8 KiB blocks and segments, tablespaces, starting reads,
 * and bulk writes of new relations around the buffer pool.
 *
 * <p>1.3.0: {@link org.pageio.bufmgr.smgr.SmgrRelation#bulkWriter} and
 * {@link org.pageio.bufmgr.smgr.SmgrBulkWriter}: synchronous writes of whole runs of pages at
 * block offsets across segment files, with {@code O_DIRECT}, preallocation ({@code fallocate}) and
 * early write-back ({@code sync_file_range}) as options, and a durable finish (an fsync of every
 * segment written). The table loader's direct and buffered sinks write through it.
 *
 * <p>1.5.0: relation forks, PostgreSQL's {@link org.pageio.bufmgr.smgr.ForkNumber}: a fork is an
 * {@link org.pageio.bufmgr.smgr.SmgrRelation} of its own
 * ({@link org.pageio.bufmgr.smgr.StorageManager#open(org.pageio.bufmgr.smgr.RelFileLocator, org.pageio.bufmgr.smgr.ForkNumber)},
 * {@link org.pageio.bufmgr.smgr.SmgrRelation#fork}), files {@code <relNumber>_vm}, …; unlinking the
 * main fork removes every fork.
 *
 * <p>1.6.0: read-only storage managers
 * ({@link org.pageio.bufmgr.smgr.StorageManager#readOnly}: files opened {@code O_RDONLY}, nothing
 * created or changed) with a {@link org.pageio.bufmgr.smgr.ReadVerification} that says what a read
 * completion checks on their pages; {@link org.pageio.bufmgr.smgr.ForkNumber#INIT_FORKNUM} and
 * {@link org.pageio.bufmgr.smgr.ForkNumber#byName}; so that a PostgreSQL cluster's files are read
 * through a buffer pool.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.6.0")
package org.pageio.bufmgr.smgr;
