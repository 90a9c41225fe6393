package org.pageio.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.settings.DataDirectory;

class WebConsoleCredentialsTest {

    @TempDir
    Path dir;

    @Test
    void createsOwnerOnlyFileOnceAndReadsIt() throws Exception {
        Path file = dir.resolve(WebConsoleCredentials.FILE_NAME);
        assertNull(WebConsoleCredentials.read(file));
        assertTrue(WebConsoleCredentials.createFile(file, "first-password-0123456789"));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        assertFalse(WebConsoleCredentials.createFile(file, "second-password-0123456789"));
        assertEquals("first-password-0123456789", WebConsoleCredentials.read(file));
        try (var files = Files.list(dir)) {
            assertEquals(1, files.count(), "no temporary file left behind");
        }
    }

    @Test
    void tightensLoosePermissions() throws Exception {
        Path file = dir.resolve(WebConsoleCredentials.FILE_NAME);
        Files.writeString(file, "  hand-written-password \nsecond line\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        assertEquals("hand-written-password", WebConsoleCredentials.read(file));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    }

    @Test
    void blankFileCountsAsMissing() throws Exception {
        Path file = dir.resolve(WebConsoleCredentials.FILE_NAME);
        Files.writeString(file, "\n\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        assertNull(WebConsoleCredentials.read(file));
    }

    @Test
    void theUrlIsAnnouncedOnlyWhenHttpIsServed() {
        Path file = dir.resolve(WebConsoleCredentials.FILE_NAME);
        String url = "pageio: Web Console at http://127.0.0.1:8080/system/console — user admin, password in " + file;
        // the shell: always, with the port in force
        assertEquals(url, WebConsoleCredentials.announcement(java.util.Map.<String, String>of()::get, false, file));
        assertEquals(url.replace("8080", "9090"), WebConsoleCredentials.announcement(
                java.util.Map.of("org.osgi.service.http.port", "9090")::get, false, file));
        // exec with --port: once, when the password is new
        java.util.Map<String, String> execWithPort = java.util.Map.of("pageio.exec", "pageio:methods",
                "org.osgi.service.http.port", "9090");
        assertEquals(url.replace("8080", "9090"), WebConsoleCredentials.announcement(execWithPort::get, true, file));
        assertNull(WebConsoleCredentials.announcement(execWithPort::get, false, file));
        // exec without --port serves no HTTP: no URL, only where a new password went
        java.util.Map<String, String> execNoHttp = java.util.Map.of("pageio.exec", "pageio:methods",
                "org.apache.felix.http.enable", "false");
        assertEquals("pageio: Web Console password for user admin created in " + file + " (this run serves no HTTP)",
                WebConsoleCredentials.announcement(execNoHttp::get, true, file));
        assertNull(WebConsoleCredentials.announcement(execNoHttp::get, false, file));
    }

    @Test
    void dataDirectoryIsAbsoluteAndCreated() {
        Path d = DataDirectory.of(dir.resolve("a/../b").toString());
        assertTrue(d.isAbsolute());
        assertTrue(Files.isDirectory(d));
        assertEquals(dir.resolve("b"), d);
    }
}
