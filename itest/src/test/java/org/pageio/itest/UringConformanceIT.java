package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import javax.inject.Inject;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.junit.Test;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.util.Filter;
import org.pageio.api.IoMethod;
import org.pageio.tck.MethodConformanceKit;

/**
 * {@code io_method=io_uring} passes the method conformance kit, on this machine, without skipping:
 * if io_uring is unavailable here every test fails with the probe's cause.
 */
public class UringConformanceIT extends MethodConformanceKit {

    @Inject
    @Filter("(io.method=io_uring)")
    private IoMethod uring;

    @Inject
    private CommandProcessor commands;

    @Override
    protected Option extraOptions() {
        return PageioTestBase.reactorBundle("uring-bundle");
    }

    @Override
    protected IoMethod method() {
        return uring;
    }

    @Test
    public void ioUringIsRegisteredAndAvailableHere() {
        assertEquals("io_uring", uring.name());
        IoMethod.Availability a = uring.availability();
        assertTrue("io_uring must be available on this machine (the acceptance runs here): " + a.cause(), a.available());
        assertTrue(uring.hasWaitOne());
        assertTrue(uring.waitOnFdBeforeClose());
    }

    @Test
    public void methodsCommandListsIoUringAsAvailable() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (CommandSession session = commands.createSession(InputStream.nullInputStream(), out, out)) {
            String table = String.valueOf(session.execute("pageio:methods"));
            assertNotNull(table);
            assertTrue(table, table.lines().anyMatch(l -> l.startsWith("io_uring ") && l.contains("| yes ")
                    && l.contains("org.pageio.method.uring")));
        }
    }
}
