package org.pageio.itest;

import static org.ops4j.pax.exam.CoreOptions.bundle;
import static org.ops4j.pax.exam.CoreOptions.composite;
import static org.ops4j.pax.exam.CoreOptions.junitBundles;
import static org.ops4j.pax.exam.CoreOptions.options;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;

import java.io.File;

import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Constants;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;

/**
 * Base of every pageio integration test: a Felix (Pax Exam native container) with Declarative
 * Services, ConfigAdmin, the Gogo runtime, and our api, sync and console bundles.
 *
 * <p>To test one more bundle (a method bundle, say), extend this class and override
 * {@link #extraOptions()}:
 * <pre>{@code
 * @Override
 * protected Option extraOptions() {
 *     return reactorBundle("my-method-bundle");
 * }
 * }</pre>
 * and, in {@code itest/pom.xml}, add the module as a test dependency plus one failsafe
 * {@code systemPropertyVariables} line: {@code <bundle.my-method-bundle>${org.example:my-method-bundle:jar}</bundle.my-method-bundle>}.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public abstract class PageioTestBase {

    /**
     * No I/O stayed in flight longer than {@code io_hang_warning} in this container (the watchdog's
     * report, with the handle and the threads' stacks, is in the log): a hang fails the run.
     */
    @org.junit.After
    public void noIoHung() {
        long n = org.pageio.api.AioContext.hangWarnings();
        org.junit.Assert.assertEquals("io_hang_warning reported " + n + " I/O(s) stuck in flight: see the log", 0, n);
    }

    /** The bundles every test container has, besides JUnit's. */
    static final String[] FRAMEWORK_BUNDLES = {
        "org.osgi.util.function",
        "org.osgi.util.promise",
        "org.osgi.service.component",
        "org.apache.felix.scr",
        "org.apache.felix.configadmin",
        "org.apache.felix.gogo.runtime",
        "com.fasterxml.jackson.core", // console-bundle writes its JSON with jackson-core
    };

    static final String[] PAGEIO_BUNDLES = {"api-bundle", "sync-bundle", "worker-bundle", "bufmgr-bundle", "table-bundle",
        "fault-bundle", "console-bundle"}; // console's soak wraps methods in the fault decorator

    @Configuration
    public final Option[] containerConfiguration() {
        Option[] framework = new Option[FRAMEWORK_BUNDLES.length];
        for (int i = 0; i < framework.length; i++) {
            framework[i] = reactorBundle(FRAMEWORK_BUNDLES[i]);
        }
        Option[] pageio = new Option[PAGEIO_BUNDLES.length];
        for (int i = 0; i < pageio.length; i++) {
            pageio[i] = reactorBundle(PAGEIO_BUNDLES[i]);
        }
        return options(
                systemProperty(Constants.EXAM_FAIL_ON_UNRESOLVED_KEY).value("true"),
                // console-bundle writes webconsole.password there; keep it inside target/
                systemProperty("pageio.data").value(dataDirectory()),
                composite(framework),
                composite(pageio),
                junitBundles(),
                extraOptions());
    }

    /**
     * What a subclass adds to the container: usually {@code reactorBundle("my-bundle")}, or a
     * {@code composite(...)} of several options. None by default.
     */
    protected Option extraOptions() {
        return composite();
    }

    /**
     * The bundle whose jar the failsafe system property {@code bundle.<name>} points at
     * (set in {@code itest/pom.xml} from {@code maven-dependency-plugin:properties}).
     */
    protected static Option reactorBundle(String name) {
        String key = "bundle." + name;
        String path = System.getProperty(key);
        if (path == null || path.isBlank() || path.startsWith("${")) {
            throw new IllegalStateException("system property " + key + " is not set: add " + name
                    + " as a test dependency of itest and a <" + key + "> line to failsafe's"
                    + " systemPropertyVariables in itest/pom.xml (was: " + path + ")");
        }
        File f = new File(path);
        if (!f.isFile()) {
            throw new IllegalStateException(key + "=" + path + " is not a file; run the build through"
                    + " `mvn verify` from the top-level directory");
        }
        return bundle(f.toURI().toString());
    }

    static String dataDirectory() {
        String dir = System.getProperty("pageio.itest.data");
        if (dir == null || dir.isBlank()) {
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
