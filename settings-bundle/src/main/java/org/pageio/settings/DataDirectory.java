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
 * {@code ./data}), resolved to an absolute path and created when missing (its last level only:
 * its parent must exist). Every directory pageio
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

    /**
     * Resolves {@code value} (or the default when null or blank) and creates it when missing: the
     * last level only, as {@code initdb} does, so that a mistyped path does not grow a tree from
     * {@code /}.
     *
     * @throws UncheckedIOException in one line: its parent does not exist ({@code cannot create the data
     *         directory /a/b/c: its parent /a/b does not exist; create it first or name another
     *         directory}), it is not a directory, or it cannot be created (and why)
     */
    public static Path of(String value) {
        String v = value == null || value.isBlank() ? DEFAULT : value.trim();
        Path dir = Path.of(v).toAbsolutePath().normalize();
        if (Files.isDirectory(dir)) {
            return dir;
        }
        if (Files.exists(dir)) {
            throw refusal("the data directory " + dir
                    + " is not a directory; name a directory (an existing one, or a new one in an existing directory)", null);
        }
        Path parent = dir.getParent();
        if (parent != null && !Files.isDirectory(parent)) {
            throw refusal("cannot create the data directory " + dir + ": its parent " + parent
                    + (Files.exists(parent) ? " is not a directory" : " does not exist")
                    + "; create it first or name another directory", null);
        }
        try {
            Files.createDirectory(dir, PRIVATE);
        } catch (java.nio.file.FileAlreadyExistsException raced) {
            if (!Files.isDirectory(dir)) {
                throw refusal("the data directory " + dir + " is not a directory", raced);
            }
        } catch (IOException e) {
            String why = e instanceof java.nio.file.AccessDeniedException ? "permission denied in " + parent : e.toString();
            throw refusal("cannot create the data directory " + dir + ": " + why + "; name another directory", e);
        }
        return dir;
    }

    private static UncheckedIOException refusal(String message, IOException cause) {
        return new UncheckedIOException(message, cause != null ? cause : new IOException(message));
    }
}
