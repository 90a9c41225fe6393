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
 * {@code io_method=posix_aio} passes the method conformance kit, on this machine, without skipping:
 * if the C library lacks POSIX AIO here every test fails with the method's cause.
 */
public class PosixAioConformanceIT extends MethodConformanceKit {

    @Inject
    @Filter("(io.method=posix_aio)")
    private IoMethod posixAio;

    @Inject
    private CommandProcessor commands;

    @Override
    protected Option extraOptions() {
        return PageioTestBase.reactorBundle("posixaio-bundle");
    }

    @Override
    protected IoMethod method() {
        return posixAio;
    }

    @Test
    public void posixAioIsRegisteredAndAvailableHere() {
        assertEquals("posix_aio", posixAio.name());
        IoMethod.Availability a = posixAio.availability();
        assertTrue("posix_aio must be available on this machine (glibc has POSIX AIO): " + a.cause(), a.available());
        assertTrue(posixAio.hasWaitOne());
        assertTrue(posixAio.waitOnFdBeforeClose());
    }

    @Test
    public void methodsCommandListsPosixAioAsAvailable() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (CommandSession session = commands.createSession(InputStream.nullInputStream(), out, out)) {
            String table = String.valueOf(session.execute("pageio:methods"));
            assertNotNull(table);
            assertTrue(table, table.lines().anyMatch(l -> l.startsWith("posix_aio ") && l.contains("| yes ")
                    && l.contains("org.pageio.method.posixaio")));
        }
    }
}
