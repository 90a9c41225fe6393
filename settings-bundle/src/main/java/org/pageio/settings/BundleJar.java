package org.pageio.settings;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.zip.ZipException;

import org.osgi.framework.Constants;

/** What keeps a file from being installed as an OSGi bundle, said in one sentence for its user. */
final class BundleJar {

    private BundleJar() {
    }

    /**
     * Null when {@code jar} is a readable jar whose manifest names a {@code Bundle-SymbolicName};
     * otherwise why it is not a bundle (the framework's own checks of the headers come after).
     */
    static String problem(Path jar) {
        if (!Files.isRegularFile(jar)) {
            return "it is not a regular file";
        }
        if (!Files.isReadable(jar)) {
            return "it cannot be read (check its permissions)";
        }
        try (JarFile j = new JarFile(jar.toFile())) {
            Manifest m = j.getManifest();
            if (m == null) {
                return "it has no META-INF/MANIFEST.MF, so it is not an OSGi bundle; build it with bnd (bnd-maven-plugin)";
            }
            String name = m.getMainAttributes().getValue(Constants.BUNDLE_SYMBOLICNAME);
            if (name == null || name.isBlank()) {
                return "it is a jar but not an OSGi bundle: its manifest has no Bundle-SymbolicName;"
                        + " build it with bnd (bnd-maven-plugin)";
            }
            return null;
        } catch (ZipException e) {
            return "it is not a jar (zip) file: " + e.getMessage();
        } catch (IOException | SecurityException e) {
            return "it cannot be read as a jar: " + e;
        }
    }
}
