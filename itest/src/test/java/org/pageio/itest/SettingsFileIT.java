package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.CoreOptions.composite;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.function.Supplier;
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

/**
 * The settings file {@code <data>/conf/org.pageio.settings.cfg}, watched by Apache Felix
 * FileInstall as in the app. A valid line is applied (source {@code configuration file}); an invalid
 * one (out of range, wrong unit, unknown method, unknown name) is refused with a message naming the
 * setting and what is valid, and the old value stays in force in the running buffer manager (no
 * restart); {@code pageio:set} saves its value in the file; a line removed returns to the default.
 */
public class SettingsFileIT extends PageioTestBase {

    @Inject
    private CommandProcessor commands;

    @Inject
    private ConfigurationAdmin configAdmin;

    @Inject
    private BundleContext context;

    private static Path conf() {
        return Path.of(dataDirectory(), "conf");
    }

    private static Path file() {
        return conf().resolve("org.pageio.settings.cfg");
    }

    @Override
    protected Option extraOptions() {
        return composite(reactorBundle("org.osgi.service.log"), reactorBundle("org.apache.felix.metatype"),
                reactorBundle("org.apache.felix.fileinstall"),
                // as app/pageio.bndrun sets them (there: ${pageio.data}/conf)
                systemProperty("felix.fileinstall.dir").value(conf().toString()),
                systemProperty("felix.fileinstall.filter").value(".*\\.cfg"),
                systemProperty("felix.fileinstall.poll").value("200"),
                systemProperty("felix.fileinstall.noInitialDelay").value("true"),
                systemProperty("felix.fileinstall.enableConfigSave").value("false"),
                systemProperty("felix.fileinstall.disableNio2").value("true"),
                systemProperty("felix.fileinstall.log.level").value("1"));
    }

    @After
    public void cleanUp() throws Exception {
        Files.deleteIfExists(file());
        for (String pid : new String[] {"org.pageio.bufmgr", "org.pageio.method.worker"}) {
            Configuration[] cs = configAdmin.listConfigurations("(service.pid=" + pid + ")");
            if (cs != null) {
                for (Configuration c : cs) {
                    c.delete();
                }
            }
        }
    }

    @Test
    public void fileIsAppliedInvalidLinesAreRefusedAndTheOldValueStays() throws Exception {
        // the first start wrote the template: every setting commented out with its default and range
        await("the template", () -> Files.exists(file()) ? true : null);
        String template = Files.readString(file());
        assertTrue(template, template.contains("#effective_io_concurrency = 16"));
        assertTrue(template, template.contains("# 0..1000; restarts the buffer manager"));

        write("effective_io_concurrency = 24\nio_max_workers = 6\n");
        BufferManager b24 = await("effective_io_concurrency 24 from the file", () -> {
            BufferManager b = bufferManager();
            return b != null && b.settings().effectiveIoConcurrency() == 24 ? b : null;
        });
        String settings = run("pageio:settings");
        assertTrue(settings, row(settings, "effective_io_concurrency").matches(
                "effective_io_concurrency +\\| 24 +\\| +\\| configuration file +\\| user +\\| restart .*"));
        assertTrue(settings, row(settings, "io_max_workers").matches("io_max_workers +\\| 6 +\\| +\\| configuration file .*"));

        // out of range
        write("effective_io_concurrency = 5000\nio_max_workers = 6\n");
        assertRefused(file() + ":1: effective_io_concurrency = 5000 is outside the valid range 0..1000;"
                + " effective_io_concurrency stays 24", b24);
        // wrong unit
        write("effective_io_concurrency = 12MB\nio_max_workers = 6\n");
        assertRefused(file() + ":1: invalid value for effective_io_concurrency: '12MB'; effective_io_concurrency takes no unit;"
                + " valid range 0..1000; effective_io_concurrency stays 24", b24);
        // unknown method, unknown name; the valid line next to them is applied (live, no restart)
        write("effective_io_concurrency = 24\nio_method = nosuch\nio_max_workers = 7\nio_frobnicate = 1\n");
        String s = assertRefused(file() + ":2: invalid value for io_method: 'nosuch'; registered methods are sync, worker;"
                + " io_method stays worker", b24);
        assertTrue(s, s.contains("  " + file() + ":4: unknown setting 'io_frobnicate'; known: shared_buffers, "));
        await("io_max_workers 7", () -> row(safeRun("pageio:settings"), "io_max_workers").contains("| 7 ") ? true : null);
        assertSame("a refused line must not restart the buffer manager", b24, bufferManager());

        // a line that is no setting is a syntax error, not an unknown setting; refusals come in line order
        write("effective_io_concurrency = 24\nio_max_workers = 7\nzz_unknown = 1\nthis is garbage\nio_frobnicate = 2\n");
        String order = assertRefused(file() + ":4: syntax error: expected NAME = VALUE, got \"this is garbage\"", b24);
        int third = order.indexOf(file() + ":3: unknown setting 'zz_unknown'");
        int fourth = order.indexOf(file() + ":4: syntax error");
        int fifth = order.indexOf(file() + ":5: unknown setting 'io_frobnicate'");
        assertTrue(order, third >= 0 && third < fourth && fourth < fifth);
        assertTrue(order, !order.contains("unknown setting 'this'"));

        // pageio:set saves into the file; FileInstall reads it back and nothing changes
        String set = run("pageio:set effective_io_concurrency 40");
        assertTrue(set, set.endsWith("; saved in " + file()));
        assertTrue(Files.readString(file()), Files.readString(file()).contains("\neffective_io_concurrency = 40\n"));
        BufferManager b40 = await("40", () -> {
            BufferManager b = bufferManager();
            return b != null && b.settings().effectiveIoConcurrency() == 40 ? b : null;
        });
        Thread.sleep(1000); // FileInstall (200 ms poll) has read the file again
        String after = run("pageio:settings");
        assertTrue(after, row(after, "effective_io_concurrency").contains("| 40 ") && row(after, "effective_io_concurrency")
                .contains("| console "));
        assertSame(b40, bufferManager());

        // a line removed from the file: back to the default
        write("io_max_workers = 7\n");
        await("the default 16", () -> {
            BufferManager b = bufferManager();
            return b != null && b.settings().effectiveIoConcurrency() == 16 ? b : null;
        });
        System.out.println("---- pageio:settings with a refused line\n" + s);
    }

    /** Waits for the refusal in pageio:settings; the buffer manager in force is still {@code running}. */
    private String assertRefused(String message, BufferManager running) throws Exception {
        String s = await(message, () -> {
            String out = safeRun("pageio:settings");
            return out.contains("\n  " + message) ? out : null;
        });
        assertTrue(s, s.contains("refused from " + file() + " (the old values stay in force):"));
        assertSame("the buffer manager must not restart", running, bufferManager());
        assertEquals(24, running.settings().effectiveIoConcurrency());
        return s;
    }

    // ------------------------------------------------------------------ helpers

    private static void write(String content) throws Exception {
        Files.createDirectories(conf());
        Path tmp = conf().resolve(".settings.tmp");
        Files.writeString(tmp, content, StandardCharsets.UTF_8);
        Files.move(tmp, file(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private BufferManager bufferManager() {
        var ref = context.getServiceReference(BufferManager.class);
        return ref == null ? null : context.getService(ref);
    }

    private String run(String command) throws Exception {
        PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        try (CommandSession session = commands.createSession(InputStream.nullInputStream(), out, out)) {
            return String.valueOf(session.execute(command));
        }
    }

    private String safeRun(String command) {
        try {
            return run(command);
        } catch (Exception e) {
            return "";
        }
    }

    private static String row(String table, String name) {
        for (String line : table.split("\n")) {
            if (line.startsWith(name + " ")) {
                return line;
            }
        }
        return "";
    }

    private static <T> T await(String what, Supplier<T> probe) throws InterruptedException {
        return awaitNonNull(what, 20_000, probe);
    }
}
