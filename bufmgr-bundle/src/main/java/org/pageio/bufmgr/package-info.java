/**
 * The buffer manager: the shared buffer pool ({@link org.pageio.bufmgr.BufferPool}), one thread's
 * access to it with two-phase reads ({@link org.pageio.bufmgr.BufferSession}), access-strategy
 * rings, settings with PostgreSQL's names, and the {@link org.pageio.bufmgr.BufferManager}
 * service. See the bundle's README.md for the state word, who may change it, and lock order.
 *
 * <p>2.1: {@link org.pageio.bufmgr.SharedMemory}, the memory a pool may map on this machine and the
 * refusal of a {@code shared_buffers} above it.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("2.0.0")
package org.pageio.bufmgr;
