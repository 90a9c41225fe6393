package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.function.BooleanSupplier;
import javax.inject.Inject;
import org.junit.After;
import org.junit.Test;
import org.ops4j.pax.exam.util.Filter;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.pageio.api.IoMethod;

/**
 * The worker pool's settings change live through ConfigAdmin ({@code @Modified}, same component
 * object, same service), an invalid combination is rejected naming both values while the old
 * settings stay, and PostgreSQL 18's {@code io_workers} is accepted as a fixed pool. The worker
 * bundle's classes are private, so its views are read reflectively, as a console would not need to.
 */
public class WorkerConfigIT extends PageioTestBase {

    static final String PID = "org.pageio.method.worker";

    @Inject
    @Filter("(io.method=worker)")
    private IoMethod worker;

    @Inject
    private ConfigurationAdmin configAdmin;

    @Inject
    private BundleContext context;


    @After
    public void deleteConfiguration() throws Exception {
        Configuration c = configAdmin.getConfiguration(PID, "?");
        c.delete();
        await("the defaults are back", () -> setting("minWorkers") == 2 && setting("maxWorkers") == 8);
    }

    @Test
    public void settingsApplyLiveAndInvalidOnesAreRejectedKeepingTheOld() throws Exception {
        ServiceReference<IoMethod> ref = workerReference();
        long serviceId = (Long) ref.getProperty("service.id");
        await("the default pool of 2", () -> stat("workersAlive") == 2);

        update(3, 5, -1);
        await("io_min_workers = 3 applied", () -> setting("minWorkers") == 3 && setting("maxWorkers") == 5);
        await("3 workers", () -> stat("workersAlive") == 3);
        assertSame("@Modified, not a new component", worker, context.getService(workerReference()));
        assertEquals(serviceId, workerReference().getProperty("service.id"));
        await("the service property follows", () -> Integer.valueOf(3).equals(property("io_min_workers")));
        assertNull(call("lastRejection"));

        update(6, 4, -1);
        String rejection = await("the rejection", () -> call("lastRejection") != null);
        assertTrue(rejection, rejection.contains("io_min_workers = 6") && rejection.contains("io_max_workers = 4"));
        assertTrue(rejection, rejection.contains("keeping io_min_workers = 3, io_max_workers = 5"));
        assertEquals(3, setting("minWorkers"));
        assertEquals(5, setting("maxWorkers"));
        assertEquals(serviceId, workerReference().getProperty("service.id"));

        update(2, 40, -1);
        await("the second rejection", () -> String.valueOf(call("lastRejection")).contains("io_max_workers = 40"));
        String second = (String) call("lastRejection");
        assertTrue(second, second.contains("io_min_workers = 2"));
        assertEquals(5, setting("maxWorkers"));
        assertEquals(serviceId, workerReference().getProperty("service.id"));
        assertEquals(3, stat("workersAlive"));
    }

    @Test
    public void postgres18IoWorkersIsAFixedPoolWithANoteInTheSettingsView() throws Exception {
        update(2, 8, 4);
        await("io_workers = 4 applied", () -> setting("minWorkers") == 4 && setting("maxWorkers") == 4);
        await("4 workers", () -> stat("workersAlive") == 4);
        List<?> view = (List<?>) call("settingsView");
        String row = view.stream().map(String::valueOf).filter(s -> s.contains("name=io_workers,")).findFirst()
                .orElseThrow();
        assertTrue(row, row.contains("value=4") && row.contains("PostgreSQL 18"));
    }

    // ------------------------------------------------------------------ helpers

    private ServiceReference<IoMethod> workerReference() throws Exception {
        var refs = context.getServiceReferences(IoMethod.class, "(io.method=worker)");
        assertEquals(1, refs.size());
        return refs.iterator().next();
    }

    private Object property(String name) {
        try {
            return workerReference().getProperty(name);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private void update(int min, int max, int ioWorkers) throws Exception {
        Dictionary<String, Object> props = new Hashtable<>();
        props.put("io_min_workers", min);
        props.put("io_max_workers", max);
        props.put("io_worker_idle_timeout", 60_000);
        props.put("io_worker_launch_interval", 100);
        props.put("io_workers", ioWorkers);
        configAdmin.getConfiguration(PID, "?").update(props);
    }

    private Object call(String method) {
        try {
            return worker.getClass().getMethod(method).invoke(worker);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(method + "() on " + worker.getClass(), e);
        }
    }

    private int stat(String gauge) {
        return accessor(call("stats"), gauge);
    }

    private int setting(String name) {
        return accessor(call("settings"), name);
    }

    private static int accessor(Object record, String name) {
        try {
            return ((Number) record.getClass().getMethod(name).invoke(record)).intValue();
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(name + "() on " + record.getClass(), e);
        }
    }

    private String await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 10_000;
        while (!condition.getAsBoolean()) {
            if (System.currentTimeMillis() > deadline) {
                fail("not within 10 s: " + what + "; settings " + call("settings") + ", " + call("stats"));
            }
            Thread.sleep(20);
        }
        Object r = call("lastRejection");
        assertNotNull(worker);
        return r == null ? null : r.toString();
    }
}
