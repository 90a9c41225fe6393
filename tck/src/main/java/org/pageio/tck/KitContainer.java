package org.pageio.tck;

import static org.ops4j.pax.exam.CoreOptions.bundle;
import static org.ops4j.pax.exam.CoreOptions.composite;
import static org.ops4j.pax.exam.CoreOptions.junitBundles;
import static org.ops4j.pax.exam.CoreOptions.options;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.jar.Manifest;
import org.junit.After;
import org.junit.Assert;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Constants;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.pageio.api.AioContext;

/**
 * The Felix container the kit runs in (Pax Exam native container, JUnit 4 runner, one container
 * per test class): Declarative Services, ConfigAdmin, the Gogo runtime, pageio's api, sync,
 * worker, buffer manager, table, fault and console bundles, and this kit's own bundle.
 *
 * <p>Every bundle is taken from the test's class path by its {@code Bundle-SymbolicName}: a build
 * that depends on {@code org.pageio:pageio-tck} has them all there, as that artifact's
 * dependencies, so the container is exactly what Maven resolved and nothing is downloaded at run
 * time except JUnit's and Pax Exam's own bundles ({@code junitBundles()}, from the local Maven
 * repository). A subclass adds bundles through {@link #extraOptions()}, e.g. its own with
 * {@link #classpathBundle(String)}.
 *
 * <p>Runs on the JUnit 4 platform (Pax Exam 4's runner); a build on JUnit 5 runs it through the
 * vintage engine. {@link InProcessMethodKit} runs the kit's tests without this container.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public abstract class KitContainer {

    /** The system property naming the container's data directory (default {@code target/pageio-data}). */
    public static final String DATA_PROPERTY = "pageio.itest.data";

    /** The framework bundles every container has, besides JUnit's: their symbolic names. */
    public static final String[] FRAMEWORK_BUNDLES = {
        "org.osgi.util.function",
        "org.osgi.util.promise",
        "org.osgi.service.component",
        "org.apache.felix.scr",
        "org.apache.felix.configadmin",
        "org.apache.felix.gogo.runtime",
        "com.fasterxml.jackson.core.jackson-core", // report-bundle writes its JSON with jackson-core
    };

    /**
     * pageio's bundles every container has: their symbolic names (the kit's fault plans wrap methods in
     * the fault decorator; the settings service and the shell give the container the user's commands).
     */
    public static final String[] PAGEIO_BUNDLES = {"org.pageio.api", "org.pageio.method.sync", "org.pageio.method.worker",
        "org.pageio.bufmgr", "org.pageio.heap", "org.pageio.table", "org.pageio.pgdata", "org.pageio.method.fault", "org.pageio.report",
        "org.pageio.settings", "org.pageio.shell", "org.pageio.tck"};

    /**
     * No I/O stayed in flight longer than {@code io_hang_warning} in this container (the watchdog's
     * report, with the handle and the threads' stacks, is in the log): a hang fails the run.
     */
    @After
    public void noIoHung() {
        long n = AioContext.hangWarnings();
        Assert.assertEquals("io_hang_warning reported " + n + " I/O(s) stuck in flight: see the log", 0, n);
    }

    @Configuration
    public final Option[] containerConfiguration() {
        Option[] framework = new Option[FRAMEWORK_BUNDLES.length];
        for (int i = 0; i < framework.length; i++) {
            framework[i] = classpathBundle(FRAMEWORK_BUNDLES[i]);
        }
        Option[] pageio = new Option[PAGEIO_BUNDLES.length];
        for (int i = 0; i < pageio.length; i++) {
            pageio[i] = classpathBundle(PAGEIO_BUNDLES[i]);
        }
        return options(
                systemProperty(Constants.EXAM_FAIL_ON_UNRESOLVED_KEY).value("true"),
                // the web side writes webconsole.password there; keep it inside target/
                systemProperty("pageio.data").value(dataDirectory()),
                composite(framework),
                composite(pageio),
                junitBundles(),
                extraOptions());
    }

    /**
     * What a subclass adds to the container: usually {@code classpathBundle("org.example.mine")},
     * or a {@code composite(...)} of several options. None by default.
     */
    protected Option extraOptions() {
        return composite();
    }

    /**
     * The bundle jar with this {@code Bundle-SymbolicName} on the test's class path. Fails naming
     * the bundle and what to add to the build when there is none.
     */
    public static Option classpathBundle(String symbolicName) {
        String location = classpathBundles().get(symbolicName);
        if (location == null) {
            throw new IllegalStateException("no bundle " + symbolicName + " on the test class path: add the artifact"
                    + " that holds it as a test dependency (pageio's own bundles come with org.pageio:pageio-tck)");
        }
        return bundle(location);
    }

    private static Map<String, String> bundles;

    /** Every bundle jar on the class path, by symbolic name: the location Felix installs it from. */
    static synchronized Map<String, String> classpathBundles() {
        if (bundles != null) {
            return bundles;
        }
        Map<String, String> found = new LinkedHashMap<>();
        try {
            Enumeration<URL> manifests = KitContainer.class.getClassLoader().getResources("META-INF/MANIFEST.MF");
            while (manifests.hasMoreElements()) {
                URL url = manifests.nextElement();
                String bsn = symbolicName(url);
                String location = location(url);
                if (bsn != null && location != null) {
                    found.putIfAbsent(bsn, location);
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot list the bundles on the class path: " + e, e);
        }
        bundles = found;
        return found;
    }

    /** The manifest's {@code Bundle-SymbolicName} without its directives, or null when it has none. */
    private static String symbolicName(URL manifest) throws IOException {
        try (InputStream in = manifest.openStream()) {
            String bsn = new Manifest(in).getMainAttributes().getValue("Bundle-SymbolicName");
            return bsn == null ? null : bsn.split(";", 2)[0].strip();
        }
    }

    /** The jar the manifest is in, as a URI; null when it is not in a jar (a folder of classes). */
    private static String location(URL manifest) throws IOException {
        if (!"jar".equals(manifest.getProtocol())) {
            return null;
        }
        try {
            JarURLConnection c = (JarURLConnection) manifest.openConnection();
            c.setUseCaches(false);
            return new File(c.getJarFileURL().toURI()).toURI().toString();
        } catch (URISyntaxException e) {
            return null;
        }
    }

    /** The container's data directory: system property {@value #DATA_PROPERTY}, else {@code target/pageio-data}. */
    public static String dataDirectory() {
        String dir = System.getProperty(DATA_PROPERTY);
        if (dir == null || dir.isBlank() || dir.startsWith("${")) {
            dir = new File("target/pageio-data").getAbsolutePath();
        }
        return dir;
    }

    /**
     * Polls {@code probe} every 20 ms until it returns non-null, and returns that; fails naming
     * {@code what} after {@code timeoutMillis}.
     */
    protected static <T> T awaitNonNull(String what, long timeoutMillis, java.util.function.Supplier<T> probe)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (System.nanoTime() < deadline) {
            T v = probe.get();
            if (v != null) {
                return v;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("timed out waiting for " + what);
    }
}
