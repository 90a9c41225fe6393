package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.stream.Collectors;
import org.junit.Test;
import org.junit.runner.JUnitCore;
import org.junit.runner.Result;
import org.junit.runner.notification.Failure;
import org.pageio.itest.tck.ThirdPartyMethodTck;

/**
 * What {@code ./pageio tck JAR} does, run on two bundles built outside pageio's parent pom:
 * the example {@code examples/ratelimit-method} must pass every test of the kit, and the broken
 * fixture {@code tck/broken-method} (completes each I/O twice) must fail, every failure saying
 * why in one readable sentence. A plain JUnit test: it runs the Pax Exam kit itself, once per jar.
 */
public class TckSelfIT {

    private static Result tck(String jarProperty) {
        String jar = System.getProperty(jarProperty);
        assertTrue(jarProperty + " is set by itest/pom.xml: " + jar, jar != null && !jar.startsWith("${"));
        String old = System.getProperty(ThirdPartyMethodTck.BUNDLE_PROPERTY);
        System.setProperty(ThirdPartyMethodTck.BUNDLE_PROPERTY, jar);
        try {
            return new JUnitCore().run(ThirdPartyMethodTck.class);
        } finally {
            if (old == null) {
                System.clearProperty(ThirdPartyMethodTck.BUNDLE_PROPERTY);
            } else {
                System.setProperty(ThirdPartyMethodTck.BUNDLE_PROPERTY, old);
            }
        }
    }

    private static String describe(Result r) {
        return r.getRunCount() + " run, " + r.getFailureCount() + " failed: " + r.getFailures().stream()
                .map(f -> f.getDescription().getMethodName() + ": " + f.getMessage()).collect(Collectors.joining("; "));
    }

    @Test
    public void theExampleThirdPartyMethodPasses() {
        Result r = tck("pageio.tck.example");
        System.out.println("TckSelfIT: ratelimit-method: " + describe(r));
        assertTrue(describe(r), r.getRunCount() >= 10);
        assertEquals(describe(r), 0, r.getFailureCount());
        assertEquals(describe(r), 0, r.getIgnoreCount());
    }

    @Test
    public void theBrokenMethodFailsWithAReadableReason() {
        Result r = tck("pageio.tck.broken");
        System.out.println("TckSelfIT: broken-method: " + describe(r));
        assertTrue(describe(r), r.getRunCount() >= 10);
        assertFalse("the kit passed a method that completes every I/O twice: " + describe(r), r.wasSuccessful());
        for (Failure f : r.getFailures()) {
            String m = String.valueOf(f.getMessage());
            assertTrue("readable reason, not a bare stack trace: " + m, m.contains("io_method=broken_twice called"
                    + " IoHandle.complete()") && m.contains("a method must complete each I/O exactly once"));
        }
    }
}
