package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Collectors;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.Test;
import org.junit.runner.JUnitCore;
import org.junit.runner.Result;
import org.junit.runner.notification.Failure;
import org.pageio.itest.tck.ThirdPartyMethodTck;

/**
 * What {@code ./pageio tck JAR} does, run on bundles built outside pageio's parent pom:
 * the examples {@code examples/ratelimit-method} (a decorator) and {@code examples/vthread-method}
 * (its own I/O on virtual threads) must pass every test of the kit, and the broken
 * fixture {@code tck/broken-method} (completes each I/O twice) must fail, every failure saying
 * why in one readable sentence; a file that is not a bundle is refused by {@code ./pageio tck}
 * before anything is built. A plain JUnit test: it runs the Pax Exam kit itself, once per jar.
 */
public class TckSelfIT {

    private static Result tck(String jarProperty) {
        String jar = System.getProperty(jarProperty);
        assertTrue(jarProperty + " is set by itest/pom.xml: " + jar, jar != null && !jar.startsWith("${"));
        String old = System.getProperty(ThirdPartyMethodTck.BUNDLE_PROPERTY);
        System.setProperty(ThirdPartyMethodTck.BUNDLE_PROPERTY, jar);
        try {
            return new JUnitCore().run(ThirdPartyMethodTck.class);
        } finally {
            if (old == null) {
                System.clearProperty(ThirdPartyMethodTck.BUNDLE_PROPERTY);
            } else {
                System.setProperty(ThirdPartyMethodTck.BUNDLE_PROPERTY, old);
            }
        }
    }

    private static String describe(Result r) {
        return r.getRunCount() + " run, " + r.getFailureCount() + " failed: " + r.getFailures().stream()
                .map(f -> f.getDescription().getMethodName() + ": " + f.getMessage()).collect(Collectors.joining("; "));
    }

    /** Runs the kit on the jar {@code jarProperty} names: every test must run and pass. */
    private static void passes(String jarProperty, String name) {
        Result r = tck(jarProperty);
        System.out.println("TckSelfIT: " + name + ": " + describe(r));
        assertTrue(describe(r), r.getRunCount() >= 46);
        assertEquals(describe(r), 0, r.getFailureCount());
        assertEquals(describe(r), 0, r.getIgnoreCount());
    }

    @Test
    public void theExampleThirdPartyMethodPasses() {
        passes("pageio.tck.example", "ratelimit-method");
    }

    /** The second example, {@code examples/vthread-method}: a method that does its own I/O, on virtual threads. */
    @Test
    public void theVirtualThreadExampleMethodPasses() {
        passes("pageio.tck.vthread", "vthread-method");
    }

    @Test
    public void theBrokenMethodFailsWithAReadableReason() {
        Result r = tck("pageio.tck.broken");
        System.out.println("TckSelfIT: broken-method: " + describe(r));
        assertTrue(describe(r), r.getRunCount() >= 46);
        assertFalse("the kit passed a method that completes every I/O twice: " + describe(r), r.wasSuccessful());
        for (Failure f : r.getFailures()) {
            String m = String.valueOf(f.getMessage());
            assertTrue("readable reason, not a bare stack trace: " + m, m.contains("io_method=broken_twice called"
                    + " IoHandle.complete()") && m.contains("a method must complete each I/O exactly once"));
        }
    }

    /**
     * {@code ./pageio tck FILE} on a file that is not a method bundle: refused before anything is
     * built, exit 2, one line naming the file and what is wrong (no Pax Exam "Problem starting test
     * container" with the cause buried in the log).
     */
    @Test
    public void aFileThatIsNotABundleIsRefusedUpFrontInOneLine() throws Exception {
        Path itest = Path.of(System.getProperty("user.dir")); // failsafe runs in itest/
        Path script = itest.getParent().resolve("pageio");
        assertTrue(script + " is the launcher", Files.isRegularFile(script));
        Path dir = Files.createTempDirectory(Files.createDirectories(itest.resolve("target")), "tck-input");
        Path zip = dir.resolve("plain.zip");
        try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(zip))) {
            z.putNextEntry(new ZipEntry("a.txt"));
            z.write("not a bundle\n".getBytes(StandardCharsets.UTF_8));
        }
        Path noName = dir.resolve("plain.jar");
        Manifest mf = new Manifest();
        mf.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        mf.getMainAttributes().putValue("Bundle-Name", "a jar without Bundle-SymbolicName");
        try (JarOutputStream j = new JarOutputStream(Files.newOutputStream(noName), mf)) {
            j.putNextEntry(new ZipEntry("a.txt"));
        }
        Map<String, String> expected = new LinkedHashMap<>();
        expected.put("/etc/passwd", "pageio: tck: /etc/passwd is not a jar (zip) file; pass the .jar the method bundle's build made");
        expected.put(zip.toString(), "pageio: tck: " + zip + " has no META-INF/MANIFEST.MF, so it is not an OSGi bundle;"
                + " build it with bnd (bnd-maven-plugin)");
        expected.put(noName.toString(), "pageio: tck: " + noName + " is a jar but not an OSGi bundle: its manifest has no"
                + " Bundle-SymbolicName; build it with bnd (bnd-maven-plugin)");
        for (Map.Entry<String, String> e : expected.entrySet()) {
            Path out = dir.resolve("out.txt");
            Path err = dir.resolve("err.txt");
            ProcessBuilder pb = new ProcessBuilder("bash", script.toString(), "tck", e.getKey())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(out.toFile()).redirectError(err.toFile());
            pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
            Process p = pb.start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
                throw new AssertionError("./pageio tck " + e.getKey() + " did not refuse the file up front (still running"
                        + " after 60 s): " + Files.readString(err));
            }
            assertEquals(Files.readString(err), 2, p.exitValue());
            assertEquals(e.getValue(), Files.readString(err).strip());
            assertEquals("", Files.readString(out));
        }
    }
}
