package org.pageio.settings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the drop folder says of a file that is not a bundle, on real files. */
class BundleJarTest {

    @TempDir
    Path dir;

    private Path jar(String name, String symbolicName) throws IOException {
        Manifest mf = new Manifest();
        mf.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        if (symbolicName != null) {
            mf.getMainAttributes().putValue("Bundle-SymbolicName", symbolicName);
        }
        Path jar = dir.resolve(name);
        try (JarOutputStream j = new JarOutputStream(Files.newOutputStream(jar), mf)) {
            j.putNextEntry(new ZipEntry("a.txt"));
        }
        return jar;
    }

    @Test
    void aBundleHasNoProblem() throws IOException {
        assertNull(BundleJar.problem(jar("b.jar", "org.example.b")));
    }

    @Test
    void aJarWithoutSymbolicNameIsNotABundle() throws IOException {
        assertEquals("it is a jar but not an OSGi bundle: its manifest has no Bundle-SymbolicName; build it with bnd"
                + " (bnd-maven-plugin)", BundleJar.problem(jar("plain.jar", null)));
    }

    @Test
    void aZipWithoutManifestAndAFileThatIsNoZipAreRefused() throws IOException {
        Path zip = dir.resolve("z.jar");
        try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(zip))) {
            z.putNextEntry(new ZipEntry("a.txt"));
        }
        assertEquals("it has no META-INF/MANIFEST.MF, so it is not an OSGi bundle; build it with bnd (bnd-maven-plugin)",
                BundleJar.problem(zip));
        Path text = Files.writeString(dir.resolve("t.jar"), "not a zip\n");
        String p = BundleJar.problem(text);
        assertTrue(p.startsWith("it is not a jar (zip) file: "), p);
        assertEquals("it is not a regular file", BundleJar.problem(dir));
    }
}
