package org.pageio.tck;

import static org.ops4j.pax.exam.CoreOptions.bundle;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import javax.inject.Inject;
import org.ops4j.pax.exam.Option;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.pageio.api.IoMethod;

/**
 * The method conformance kit against one method bundle: the jar {@link #bundleUnderTest()} names
 * (by default the system property {@value #BUNDLE_PROPERTY}) is installed into the kit's Felix
 * container, and the {@link IoMethod} service it registers is run through every test of
 * {@link MethodConformanceKit}. A method bundle's own build runs it from Failsafe:
 *
 * <pre>
 * public class MyMethodConformanceIT extends MethodBundleKit {
 * }
 * </pre>
 *
 * with {@code <pageio.tck.bundle>${project.build.directory}/${project.build.finalName}.jar</pageio.tck.bundle>}
 * in Failsafe's {@code systemPropertyVariables} ({@code README.md}, "Writing an I/O method").
 * {@code ./pageio tck path/to/method-bundle.jar} runs it on a jar built anywhere.
 */
public abstract class MethodBundleKit extends MethodConformanceKit {

    /** The system property naming the method bundle's jar (an absolute path). */
    public static final String BUNDLE_PROPERTY = "pageio.tck.bundle";
    /** Which method, when the bundle registers several: its {@code io.method} name. */
    public static final String METHOD_PROPERTY = "pageio.tck.method";

    @Inject
    private BundleContext context;

    private IoMethod method;

    /**
     * The method bundle's jar: by default the system property {@value #BUNDLE_PROPERTY}. Called
     * outside the container (to provision it) and inside (to find its service).
     */
    protected File bundleUnderTest() {
        String path = System.getProperty(BUNDLE_PROPERTY, "");
        if (path.isBlank() || path.startsWith("${")) {
            throw new IllegalStateException("no method bundle to check: set the system property " + BUNDLE_PROPERTY
                    + " to its jar (in Failsafe's systemPropertyVariables), or run ./pageio tck path/to/method-bundle.jar");
        }
        File f = new File(path).getAbsoluteFile();
        if (!f.isFile()) {
            throw new IllegalStateException("method bundle " + f + " does not exist: build it first, then run ./pageio tck " + f);
        }
        return f;
    }

    @Override
    protected Option extraOptions() {
        return bundle(bundleUnderTest().toURI().toString());
    }

    @Override
    protected IoMethod method() {
        if (method == null) {
            method = find();
        }
        return method;
    }

    /** The IoMethod service the bundle under test registered; waits up to 10 s for DS to register it. */
    private IoMethod find() {
        String location = bundleUnderTest().toURI().toString();
        Bundle b = null;
        for (Bundle x : context.getBundles()) {
            if (location.equals(x.getLocation())) {
                b = x;
            }
        }
        if (b == null) {
            throw new AssertionError("bundle " + location + " was not installed in the container");
        }
        String wanted = System.getProperty(METHOD_PROPERTY, "");
        long deadline = System.nanoTime() + 10_000_000_000L;
        List<String> names = new ArrayList<>();
        while (true) {
            names.clear();
            ServiceReference<?>[] refs = b.getRegisteredServices();
            ServiceReference<?> chosen = null;
            for (ServiceReference<?> r : refs == null ? new ServiceReference<?>[0] : refs) {
                String[] classes = (String[]) r.getProperty("objectClass");
                if (List.of(classes).contains(IoMethod.class.getName())) {
                    String n = String.valueOf(r.getProperty(IoMethod.PROPERTY));
                    names.add(n);
                    if (wanted.isEmpty() || wanted.equals(n)) {
                        chosen = r;
                    }
                }
            }
            if (chosen != null && (names.size() == 1 || !wanted.isEmpty())) {
                return (IoMethod) context.getService(chosen);
            }
            if (names.size() > 1) {
                throw new AssertionError("bundle " + b.getSymbolicName() + " registers several I/O methods " + names
                        + ": choose one with -D" + METHOD_PROPERTY + "=NAME");
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("bundle " + b.getSymbolicName() + " " + b.getVersion() + " (state "
                        + state(b.getState()) + ") registered no " + IoMethod.class.getName() + " service"
                        + (wanted.isEmpty() ? "" : " with io.method=" + wanted) + " within 10 s: register one with the"
                        + " property io.method=<name>, e.g. @Component(service = IoMethod.class, property = \"io.method=mine\"),"
                        + " and check that its references (a delegate method?) are satisfied in this container");
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for the method service", e);
            }
        }
    }

    private static String state(int s) {
        return switch (s) {
            case Bundle.ACTIVE -> "ACTIVE";
            case Bundle.RESOLVED -> "RESOLVED";
            case Bundle.INSTALLED -> "INSTALLED (not resolved)";
            case Bundle.STARTING -> "STARTING";
            default -> String.valueOf(s);
        };
    }
}
