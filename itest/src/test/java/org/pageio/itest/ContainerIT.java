package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Dictionary;

import javax.inject.Inject;

import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.junit.Test;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.util.Filter;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufferManager;

/**
 * The container comes up with the sync method and the pageio Gogo commands; with the web bundle
 * added, the Web Console gets the generated password's hash.
 */
public class ContainerIT extends PageioTestBase {

    @Override
    protected Option extraOptions() {
        return reactorBundle("web-bundle"); // its jakarta servlet imports are optional: only the credentials start here
    }

    @Inject
    @Filter("(io.method=sync)")
    private IoMethod sync;

    @Inject
    private CommandProcessor commands;

    @Inject
    private ConfigurationAdmin configAdmin;

    /** Injected so that the stat_io test starts once a buffer manager is registered. */
    @Inject
    private BufferManager bufmgr;

    @Test
    public void syncMethodIsRegisteredAndAvailable() {
        assertEquals("sync", sync.name());
        IoMethod.Availability availability = sync.availability();
        assertNotNull(availability);
        assertTrue("sync must be available: " + availability.cause(), availability.available());
    }

    @Test
    public void methodsCommandListsSync() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (CommandSession session = commands.createSession(InputStream.nullInputStream(), out, out)) {
            Object text = session.execute("pageio:methods");
            assertNotNull("pageio:methods returned nothing", text);
            String table = text.toString();
            assertTrue(table, table.startsWith("method"));
            assertTrue(table, table.lines().anyMatch(l -> l.startsWith("sync ") && l.contains("| yes ")));

            String json = String.valueOf(session.execute("pageio:methods --format json"));
            assertTrue(json, json.contains("\"method\": \"sync\", \"available\": true"));
        }
    }

    /** {@code pageio:stat_io} in the container's shell: PostgreSQL's columns with io_method, resets that say when. */
    @Test
    public void statIoCommandShowsTheMethodAndStatsResetAndResetsByObjectAndContext() throws Exception {
        String timestamptz = "\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d(\\.\\d{1,6})?[+-]\\d\\d(:\\d\\d){0,2}";
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (CommandSession session = commands.createSession(InputStream.nullInputStream(), out, out)) {
            String table = String.valueOf(session.execute("pageio:stat_io"));
            assertEquals(table, java.util.List.of("backend_type", "object", "context", "io_method", "reads", "read_bytes",
                    "read_time", "writes", "write_bytes", "write_time", "extends", "extend_bytes", "hits", "evictions",
                    "reuses", "fsyncs", "fsync_time", "stats_reset", "bytes_per_read"),
                    java.util.Arrays.stream(table.lines().findFirst().orElseThrow().split("\\|")).map(String::strip).toList());

            String one = String.valueOf(session.execute("pageio:stat_io --reset --object relation --context bulkread"));
            assertTrue(one, one.matches("stat_io reset: the rows of object relation, context bulkread, stats_reset "
                    + timestamptz));
            String all = String.valueOf(session.execute("pageio:stat_io -r -f json"));
            assertTrue(all, all.matches("\\{\"reset\": \"io\", \"object\": null, \"context\": null, \"stats_reset\": \""
                    + timestamptz + "\"}"));
            try {
                session.execute("pageio:stat_io --reset --context bulk");
                throw new AssertionError("an unknown context was taken");
            } catch (Exception e) {
                assertEquals("unknown stat_io context 'bulk': use 'normal', 'bulkread', 'bulkwrite', 'vacuum'", e.getMessage());
            }
        }
    }

    @Test
    public void webConsoleGetsTheHashOfTheGeneratedPassword() throws Exception {
        Path file = Path.of(PageioTestBase.dataDirectory(), "webconsole.password");
        long deadline = System.currentTimeMillis() + 10_000;
        Dictionary<String, Object> props = null;
        while (System.currentTimeMillis() < deadline) {
            Configuration[] found = configAdmin.listConfigurations(
                    "(service.pid=org.apache.felix.webconsole.internal.servlet.OsgiManager)");
            props = found == null ? null : found[0].getProperties();
            if (props != null && Files.isRegularFile(file)) {
                break;
            }
            Thread.sleep(50);
        }
        assertNotNull("no Web Console configuration", props);
        String password = Files.readString(file).strip();
        assertTrue(password, password.length() >= 20);
        assertEquals("admin", props.get("username"));
        String hash = String.valueOf(props.get("password"));
        assertTrue(hash, hash.startsWith("{sha-256}"));
        assertTrue("the plain password must not be in ConfigAdmin", !hash.contains(password));
    }
}
