/**
 * The AIO core and the I/O-method SPI, structured as PostgreSQL's {@code storage/aio}.
 *
 * <ul>
 *   <li>{@link org.pageio.api.AioContext}: one per buffer pool (PostgreSQL's {@code PgAioCtl}); owns
 *       every handle, preallocated, and the method that executes them.</li>
 *   <li>{@link org.pageio.api.IoSession}: one thread's I/O context (a PostgreSQL "backend") with its
 *       own fixed set of handles, staged batch and in-flight list.</li>
 *   <li>{@link org.pageio.api.IoHandle}: one I/O, its state machine, generation, iovecs and
 *       completion callbacks.</li>
 *   <li>{@link org.pageio.api.IoMethod}: what a method bundle implements;
 *       {@link org.pageio.api.ForwardingIoMethod} the base for decorators of another method.</li>
 * </ul>
 *
 * See the bundle's README.md for the invariants: who may change a handle's state, which thread
 * runs which callback, and the memory ordering of the state word.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.8.0")
package org.pageio.api;
