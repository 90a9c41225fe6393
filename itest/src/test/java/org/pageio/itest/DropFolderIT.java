package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.BeforeClass;
import org.junit.Test;
import org.pageio.itest.kit.ConsoleShell;
import org.pageio.itest.kit.ExportedJar;
import org.pageio.itest.kit.ExportedJar.Run;

/**
 * The drop folder {@code <data>/load} of the exported container, {@code app/target/pageio.jar}:
 * the example third-party method ({@code examples/ratelimit-method}, system property
 * {@code pageio.tck.example}) dropped in before the start and while the container runs is
 * installed, started, listed by {@code pageio:methods}, swapped to and scanned through; removed,
 * it is uninstalled and the buffer manager falls back; a file that is not a bundle is reported in
 * one line. Plain JUnit, no Pax Exam.
 */
public class DropFolderIT {

    private static ExportedJar jar;
    private static Path example;
    private static Path target;

    @BeforeClass
    public static void findJars() {
        jar = ExportedJar.require();
        String p = System.getProperty("pageio.tck.example");
        assertTrue("pageio.tck.example is set by itest/pom.xml: " + p, p != null && Files.isRegularFile(Path.of(p)));
        example = Path.of(p);
        target = Path.of(PageioTestBase.dataDirectory()).getParent();
    }

    /** The line of {@code pageio:methods}' text output for {@code method}, or null. */
    private static String methodLine(String out, String method) {
        return out.lines().filter(l -> l.startsWith(method + " ")).findFirst().orElse(null);
    }

    @Test
    public void aBundleInTheFolderAtStartIsListedSwappedToAndScansThrough() throws Exception {
        Path data = ConsoleShell.freshData(target, "pageio-dropin-start");
        Path load = Files.createDirectories(data.resolve("load"));
        Path dropped = Files.copy(example, load.resolve(example.getFileName()));
        Run r = jar.exec(data, "pageio:methods; pageio:swap ratelimit; pageio:load --rows 20000 t; pageio:scan count t;"
                + " pageio:stat_io --format json");
        assertEquals("exit code; stderr: " + r.err() + "\nstdout: " + r.out(), 0, r.code());
        String line = methodLine(r.out(), "ratelimit");
        assertTrue(r.out(), line != null && line.contains("| yes ") && line.contains("| registered ")
                && line.contains("org.example.pageio.ratelimit 1.0.0"));
        assertTrue(r.err(), r.err().contains("pageio: " + dropped.toRealPath() + ": installed and started org.example.pageio.ratelimit 1.0.0"));
        assertTrue(r.out(), r.out().contains("count t: count=20000"));
        Matcher m = Pattern.compile("\"io_method\": \"ratelimit\", \"reads\": (\\d+)").matcher(r.out());
        long reads = 0;
        while (m.find()) {
            reads += Long.parseLong(m.group(1));
        }
        assertTrue("stat_io counts the scan's reads on ratelimit: " + r.out(), reads > 0);
    }

    /** A method whose reference cannot be satisfied is listed with the reference SCR waits for, not left out. */
    @Test
    public void aDroppedMethodThatCannotBeSatisfiedIsListedWithTheReferenceItWaitsFor() throws Exception {
        Path data = ConsoleShell.freshData(target, "pageio-dropin-unsatisfied");
        Files.copy(example, Files.createDirectories(data.resolve("load")).resolve(example.getFileName()));
        // FileInstall hands conf/<pid>.cfg to ConfigAdmin: the example's delegate filter matches no method
        Files.writeString(Files.createDirectories(data.resolve("conf")).resolve("org.example.pageio.ratelimit.cfg"),
                "delegate.target = (io.method=nosuch)\n");
        Run r = jar.exec(data, "pageio:methods");
        assertEquals("exit code; stderr: " + r.err(), 0, r.code());
        String line = methodLine(r.out(), "ratelimit");
        assertTrue(r.out(), line != null && line.contains("| no ") && line.contains("| unsatisfied: delegate "));
        // a long cause is cut in the row and given whole in a numbered note under the table
        assertTrue(r.out(), r.out().lines().anyMatch(l -> l.matches("\\(\\d+\\) .*")
                && l.endsWith("reference delegate needs a org.pageio.api.IoMethod service matching (io.method=nosuch)")));
    }

    @Test
    public void bundlesDroppedInWhileRunningAreInstalledAndRemovedAndABadJarIsOneLine() throws Exception {
        Path data = ConsoleShell.freshData(target, "pageio-dropin-live");
        ConsoleShell shell = ConsoleShell.start(jar, data);
        try {
            shell.awaitConsole("/system/console/pageio");
            Path load = data.resolve("load");
            assertEquals("the container creates load/ private", "rwx------",
                    PosixFilePermissions.toString(Files.getPosixFilePermissions(load)));
            shell.command("pageio:load --rows 20000 t", "loaded 20,000 rows into t");
            int mark = shell.log().length();
            shell.command("pageio:methods", "| bundle");
            assertTrue(shell.log(), methodLine(shell.log().substring(mark), "ratelimit") == null);

            mark = shell.log().length();
            Path bad = Files.writeString(load.resolve("notabundle.jar"), "not a zip\n");
            Path staged = Files.copy(example, data.resolve("staged.jar"), StandardCopyOption.REPLACE_EXISTING);
            Path dropped = Files.move(staged, load.resolve("ratelimit.jar"), StandardCopyOption.ATOMIC_MOVE);
            awaitLog(shell, mark, "ratelimit.jar: installed and started org.example.pageio.ratelimit 1.0.0");
            awaitMethods(shell, "ratelimit", true);

            shell.command("pageio:swap ratelimit", "| ratelimit ");
            shell.command("pageio:scan count t", "count t: count=20000");

            mark = shell.log().length();
            Files.delete(dropped);
            awaitLog(shell, mark, "ratelimit.jar: removed: org.example.pageio.ratelimit 1.0.0");
            awaitMethods(shell, "ratelimit", false);
            // the buffer manager fell back to io_method_fallback: scans go on
            shell.command("pageio:scan count t", "count t: count=20000");

            String log = shell.log();
            List<String> badLines = log.lines().filter(l -> l.contains(bad.getFileName().toString())).toList();
            assertEquals(log, 1, badLines.size());
            // the shell's prompt may precede it on the line
            assertTrue(log, badLines.getFirst().contains("pageio: " + bad.toRealPath() + ": not installed: it is not a jar (zip) file"));
            assertFalse("no stack trace: " + log, log.contains("\tat "));
        } catch (RuntimeException | AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n---- container log:\n" + shell.log(), e);
        } finally {
            shell.close();
        }
    }

    /** Types {@code pageio:methods} until {@code method} is listed as registered ({@code listed}) or is gone. */
    private static void awaitMethods(ConsoleShell shell, String method, boolean listed) throws Exception {
        for (int i = 0; i < 60; i++) {
            int mark = shell.log().length();
            shell.command("pageio:methods", "| bundle");
            String line = methodLine(shell.log().substring(mark), method);
            if (listed ? line != null && line.contains("| registered ") : line == null) {
                return;
            }
            Thread.sleep(1000);
        }
        throw new AssertionError("pageio:methods " + (listed ? "never listed " : "still lists ") + method);
    }

    /** Waits until the log shows {@code text} after {@code mark} (at most 90 s: a hang guard). */
    private static void awaitLog(ConsoleShell shell, int mark, String text) throws Exception {
        long deadline = System.currentTimeMillis() + 90_000;
        while (!shell.log().substring(mark).contains(text)) {
            if (System.currentTimeMillis() > deadline) {
                throw new AssertionError("the container did not print '" + text + "' within 90 s");
            }
            Thread.sleep(200);
        }
    }
}
