package org.pageio.bufmgr.smgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.method.sync.SyncIoMethod;

/**
 * The data directory is private, as PostgreSQL's: what the storage manager creates is rwx------,
 * and a data directory group or others can write is refused in one line naming it and the fix;
 * one they can only read (0750, 0755) is served. On real directories.
 */
class DataDirectoryPermissionsTest {

    @TempDir
    Path tmp;

    private static String mode(Path p) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }

    @Test
    void theTestsOwnTemporaryDirectoryIsPrivate() throws Exception {
        // the tests that give the storage manager a @TempDir (or a directory it creates inside one) pass the check
        assertEquals("rwx------", mode(tmp));
    }

    @Test
    void theDataDirectoryBaseAndTablespacesAreCreatedPrivate() throws Exception {
        Path data = tmp.resolve("data");
        try (StorageManager smgr = new StorageManager(data, 16, false)) {
            smgr.createTablespace("fast", null, 8, 8);
        }
        assertEquals("rwx------", mode(data));
        assertEquals("rwx------", mode(data.resolve("base")));
        assertEquals("rwx------", mode(data.resolve("pg_tblspc")));
        assertEquals("rwx------", mode(data.resolve("pg_tblspc").resolve("fast")));
    }

    /** As initdb: the last level only; a missing parent is refused in one line and nothing is created. */
    @Test
    void aDataDirectoryWhoseParentIsMissingIsRefusedAndNothingIsCreated() throws Exception {
        Path data = tmp.resolve("missing").resolve("deep").resolve("data");
        java.io.UncheckedIOException e = assertThrows(java.io.UncheckedIOException.class,
                () -> new StorageManager(data, 16, false).close());
        assertEquals("cannot create the data directory " + data + ": its parent " + data.getParent()
                + " does not exist; create it first or point pageio.data (./pageio --data DIR) at another directory",
                e.getMessage());
        assertFalse(Files.exists(tmp.resolve("missing")), "no tree grown from the first missing level");
    }

    @Test
    void aDataDirectoryGroupOrOthersCanWriteIsRefusedNamingItAndTheFix() throws Exception {
        for (String perms : new String[] {"rwxrwxrwx", "rwxrwx---", "rwx---rwx", "rwx-w----"}) {
            Path data = Files.createDirectory(tmp.resolve("data-" + perms));
            Files.setPosixFilePermissions(data, PosixFilePermissions.fromString(perms));
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> new StorageManager(data, 16, false));
            assertEquals("data directory \"" + data + "\" has invalid permissions (" + perms + "): group or others can write"
                    + " it, and so replace its files; it should be rwx------ (0700) or rwxr-x--- (0750): run chmod 700 " + data,
                    e.getMessage());
            assertFalse(Files.exists(data.resolve("base")), "nothing created in a refused directory");
        }
        // through the composition root the component uses: the same line
        Path open = Files.createDirectory(tmp.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> BufferManagerCore.open(open,
                new BufMgrSettings.Builder().sharedBuffers(64).maxSessions(4).build(), new SyncIoMethod()));
        assertEquals(1, e.getMessage().lines().count(), e.getMessage());
        // the fix the message names works
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwx------"));
        new StorageManager(open, 16, false).close();
    }

    @Test
    void aDataDirectoryGroupOrOthersCanOnlyReadIsServed() throws Exception {
        for (String perms : new String[] {"rwxr-x---", "rwxr-xr-x"}) {
            Path data = Files.createDirectory(tmp.resolve("data-" + perms));
            Files.setPosixFilePermissions(data, PosixFilePermissions.fromString(perms));
            new StorageManager(data, 16, false).close();
            assertEquals("rwx------", mode(data.resolve("base")));
            assertEquals(perms, mode(data), "an existing directory's mode is left as it is");
        }
    }
}
