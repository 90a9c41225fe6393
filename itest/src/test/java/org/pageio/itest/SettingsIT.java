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
                    && m.settings().sharedBuffers() == 16384 && serving(m) ? m : null;
        });
    }

    @Test
    public void ioUringForceAsyncIsListedSetLiveAndRefusedNamingItsValues() throws Exception {
        String before = run("pageio:settings");
        assertTrue(before, row(before, "io_uring_force_async").matches(
                "io_uring_force_async +\\| auto +\\| +\\| default +\\| pageio +\\| live +\\| auto, large, pg19, pg18, never"));
        String set = run("pageio:set io_uring_force_async pg19");
        assertTrue(set, set.startsWith("SET io_uring_force_async = pg19 (was auto); applies live"));
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
            assertEquals("invalid value for io_uring_force_async: 'bogus'; valid values are auto, large, pg19, pg18, never;"
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
        assertEquals(stat, restarted.methodStatus().method(), cells[3]);
        assertTrue(stat, Long.parseLong(cells[4]) > 0);
        assertTrue(stat, Long.parseLong(cells[5]) >= 32 * 8192L);
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

    /**
     * shared_buffers the machine cannot map: {@code pageio:set} refuses it in one line and the
     * buffer manager in force keeps serving. Written straight into ConfigAdmin (around the
     * console's checks, as the Web Console's Configuration page does), the restart refuses to map
     * the pool: the service stays registered and says why in one line, and so do the commands that
     * need it ({@code pageio:load}, {@code pageio:tables}, {@code pageio:checkpoint}), where Gogo once
     * failed with a NullPointerException; {@code pageio:set} of a size that fits brings it back.
     */
    @Test
    public void sharedBuffersTheMachineCannotMapIsRefusedAndAStartThatCannotMapItSaysSo() throws Exception {
        BufferManager before = await("the buffer manager", this::bufferManager);
        try (CommandSession session = session()) {
            session.execute("pageio:set shared_buffers 1TB");
            fail("1TB was accepted");
        } catch (Exception e) {
            String m = rootMessage(e);
            assertTrue(m, m.startsWith("shared_buffers = 134217728 (1 TB) needs more memory than this machine can give now:"
                    + " at most "));
            assertTrue(m, m.contains("; lower shared_buffers, e.g. pageio:set shared_buffers "));
            assertTrue(m, m.endsWith("; shared_buffers stays 16384"));
            assertEquals(m, 1, m.lines().count());
        }
        try (CommandSession session = session()) {
            session.execute("pageio:set shared_buffers 1000000000000");
            fail("10^12 blocks were accepted");
        } catch (Exception e) {
            assertEquals("shared_buffers = 1000000000000 (× 8kB = about 7450TB) is outside the valid range 16..134217728 (8kB),"
                    + " that is 128kB..1TB; shared_buffers stays 16384", rootMessage(e));
        }
        assertTrue("the same buffer manager serves", bufferManager() == before);
        assertTrue(row(run("pageio:settings"), "shared_buffers").contains("| 16384 "));
        readSomeBlocks(before, 8);

        Configuration c = configAdmin.getConfiguration("org.pageio.bufmgr", "?");
        Dictionary<String, Object> props = c.getProperties() == null ? new Hashtable<>() : c.getProperties();
        props.put("shared_buffers", 1 << 27);
        c.update(props);
        String why = await("the restart that cannot map 1 TB", () -> {
            BufferManager b = bufferManager();
            if (b == null || b == before) {
                return null;
            }
            try {
                b.pool();
                return null;
            } catch (IllegalStateException e) {
                return e.getMessage();
            }
        });
        assertTrue(why, why.startsWith("the buffer manager is not running: could not map anonymous shared memory: ENOMEM"));
        assertTrue(why, why.contains("shared_buffers = 134217728 (1 TB)") && why.contains("pageio:set shared_buffers "));
        assertEquals(why, 1, why.lines().count());
        assertEquals(why, bufferManager().methodStatus().waiting());
        for (String command : new String[] {"pageio:load -r 100 t", "pageio:tables", "pageio:checkpoint", "pageio:stat_io"}) {
            try (CommandSession session = session()) {
                session.execute(command);
                fail(command + " ran without a buffer manager");
            } catch (Exception e) {
                assertEquals(command, why, rootMessage(e));
            }
        }

        String set = run("pageio:set shared_buffers 128MB");
        assertTrue(set, set.startsWith("SET shared_buffers = 16384 8kB (was 134217728); the buffer manager restarted"));
        BufferManager back = await("the buffer manager serving again", () -> {
            BufferManager b = bufferManager();
            return b != null && serving(b) ? b : null;
        });
        assertEquals(16384, back.settings().sharedBuffers());
        readSomeBlocks(back, 8);
    }

    private static boolean serving(BufferManager b) {
        try {
            b.pool();
            return true;
        } catch (IllegalStateException e) {
            return false;
        }
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
