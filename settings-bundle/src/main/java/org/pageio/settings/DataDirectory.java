package org.pageio.settings;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

import org.osgi.framework.BundleContext;

/**
 * The pageio data directory: framework or system property {@code pageio.data} (default
 * {@code ./data}), resolved to an absolute path and created when missing. Every directory pageio
 * creates in it (and the data directory itself) is private: {@code rwx------} (0700), as
 * PostgreSQL's; the buffer manager refuses a data directory that group or others can write.
 */
public final class DataDirectory {

    /** Framework/system property naming the data directory. */
    public static final String PROPERTY = "pageio.data";
    /**
     * Framework/system property naming the directory the drill writes its result files to
     * ({@code ./pageio drill} sets it to the checkout's {@code drill-results}); the Web Console page
     * shows the newest of them.
     */
    public static final String DRILL_RESULTS_PROPERTY = "pageio.drill.results";
    /** Used when {@link #PROPERTY} is not set: relative to the working directory. */
    public static final String DEFAULT = "./data";

    private static final FileAttribute<Set<PosixFilePermission>> PRIVATE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));

    private DataDirectory() {
    }

    /** {@link Files#createDirectories}, each directory created {@code rwx------}; returns {@code dir}. */
    public static Path createPrivate(Path dir) throws IOException {
        return Files.createDirectories(dir, PRIVATE);
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
            createPrivate(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the pageio data directory " + dir + " ("
                    + PROPERTY + "=" + v + "): " + e, e);
        }
        return dir;
    }
}
