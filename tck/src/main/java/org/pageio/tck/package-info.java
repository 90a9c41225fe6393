/**
 * The method conformance kit: {@link org.pageio.tck.MethodConformanceKit}, every rule an
 * {@link org.pageio.api.IoMethod} must follow as JUnit 4 tests run inside Felix by Pax Exam;
 * {@link org.pageio.tck.MethodBundleKit}, the same against the service one method bundle
 * registers; {@link org.pageio.tck.KitContainer}, the container they run in;
 * {@link org.pageio.tck.InProcessMethodKit}, the same tests in process as JUnit 5 dynamic tests,
 * imitating what the container does; and the kit's helpers (known file content, a buffer manager
 * over a fault decorator).
 *
 * <p>A method bundle's build extends {@code MethodBundleKit} in a Failsafe test
 * ({@code README.md}, "Writing an I/O method"), and may extend {@code InProcessMethodKit} in a
 * unit test. The package is exported so that the test's probe bundle, inside the container, loads
 * these classes from the kit's bundle.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package org.pageio.tck;
