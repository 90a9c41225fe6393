/**
 * Linux libc through {@code java.lang.foreign}: the few system calls pageio needs, without JNI.
 *
 * <p>{@link org.pageio.posix.Posix} holds the calls. Its raw hot-path calls return the result or
 * {@code -errno}, never throw and never allocate; they report errno through a per-thread
 * {@link org.pageio.posix.CallState}. Its convenience calls throw
 * {@link org.pageio.posix.PosixException}. The constant classes hold Linux values for the running
 * architecture (x86_64 or aarch64, glibc).
 *
 * <p>Every static function in this package is thread-safe; a {@code CallState} is confined to the
 * thread that uses it. Callers must be granted native access
 * ({@code --enable-native-access=ALL-UNNAMED} for OSGi bundles and class-path code).
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.4.0")
package org.pageio.posix;
