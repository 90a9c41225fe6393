/**
 * The one cold-cache helper of the drill and the benchmarks: {@link org.pageio.measure.cache.ColdCache}
 * evicts files from the OS page cache ({@code fdatasync}, {@code posix_fadvise(DONTNEED)}) and proves
 * them 0% resident with {@code mincore}, reporting per file what stayed
 * ({@link org.pageio.measure.cache.CacheState}); it also reads files in and measures residency.
 *
 * <p>Exported so that the benchmarks ({@code bench/}, plain class path) and any bundle that
 * measures use the same helper.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package org.pageio.measure.cache;
