package org.pageio.settings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The data directory is created as initdb creates one: its last level only, private. */
class DataDirectoryTest {

    @TempDir
    Path dir;

    @Test
    void aNewDirectoryInAnExistingOneIsCreatedPrivate() throws Exception {
        Path data = DataDirectory.of(dir.resolve("data").toString());
        assertEquals(dir.resolve("data"), data);
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(data)));
        assertEquals(data, DataDirectory.of(data.toString()), "an existing one is taken as it is");
    }

    @Test
    void aMissingParentIsNamedAndNothingIsCreated() {
        Path deep = dir.resolve("nonexistent/dir/deep");
        UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> DataDirectory.of(deep.toString()));
        assertEquals("cannot create the data directory " + deep + ": its parent " + deep.getParent()
                + " does not exist; create it first or name another directory", e.getMessage());
        assertFalse(Files.exists(dir.resolve("nonexistent")), "no tree grown");
    }

    @Test
    void aFileIsNotADataDirectory() throws Exception {
        Path file = Files.writeString(dir.resolve("passwd"), "root:x:0:0\n");
        UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> DataDirectory.of(file.toString()));
        assertEquals("the data directory " + file + " is not a directory; name a directory (an existing one,"
                + " or a new one in an existing directory)", e.getMessage());
        e = assertThrows(UncheckedIOException.class, () -> DataDirectory.of(file.resolve("data").toString()));
        assertTrue(e.getMessage().endsWith(": its parent " + file + " is not a directory; create it first or name another directory"),
                e.getMessage());
    }
}
