package org.pageio.posix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirectIoTest {

    @TempDir
    Path dir;

    @Test
    void openAddsODirect() throws Exception {
        Path p = Files.write(dir.resolve("f"), new byte[8192]);
        int fd = DirectIo.open(p, OpenFlags.O_RDONLY, 0);
        try {
            // /proc/self/fdinfo shows the open flags in octal
            String info = Files.readString(Path.of("/proc/self/fdinfo/" + fd));
            String flags = info.lines().filter(l -> l.startsWith("flags:")).findFirst().orElseThrow();
            long octal = Long.parseLong(flags.substring("flags:".length()).trim(), 8);
            assertTrue((octal & OpenFlags.O_DIRECT) != 0, info);
        } finally {
            Posix.close(fd, p);
        }
        assertEquals("ext4 (0xef53)", DirectIo.fileSystemType(p), "this machine kind's /tmp is ext4");
    }

    @Test
    void aFileSystemWithoutODirectGivesTheFileTheTypeAndTheWayOut() {
        // procfs has no direct I/O: open(O_DIRECT) answers EINVAL
        Path p = Path.of("/proc/self/stat");
        PosixException e = assertThrows(PosixException.class, () -> DirectIo.open(p, OpenFlags.O_RDONLY, 0));
        assertEquals(Errno.EINVAL, e.errno());
        String m = e.getMessage();
        assertTrue(m.startsWith("open(/proc/self/stat) failed: EINVAL"), m);
        assertTrue(m.contains("O_DIRECT refused on file system proc (0x9fa0)"), m);
        assertTrue(m.contains("use io_method=io_uring, worker or sync"), m);
        assertEquals(1, m.lines().count(), "one line");
    }

    @Test
    void otherErrorsStayAsTheyAre() {
        Path p = dir.resolve("missing");
        PosixException e = assertThrows(PosixException.class, () -> DirectIo.open(p, OpenFlags.O_RDONLY, 0));
        assertEquals(Errno.ENOENT, e.errno());
        assertEquals(null, e.context());
    }

    @Test
    void typesByName() {
        assertEquals("ext4 (0xef53)", DirectIo.fileSystemTypeName(0xEF53));
        assertEquals("tmpfs (0x1021994)", DirectIo.fileSystemTypeName(0x01021994));
        assertEquals("type (0x1234)", DirectIo.fileSystemTypeName(0x1234));
        assertEquals("proc (0x9fa0)", DirectIo.fileSystemType(Path.of("/proc/self/stat")));
        // a file not created yet: the file system it would be created on
        assertEquals(DirectIo.fileSystemType(dir), DirectIo.fileSystemType(dir.resolve("not/yet")));
    }
}
