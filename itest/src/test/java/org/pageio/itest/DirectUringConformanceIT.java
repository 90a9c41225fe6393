package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.CoreOptions.composite;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;

import javax.inject.Inject;
import org.junit.Test;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.util.Filter;
import org.pageio.api.IoMethod;
import org.pageio.tck.MethodConformanceKit;

/**
 * {@code io_method=direct} with engine {@code io_uring} passes the method conformance kit unchanged:
 * the kit opens its files buffered, and the method takes each descriptor into O_DIRECT mode.
 * The engine is chosen with the framework property {@code pageio.direct.engine}.
 */
public class DirectUringConformanceIT extends MethodConformanceKit {

    @Inject
    @Filter("(io.method=direct)")
    private IoMethod direct;

    @Override
    protected Option extraOptions() {
        return composite(systemProperty("pageio.direct.engine").value("io_uring"),
                PageioTestBase.reactorBundle("uring-bundle"), PageioTestBase.reactorBundle("directio-bundle"));
    }

    @Override
    protected IoMethod method() {
        return direct;
    }

    @Test
    public void reportsEngineUring() {
        assertEquals("direct", direct.name());
        IoMethod.Availability a = direct.availability();
        assertTrue(a.cause(), a.available());
        assertTrue(a.cause(), a.cause().startsWith("engine io_uring"));
        assertTrue(direct.toString(), direct.toString().contains("engine io_uring: "));
    }
}
