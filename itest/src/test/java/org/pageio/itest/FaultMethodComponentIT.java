package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.CoreOptions.composite;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Hashtable;
import java.util.function.Supplier;
import javax.inject.Inject;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.junit.After;
import org.junit.Test;
import org.ops4j.pax.exam.Option;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.pageio.api.AioException;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufferManager;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.itest.kit.NumberedRelation;
import org.pageio.posix.Errno;

/**
 * {@code io_method=fault} is selectable like any method: configured through ConfigAdmin (PID
 * {@code org.pageio.method.fault}: the delegate by its name, the rules as text), listed by
 * {@code pageio:methods}, chosen with {@code pageio:set io_method fault}, and its faults reach
 * the buffer manager's readers. A wrong configuration leaves an unavailable method saying why.
 */
public class FaultMethodComponentIT extends PageioTestBase {

    @Inject private ConfigurationAdmin configAdmin;
    @Inject private BundleContext context;
    @Inject private CommandProcessor commands;
    @Inject private org.osgi.service.component.runtime.ServiceComponentRuntime scr;

    @Override
    protected Option extraOptions() {
        return composite(reactorBundle("org.osgi.service.log"),
                reactorBundle("org.apache.felix.metatype"));
    }

    @After
    public void deleteConfigurations() throws Exception {
        for (String pid : new String[] {"org.pageio.bufmgr", "org.pageio.method.fault"}) {
            Configuration[] cs = configAdmin.listConfigurations("(service.pid=" + pid + ")");
            if (cs != null) {
                for (Configuration c : cs) {
                    c.delete();
                }
            }
        }
        // SCR drops the component's configuration asynchronously: wait until it has, so that the next
        // test's new configuration is not taken for a stale one
        await("io_method=fault unregistered and its component without configuration",
                () -> faultReference() == null && faultComponentConfigurations() == 0 ? Boolean.TRUE : null);
    }

    @Test
    public void configuredThroughConfigAdminSelectedWithSetAndItsFaultsReachTheReader() throws Exception {
        assertEquals("no configuration, no io_method=fault", null, faultReference());
        configure("sync", "eio read file=pg_default/64000 blocks=3 times=1");
        ServiceReference<IoMethod> ref = awaitOrExplain("io_method=fault registered", this::faultReference);
        assertEquals("sync", ref.getProperty("fault.delegate"));
        assertEquals("[eio read file=pg_default/64000 blocks=3 times=1]", Arrays.toString((String[]) ref.getProperty("fault.rules")));
        String methods = run("pageio:methods");
        assertTrue(methods, methods.lines().anyMatch(l -> l.startsWith("fault ") && l.contains("| yes ")));

        String set = run("pageio:set io_method fault");
        assertTrue(set, set.startsWith("SET io_method = fault"));
        BufferManager bufmgr = await("the buffer manager on io_method=fault", () -> {
            BufferManager b = bufferManager();
            return b != null && b.pool().method().name().equals("fault") ? b : null;
        });
        SmgrRelation rel = NumberedRelation.create(bufmgr, 64000, 8);
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            AioException e = assertThrows(AioException.class, () -> s.readBuffer(rel, 3, null));
            assertEquals(Errno.EIO, e.errno());
            assertTrue(e.getMessage(), e.getMessage().contains("block 3") && e.getMessage().contains("pg_default/64000"));
            s.releaseBuffer(s.readBuffer(rel, 3, null)); // fired once: read again
        } finally {
            rel.unlink();
        }
        NumberedRelation.streamAndCheck(bufmgr, NumberedRelation.create(bufmgr, 64001, 16), 16);
        assertEquals(0, bufmgr.pool().pinnedBuffers());
    }

    /**
     * New rules for the same delegate apply live: the same service (its {@code fault.rules}
     * updated), the buffer manager bound to it undisturbed, the new rule firing and the old one
     * gone; rules that do not parse then leave the plan in force.
     */
    @Test
    public void newRulesApplyLiveWithoutRestartingTheBufferManager() throws Exception {
        configure("sync", "eio read file=pg_default/64010 blocks=3 times=1");
        ServiceReference<IoMethod> ref = awaitOrExplain("io_method=fault registered", this::faultReference);
        Object serviceId = ref.getProperty("service.id");
        String set = run("pageio:set io_method fault");
        assertTrue(set, set.startsWith("SET io_method = fault"));
        BufferManager bufmgr = await("the buffer manager on io_method=fault", () -> {
            BufferManager b = bufferManager();
            return b != null && b.pool().method().name().equals("fault") ? b : null;
        });
        SmgrRelation rel = NumberedRelation.create(bufmgr, 64010, 8);
        try (BufferSession s = bufmgr.pool().openSession("client")) {
            assertEquals(Errno.EIO, assertThrows(AioException.class, () -> s.readBuffer(rel, 3, null)).errno());

            configure("sync", "eio read file=pg_default/64010 blocks=5 times=1");
            await("fault.rules changed on the same service", () -> {
                ServiceReference<IoMethod> r = faultReference();
                return r != null && serviceId.equals(r.getProperty("service.id"))
                        && Arrays.toString((String[]) r.getProperty("fault.rules")).contains("blocks=5") ? r : null;
            });
            assertSame("the buffer manager was not restarted", bufmgr, bufferManager());
            AioException e = assertThrows(AioException.class, () -> s.readBuffer(rel, 5, null));
            assertTrue(e.getMessage(), e.getMessage().contains("block 5") && e.getMessage().contains("pg_default/64010"));
            s.releaseBuffer(s.readBuffer(rel, 3, null)); // the old rule is gone

            configure("sync", "eoi read");
            Thread.sleep(300);
            ServiceReference<IoMethod> still = faultReference();
            assertEquals(serviceId, still.getProperty("service.id"));
            assertTrue(Arrays.toString((String[]) still.getProperty("fault.rules")).contains("blocks=5"));
            IoMethod m = context.getService(still);
            assertTrue("a refused change leaves the method available", m.availability().available());
            context.ungetService(still);
        } finally {
            rel.unlink();
        }
        assertEquals(0, bufmgr.pool().pinnedBuffers());
    }

    @Test
    public void aRuleThatDoesNotParseLeavesAnUnavailableMethodSayingWhy() throws Exception {
        configure("sync", "eoi read");
        ServiceReference<IoMethod> ref = awaitOrExplain("io_method=fault registered", this::faultReference);
        IoMethod m = context.getService(ref);
        IoMethod.Availability a = m.availability();
        assertFalse(a.available());
        assertEquals("io_method=fault: rejected configuration org.pageio.method.fault: fault rule 'eoi read': unknown fault"
                + " 'eoi': valid faults are eio, short_read, enospc, short_write, torn_write, delay, reorder", a.cause());
        Exception e = assertThrows(Exception.class, () -> run("pageio:set io_method fault"));
        assertTrue(e.getMessage(), e.getMessage().contains("io_method fault cannot run here") && e.getMessage().contains("eoi"));
        context.ungetService(ref);
    }

    @Test
    public void aDelegateThatIsNotRegisteredRegistersNothingUntilItComes() throws Exception {
        configure("no_such_method", "eio");
        Thread.sleep(300);
        assertEquals(null, faultReference());
        Exception e = assertThrows(Exception.class, () -> run("pageio:set io_method no_such_method"));
        System.out.println("FaultMethodComponentIT: pageio:set io_method no_such_method -> " + e.getMessage());
        assertTrue(e.getMessage(), e.getMessage().contains("no_such_method"));
    }

    // ------------------------------------------------------------------ helpers

    private void configure(String delegate, String... rules) throws Exception {
        Configuration c = configAdmin.getConfiguration("org.pageio.method.fault", "?");
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("delegate", delegate);
        props.put("rules", rules);
        c.update(props);
    }

    private int faultComponentConfigurations() {
        int n = 0;
        for (var d : scr.getComponentDescriptionDTOs()) {
            if (d.name.contains("FaultMethodComponent")) {
                n += scr.getComponentConfigurationDTOs(d).size();
            }
        }
        return n;
    }

    private String components() throws Exception {
        StringBuilder b = new StringBuilder();
        for (var d : scr.getComponentDescriptionDTOs()) {
            if (d.name.contains("fault")) {
                for (var c : scr.getComponentConfigurationDTOs(d)) {
                    b.append(d.name).append(" state ").append(c.state).append(" failure ").append(c.failure).append(' ');
                }
            }
        }
        return b.toString();
    }

    private ServiceReference<IoMethod> faultReference() {
        try {
            var refs = context.getServiceReferences(IoMethod.class, "(io.method=fault)");
            return refs.isEmpty() ? null : refs.iterator().next();
        } catch (org.osgi.framework.InvalidSyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private BufferManager bufferManager() {
        var ref = context.getServiceReference(BufferManager.class);
        return ref == null ? null : context.getService(ref);
    }

    private String run(String command) throws Exception {
        PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        try (CommandSession session = commands.createSession(InputStream.nullInputStream(), out, out)) {
            Object r = session.execute(command);
            assertNotNull(command, r);
            return String.valueOf(r);
        }
    }

    private static <T> T await(String what, Supplier<T> probe) throws InterruptedException {
        return awaitNonNull(what, 20_000, probe);
    }

    private <T> T awaitOrExplain(String what, Supplier<T> probe) throws Exception {
        try {
            return await(what, probe);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; components: " + components(), e);
        }
    }
}
