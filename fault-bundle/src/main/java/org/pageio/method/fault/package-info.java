/**
 * A fault-injecting I/O method decorator for tests: wraps a real method and spoils the I/Os a
 * {@link org.pageio.method.fault.FaultPlan} matches.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.2.0")
package org.pageio.method.fault;
