package org.pageio.console;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.osgi.framework.BundleContext;

/**
 * The pageio data directory: framework or system property {@code pageio.data} (default
 * {@code ./data}), resolved to an absolute path and created when missing.
 */
public final class DataDirectory {

    /** Framework/system property naming the data directory. */
    public static final String PROPERTY = "pageio.data";
    /** Used when {@link #PROPERTY} is not set: relative to the working directory. */
    public static final String DEFAULT = "./data";

    private DataDirectory() {
    }

    /** Resolves and creates the data directory that {@code context}'s properties name. */
    public static Path of(BundleContext context) {
        return of(context.getProperty(PROPERTY));
    }

    /** Resolves and creates {@code value} (or the default when null or blank). */
    public static Path of(String value) {
        String v = value == null || value.isBlank() ? DEFAULT : value.trim();
        Path dir = Path.of(v).toAbsolutePath().normalize();
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the pageio data directory " + dir + " ("
                    + PROPERTY + "=" + v + "): " + e, e);
        }
        return dir;
    }
}
