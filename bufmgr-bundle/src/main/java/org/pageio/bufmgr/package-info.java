/**
 * The buffer manager: the shared buffer pool ({@link org.pageio.bufmgr.BufferPool}), one thread's
 * access to it with two-phase reads ({@link org.pageio.bufmgr.BufferSession}), access-strategy
 * rings, settings with PostgreSQL's names, and the {@link org.pageio.bufmgr.BufferManager}
 * service. See the bundle's README.md for the state word, who may change it, and lock order.
 *
 * <p>2.1.0: {@link org.pageio.bufmgr.SharedMemory}, the memory a pool may map on this machine and the
 * refusal of a {@code shared_buffers} above it;
 * {@link org.pageio.bufmgr.BufferManagerCore#swapMethod} and
 * {@link org.pageio.bufmgr.BufferManagerCore#retireMethod}: a live swap that switches the storage
 * manager's O_DIRECT mode in the order a method that bypasses the page cache needs.
 *
 * <p>2.2.0: {@link org.pageio.bufmgr.BufferPool#summary()} ({@code pg_buffercache_summary()}) and
 * {@link org.pageio.bufmgr.BufferPool#checksumFailures()},
 * {@link org.pageio.bufmgr.BufferPool#streamTotals()} (what the read streams that ended did; a
 * stream adds its counts through {@link org.pageio.bufmgr.StreamingReads#streamTotals()}).
 *
 * <p>2.3.0: {@link org.pageio.bufmgr.BufMgrSettings#readStreamPolicy()} ({@code read_stream_policy}):
 * PostgreSQL's look-ahead alone, or with pageio's look-ahead policies.
 *
 * <p>2.4.0: {@link org.pageio.bufmgr.BufferSession#conditionalLockForCleanup} (PostgreSQL's
 * {@code ConditionalLockBufferForCleanup}): the content lock of a buffer only its taker pins, no
 * new pin until it is released; {@link org.pageio.bufmgr.BufferSession#flushBuffer}
 * ({@code FlushOneBuffer} and the fsync); {@link org.pageio.bufmgr.BufferPool#strategy(BufferAccessStrategy.Type, long)}
 * ({@code GetAccessStrategyWithSize}).
 *
 * <p>2.5.0: {@link org.pageio.bufmgr.ReadBuffersOperation#STRICT} and
 * {@link org.pageio.bufmgr.BufferSession#readBuffer(org.pageio.bufmgr.smgr.SmgrRelation, long, BufferAccessStrategy, int)}:
 * a read that sees a damaged page whatever {@code zero_damaged_pages} and
 * {@code ignore_checksum_failure} say, for verifications.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("2.5.0")
package org.pageio.bufmgr;
