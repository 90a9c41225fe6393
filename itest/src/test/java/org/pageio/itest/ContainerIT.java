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
import org.ops4j.pax.exam.util.Filter;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.pageio.api.IoMethod;

/** The container comes up with the sync method and the pageio Gogo commands. */
public class ContainerIT extends PageioTestBase {

    @Inject
    @Filter("(io.method=sync)")
    private IoMethod sync;

    @Inject
    private CommandProcessor commands;

    @Inject
    private ConfigurationAdmin configAdmin;

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
