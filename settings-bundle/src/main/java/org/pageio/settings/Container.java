package org.pageio.settings;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.concurrent.ExecutionException;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.startlevel.BundleStartLevel;
import org.osgi.framework.startlevel.FrameworkStartLevel;
import org.osgi.framework.wiring.BundleRevision;

/**
 * Facts about the running container that the settings file, the drop folder, the shell and the web
 * side all ask: whether it runs a script ({@value #EXEC_PROPERTY}) rather than an interactive shell,
 * whether it has finished starting, and a failure said in one line.
 */
public final class Container {

    /** The framework property holding the script of {@code ./pageio exec}: set, the container runs it and exits. */
    public static final String EXEC_PROPERTY = "pageio.exec";

    private Container() {
    }

    /** Framework ACTIVE at (at least) the highest bundle start level, every started bundle ACTIVE. */
    public static boolean settled(BundleContext context) {
        try {
            Bundle system = context.getBundle(Constants.SYSTEM_BUNDLE_LOCATION);
            if (system.getState() != Bundle.ACTIVE) {
                return false;
            }
            int level = system.adapt(FrameworkStartLevel.class).getStartLevel();
            for (Bundle b : context.getBundles()) {
                if (b.getBundleId() == 0) {
                    continue;
                }
                BundleRevision rev = b.adapt(BundleRevision.class);
                if (rev != null && (rev.getTypes() & BundleRevision.TYPE_FRAGMENT) != 0) {
                    continue;
                }
                BundleStartLevel bsl = b.adapt(BundleStartLevel.class);
                if (bsl == null || !bsl.isPersistentlyStarted()) {
                    continue;
                }
                if (bsl.getStartLevel() > level || b.getState() != Bundle.ACTIVE) {
                    return false;
                }
            }
            return true;
        } catch (IllegalStateException stopping) {
            return false;
        }
    }

    /** One line: the root cause's message, or its class name when it has none. */
    public static String message(Throwable e) {
        Throwable t = rootCause(e);
        String m = t.getMessage();
        if (m == null || m.isBlank()) {
            m = t.getClass().getSimpleName();
        } else if (t instanceof NullPointerException || t instanceof ClassCastException
                || t instanceof IndexOutOfBoundsException || t instanceof ArithmeticException) {
            m = t.getClass().getSimpleName() + ": " + m;
        }
        return m.strip().replaceAll("\\s*[\\r\\n]+\\s*", " ");
    }

    /** {@code e} without the reflection and execution wrappers around what the command threw. */
    public static Throwable rootCause(Throwable e) {
        Throwable t = e;
        while ((t instanceof InvocationTargetException || t instanceof UndeclaredThrowableException
                || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

}
