package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.ops4j.pax.exam.CoreOptions.composite;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.concurrent.ThreadLocalRandom;
import javax.inject.Inject;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.junit.After;
import org.junit.Test;
import org.ops4j.pax.exam.Option;
import org.osgi.framework.BundleContext;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.pageio.bufmgr.BufferManager;
import org.pageio.itest.kit.NumberedRelation;
import org.pageio.bufmgr.smgr.SmgrRelation;

/**
 * {@code pageio:set} changes a setting through ConfigAdmin (the buffer manager restarts),
 * {@code pageio:settings} shows it with source {@code console}, an out-of-range value is refused
 * naming the setting and its range while the old value stays, and {@code pageio:stat_io} counts a read.
 */
public class SettingsIT extends PageioTestBase {

    @Inject
    private CommandProcessor commands;

    @Inject
    private ConfigurationAdmin configAdmin;

    @Inject
    private BundleContext context;

    @Override
    protected Option extraOptions() {
        return composite(reactorBundle("org.osgi.service.log"), reactorBundle("org.apache.felix.metatype"),
                reactorBundle("uring-bundle"));
    }

    @After
    public void deleteConfiguration() throws Exception {
        // pageio:set saved its value in the settings file; other containers share the data directory
        java.nio.file.Files.deleteIfExists(java.nio.file.Path.of(dataDirectory(), "conf", "org.pageio.settings.cfg"));
        Configuration[] cs = configAdmin.listConfigurations("(|(service.pid=org.pageio.bufmgr)(service.pid=org.pageio.method.uring))");
        if (cs != null) {
            for (Configuration c : cs) {
                c.delete();
            }
        }
        // SCR applies the deletion asynchronously (a restart with the defaults): let it finish, so
        // that the next test's change is not undone by this one's deletion arriving after it.
        await("the buffer manager back on the defaults", () -> {
            BufferManager m = bufferManager();
            return m != null && m.settings().effectiveIoConcurrency() == 16 && m.settings().maintenanceIoConcurrency() == 16
                    ? m : null;
        });
    }

    @Test
    public void ioUringForceAsyncIsListedSetLiveAndRefusedNamingItsValues() throws Exception {
        String before = run("pageio:settings");
        assertTrue(before, row(before, "io_uring_force_async").matches(
                "io_uring_force_async +\\| large +\\| +\\| default +\\| pageio +\\| live +\\| large, pg19, pg18, never"));
        String set = run("pageio:set io_uring_force_async pg19");
        assertTrue(set, set.startsWith("SET io_uring_force_async = pg19 (was large); applies live"));
        await("io_uring_force_async stored for io_method=io_uring", () -> {
            try {
                Configuration c = configAdmin.getConfiguration("org.pageio.method.uring", "?");
                return c.getProperties() != null && "pg19".equals(c.getProperties().get("io_uring_force_async")) ? c : null;
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        try (CommandSession session = session()) {
            session.execute("pageio:set io_uring_force_async bogus");
            fail("bogus was accepted");
        } catch (Exception e) {
            assertEquals("invalid value for io_uring_force_async: 'bogus'; valid values are large, pg19, pg18, never;"
                    + " io_uring_force_async stays pg19", rootMessage(e));
        }
    }

    @Test
    public void setShowsConsoleSourceRefusesOutOfRangeAndStatIoCountsReads() throws Exception {
        String before = run("pageio:settings");
        assertTrue(before, row(before, "effective_io_concurrency").matches(
                "effective_io_concurrency +\\| 16 +\\| +\\| default +\\| user +\\| restart +\\| 0\\.\\.1000"));
        assertTrue(before, row(before, "io_method").startsWith("io_method"));
        assertTrue(before, row(before, "io_method").contains("| worker "));
        assertTrue(before, row(before, "io_min_workers").contains("| live "));
        assertTrue(before, row(before, "shared_buffers").contains("| 8kB "));

        BufferManager old = bufferManager();
        String set = run("pageio:set effective_io_concurrency 32");
        assertTrue(set, set.startsWith("SET effective_io_concurrency = 32 (was 16)"));
        assertTrue(set, set.contains("the buffer manager restarted"));
        BufferManager restarted = await("the buffer manager restarted with 32", () -> {
            BufferManager b = bufferManager();
            return b != null && b != old && b.settings().effectiveIoConcurrency() == 32 ? b : null;
        });

        String after = run("pageio:settings");
        assertTrue(after, row(after, "effective_io_concurrency").matches(
                "effective_io_concurrency +\\| 32 +\\| +\\| console +\\| user .*"));
        String json = run("pageio:settings --format json");
        assertTrue(json, json.contains("{\"name\": \"effective_io_concurrency\", \"setting\": \"32\", \"unit\": \"\","
                + " \"source\": \"console\""));

        try (CommandSession session = session()) {
            session.execute("pageio:set effective_io_concurrency 5000");
            fail("5000 was accepted");
        } catch (Exception e) {
            assertEquals("effective_io_concurrency = 5000 is outside the valid range 0..1000;"
                    + " effective_io_concurrency stays 32", rootMessage(e));
        }
        assertTrue(run("pageio:settings"), row(run("pageio:settings"), "effective_io_concurrency").contains("| 32 "));
        Thread.sleep(200);
        assertTrue("no restart for a refused value", bufferManager() == restarted);
        assertEquals(32, restarted.settings().effectiveIoConcurrency());

        run("pageio:stat_io --reset");
        readSomeBlocks(restarted, 32);
        String stat = run("pageio:stat_io");
        String client = row(stat, "client");
        String[] cells = client.split("\\s*\\|\\s*");
        assertEquals(stat, "relation", cells[1]);
        assertTrue(stat, Long.parseLong(cells[3]) > 0);
        assertTrue(stat, Long.parseLong(cells[4]) >= 32 * 8192L);
        String statJson = run("pageio:stat_io --format json");
        assertTrue(statJson, statJson.contains("\"backend_type\": \"client\""));
        String aios = run("pageio:aios");
        assertTrue(aios, aios.startsWith("session | io_id | io_generation | state"));
        System.out.println("---- pageio:settings\n" + after + "\n---- pageio:stat_io\n" + stat + "\n---- pageio:aios\n"
                + aios + "\n---- pageio:set\n" + set);
    }

    // ------------------------------------------------------------------ helpers

    /** {@code pageio:set --format json} answers with one JSON object; an unknown format changes nothing. */
    @Test
    public void setAnswersInJsonAndRefusesAnUnknownFormat() throws Exception {
        await("the buffer manager", this::bufferManager);
        String out = run("pageio:set --format json maintenance_io_concurrency 24").trim();
        assertTrue(out, out.startsWith("{\"name\": \"maintenance_io_concurrency\", \"value\": \"24\", \"result\": \"SET "));
        assertTrue(out, out.endsWith("}"));
        BufferManager b = await("the restarted buffer manager with maintenance_io_concurrency 24", () -> {
            BufferManager m = bufferManager();
            return m != null && m.settings().maintenanceIoConcurrency() == 24 ? m : null;
        });
        try {
            run("pageio:set --format yaml maintenance_io_concurrency 30");
            fail("an unknown format was accepted");
        } catch (Exception e) {
            assertTrue(rootMessage(e), rootMessage(e).contains("unknown format 'yaml': use text or json"));
        }
        Thread.sleep(300);
        assertEquals(24, b.settings().maintenanceIoConcurrency());
        assertTrue("still the same buffer manager", bufferManager() == b);
    }

    /**
     * A value out of range written straight into ConfigAdmin (as the Web Console's Configuration
     * page does, around the console's checks) is refused by the buffer manager itself: the same
     * buffer manager keeps running with the settings in force, and its status says why.
     */
    @Test
    public void anOutOfRangeValueWrittenStraightIntoConfigAdminLeavesTheBufferManagerRunning() throws Exception {
        BufferManager before = await("the buffer manager", this::bufferManager);
        int eic = before.settings().effectiveIoConcurrency();
        Configuration c = configAdmin.getConfiguration("org.pageio.bufmgr", "?");
        Dictionary<String, Object> props = c.getProperties() == null ? new Hashtable<>() : c.getProperties();
        props.put("effective_io_concurrency", 5000);
        c.update(props);
        String failure = await("the refusal in the method status", () -> {
            String f = bufferManager() == null ? null : bufferManager().methodStatus().lastFailure();
            return f != null && f.contains("effective_io_concurrency") ? f : null;
        });
        assertTrue(failure, failure.contains("5000") && failure.contains("0..1000"));
        Thread.sleep(300); // a restart, if one were (wrongly) started, would replace the service by now
        BufferManager after = bufferManager();
        assertTrue("the same buffer manager keeps running", after == before);
        assertEquals(eic, after.settings().effectiveIoConcurrency());
        readSomeBlocks(after, 8);
    }

    private static void readSomeBlocks(BufferManager bufmgr, int blocks) throws Exception {
        long relNumber = 200000 + ThreadLocalRandom.current().nextInt(100000);
        SmgrRelation rel = NumberedRelation.create(bufmgr, relNumber, blocks);
        try {
            NumberedRelation.streamAndCheck(bufmgr, rel, blocks);
        } finally {
            rel.unlink();
        }
    }

    private BufferManager bufferManager() {
        var ref = context.getServiceReference(BufferManager.class);
        return ref == null ? null : context.getService(ref);
    }

    private CommandSession session() {
        PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        return commands.createSession(InputStream.nullInputStream(), out, out);
    }

    private String run(String command) throws Exception {
        try (CommandSession session = session()) {
            return String.valueOf(session.execute(command));
        }
    }

    private static String row(String table, String name) {
        for (String line : table.split("\n")) {
            if (line.startsWith(name + " ")) {
                return line;
            }
        }
        throw new AssertionError("no row " + name + " in\n" + table);
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getMessage();
    }

    private static <T> T await(String what, java.util.function.Supplier<T> probe) throws InterruptedException {
        return awaitNonNull(what, 10_000, probe);
    }
}
