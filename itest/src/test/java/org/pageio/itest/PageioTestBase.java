package org.pageio.itest;

import static org.ops4j.pax.exam.CoreOptions.bundle;

import java.io.File;

import org.ops4j.pax.exam.Option;
import org.pageio.tck.KitContainer;

/**
 * Base of every pageio integration test: the conformance kit's Felix container ({@link KitContainer}:
 * Declarative Services, ConfigAdmin, the Gogo runtime, pageio's api, sync, worker, buffer manager,
 * table, fault and console bundles), which finds its bundles on the class path.
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
public abstract class PageioTestBase extends KitContainer {

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
}
