package org.example.pageio.ratelimit;

import org.pageio.tck.MethodBundleKit;

/**
 * {@code io_method=ratelimit} passes pageio's method conformance kit: every test of
 * {@code org.pageio.tck.MethodConformanceKit}, in a Felix container with pageio's runtime bundles,
 * against the service this bundle registers. Failsafe names the jar it just packaged in the system
 * property {@code pageio.tck.bundle} ({@code pom.xml}).
 */
public class RateLimitConformanceIT extends MethodBundleKit {
}
